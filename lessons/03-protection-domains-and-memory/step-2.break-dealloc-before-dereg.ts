import type { Verbs } from "verbslab";
import { IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd();

  try {
    await pd.regMr(4096, IBV_ACCESS_REMOTE_WRITE);
  } catch (err) {
    await verbs.log("remote_write_alone", (err as { code?: string }).code);
  }

  const mr = await pd.regMr(4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  try {
    await pd.dealloc();
  } catch (err) {
    await verbs.log("dealloc_with_mr", (err as { code?: string }).code);
  }
  // The mistake: the MR is never deregistered, so the PD is still in use.
  await pd.dealloc();
}
