import type { Verbs } from "verbslab";

export default async function main(verbs: Verbs) {
  // ibv_get_device_list: rxe devices appear as rxe0, rxe1, …
  const devices = await verbs.getDeviceList();
  await verbs.log("devices", devices.map((d) => d.name).join(","));
  const ctx = await verbs.openDevice("rxe0");

  const dev = await ctx.queryDevice();
  await verbs.log("max_qp_wr", dev.max_qp_wr);
  await verbs.log("max_sge", dev.max_sge);
  await verbs.log("max_mr_size", dev.max_mr_size);

  const port = await ctx.queryPort(1);
  // The mistake: logging the MTU in bytes instead of the ibv_mtu value.
  await verbs.log("active_mtu", 128 << port.active_mtu);
  await verbs.log("max_mtu", port.max_mtu);
  await verbs.log("link_layer", port.link_layer);
}
