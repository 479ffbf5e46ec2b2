import type { Verbs } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  // rxe has exactly one port, numbered 1. Port numbers start at 1, not 0.
  const port = await ctx.queryPort(2);
  await verbs.log("active_mtu", port.active_mtu);
}
