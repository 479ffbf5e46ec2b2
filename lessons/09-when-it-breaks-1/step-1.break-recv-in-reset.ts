import type { Verbs } from "verbslab";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_QPS_ERR,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPT_RC,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_STATE,
  IBV_SEND_SIGNALED,
  IBV_WR_SEND,
} from "verbslab";

export default async function main(verbs: Verbs) {
  // Two RC QPs on rxe0 connected to each other (lesson 5 walks through connect()).
  const ctx = await verbs.openDevice("rxe0");
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(32);
  const cap = { max_send_wr: 16, max_recv_wr: 16, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const mr = await pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
  // The mistake: the receive is posted while a is still in RESET.
  await a.postRecv({ wr_id: 7, sg_list: [mr.sge(32, 32)] });
  // a only reaches INIT: not connected, not ready to send.
  await a.modify(
    { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: 0 },
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
  );
  try {
    await a.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 8)] });
  } catch (err) {
    await verbs.log("post_send_in_init", (err as { code?: string }).code);
  }

  await a.modify({ qp_state: IBV_QPS_ERR }, IBV_QP_STATE);
  const wcs = await cq.pollWait(1, 100);
  for (const wc of wcs) await verbs.log("wc", wc);
  await verbs.log("b_is_untouched", (await b.query()).attr.qp_state === IBV_QPS_RESET);
}
