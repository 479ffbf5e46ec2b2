import type { Verbs, VerbsQp, QpAttr } from "verbslab";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_MTU_1024,
  IBV_QPS_INIT,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_RC,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_AV,
  IBV_QP_DEST_QPN,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_PATH_MTU,
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_RETRY_CNT,
  IBV_QP_RNR_RETRY,
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
  IBV_QP_TIMEOUT,
  IBV_SEND_SIGNALED,
  IBV_WR_SEND,
  IBV_WR_SEND_WITH_IMM,
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
  await connect(a, b.qp_num, gid, 0);
  await connect(b, a.qp_num, gid, 0);
  const mr = await pd.regMr(256, IBV_ACCESS_LOCAL_WRITE);
  await mr.write(0, "one two three");

  // Three receives, then three sends: completions come back in post order, matched by wr_id.
  for (const wr_id of [20, 21, 22]) await b.postRecv({ wr_id, sg_list: [mr.sge(128, 32)] });
  await a.postSend({ wr_id: 10, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 3)] });
  await a.postSend({ wr_id: 11, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(4, 3)] });
  await a.postSend({
    wr_id: 12,
    opcode: IBV_WR_SEND, // The mistake: imm_data is only sent WITH_IMM
    send_flags: IBV_SEND_SIGNALED,
    imm_data: 0x12345678,
    sg_list: [mr.sge(8, 5)],
  });
  const wcs = await cq.pollWait(6, 1000);
  await verbs.log(
    "send_order",
    wcs.filter((wc) => wc.qp_num === a.qp_num).map((wc) => wc.wr_id),
  );
  await verbs.log(
    "recv_order",
    wcs.filter((wc) => wc.qp_num === b.qp_num).map((wc) => wc.wr_id),
  );
  for (const wc of wcs) await verbs.log("wc", wc);
}

/** RESET → INIT → RTR → RTS, one transition at a time, with ibv_rc_pingpong's values unless `tune` says otherwise. */
async function connect(qp: VerbsQp, remoteQpn: number, gid: string, access: number, tune: Partial<QpAttr> = {}) {
  await qp.modify(
    { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: access },
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
  );
  await qp.modify(
    {
      path_mtu: IBV_MTU_1024,
      dest_qp_num: remoteQpn,
      rq_psn: 0,
      max_dest_rd_atomic: 1,
      min_rnr_timer: 12,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid: gid, sgid_index: 0, hop_limit: 1 } },
      ...tune,
      qp_state: IBV_QPS_RTR,
    },
    IBV_QP_STATE |
      IBV_QP_AV |
      IBV_QP_PATH_MTU |
      IBV_QP_DEST_QPN |
      IBV_QP_RQ_PSN |
      IBV_QP_MAX_DEST_RD_ATOMIC |
      IBV_QP_MIN_RNR_TIMER,
  );
  await qp.modify(
    { timeout: 14, retry_cnt: 7, rnr_retry: 7, sq_psn: 0, max_rd_atomic: 1, ...tune, qp_state: IBV_QPS_RTS },
    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
  );
}
