import type { Verbs } from "verbslab";
import { IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_WRITE } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd();

  const local = await pd.regMr(4096, IBV_ACCESS_LOCAL_WRITE);
  // The mistake: the "shared" MR gets local access only.
  const shared = await pd.regMr(4096, IBV_ACCESS_LOCAL_WRITE);
  await verbs.log("local.lkey", local.lkey);
  await verbs.log("local.rkey", local.rkey);
  await verbs.log("shared.lkey", shared.lkey);
  await verbs.log("shared.rkey", shared.rkey);
  // The low byte of a key is random; the upper bits are the MR's index in the device's pool.
  await verbs.log("shared_index", shared.lkey >>> 8);
  await verbs.log("rkey_is_lkey", shared.rkey === shared.lkey);
}
