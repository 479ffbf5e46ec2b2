import type { Verbs } from "verbslab";
import { IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd();

  // TODO: try to register an MR with IBV_ACCESS_REMOTE_WRITE alone, catch the VerbsError and log its code.

  const mr = await pd.regMr(4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  // TODO: deallocate the PD while mr is still registered (ibv_dealloc_pd → pd.dealloc()), catch and log the code.
  // Then deregister the MR (ibv_dereg_mr → mr.dereg()) and deallocate the PD again.
}
