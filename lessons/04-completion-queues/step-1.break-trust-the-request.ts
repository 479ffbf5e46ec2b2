import type { Verbs } from "verbslab";
import { IBV_QPT_RC } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd();
  const cap = { max_send_wr: 10, max_recv_wr: 5, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };

  const wanted = cap.max_send_wr + cap.max_recv_wr;
  const cq = await ctx.createCq(wanted);
  await verbs.log("cqe_requested", wanted);
  await verbs.log("cq.cqe", cq.cqe);

  const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  // What ibv_create_qp wrote back, and what ibv_query_qp reports: not the same on rxe.
  await verbs.log("create.max_send_wr", qp.cap.max_send_wr);
  const q = await qp.query();
  // The mistake: assuming the device gives exactly what was asked for.
  await verbs.log("query.max_send_wr", cap.max_send_wr);
  await verbs.log("query.max_recv_wr", q.attr.cap.max_recv_wr);
}
