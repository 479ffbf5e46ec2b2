import type { Verbs } from "verbslab";

export default async function main(verbs: Verbs) {
  // ibv_get_device_list: rxe devices appear as rxe0, rxe1, …
  const devices = await verbs.getDeviceList();
  await verbs.log("devices", devices.map((d) => d.name).join(","));
  const ctx = await verbs.openDevice("rxe0");

  // TODO: read the device attributes (ibv_query_device → ctx.queryDevice()) and log max_qp_wr, max_sge and max_mr_size.
  // Then read port 1 (ibv_query_port → ctx.queryPort(1)) and log active_mtu, max_mtu and link_layer.
}
