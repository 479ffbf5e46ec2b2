import type { Verbs } from "verbslab";
import { IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_WRITE } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd();

  // The mistake: REMOTE_READ "just in case".
  const local = await pd.regMr(4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
  const shared = await pd.regMr(4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  await verbs.log("local.lkey", local.lkey);
  await verbs.log("local.rkey", local.rkey);
  await verbs.log("shared.lkey", shared.lkey);
  await verbs.log("shared.rkey", shared.rkey);
  // The low byte of a key is random; the upper bits are the MR's index in the device's pool.
  await verbs.log("shared_index", shared.lkey >>> 8);
  await verbs.log("rkey_is_lkey", shared.rkey === shared.lkey);
}
