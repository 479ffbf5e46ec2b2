import type { Verbs } from "verbslab";
import { IBV_ACCESS_REMOTE_WRITE } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd();
  // "Remote peers may write here" — but the adapter itself may not? The kernel refuses.
  const mr = await pd.regMr(4096, IBV_ACCESS_REMOTE_WRITE);
  await verbs.log("rkey", mr.rkey);
}
