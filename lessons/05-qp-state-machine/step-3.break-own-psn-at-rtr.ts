import type { Verbs, VerbsQp } from "verbslab";
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
} from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(16);
  const cap = { max_send_wr: 8, max_recv_wr: 8, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  for (const qp of [a, b]) {
    await qp.modify(
      { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: 0 },
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
    );
  }
  // Each side picks its own starting PSN; the peer must expect exactly that value.
  const psnA = 0x123;
  const psnB = 0x456;
  // The mistake: each QP expects the PSN the other does not send.
  await toRtr(a, b.qp_num, gid, psnA);
  await toRtr(b, a.qp_num, gid, psnB);

  await toRts(a, psnA);
  await toRts(b, psnB);

  // Prove it works: one SEND from a to b.
  const mr = await pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
  await b.postRecv({ wr_id: 2, sg_list: [mr.sge(32, 32)] });
  await a.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 32)] });
  await cq.pollWait(2, 1000);
  const qa = await a.query();
  const qb = await b.query();
  await verbs.log("a.sq_psn", qa.attr.sq_psn);
  await verbs.log("b.rq_psn", qb.attr.rq_psn);
}

/** INIT → RTR: where to send (AV, dest QPN) and what to expect (rq_psn). */
async function toRtr(qp: VerbsQp, remoteQpn: number, gid: string, rq_psn: number) {
  await qp.modify(
    {
      qp_state: IBV_QPS_RTR,
      path_mtu: IBV_MTU_1024,
      dest_qp_num: remoteQpn,
      rq_psn,
      max_dest_rd_atomic: 3,
      min_rnr_timer: 12,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid: gid, sgid_index: 0, hop_limit: 1 } },
    },
    IBV_QP_STATE |
      IBV_QP_AV |
      IBV_QP_PATH_MTU |
      IBV_QP_DEST_QPN |
      IBV_QP_RQ_PSN |
      IBV_QP_MAX_DEST_RD_ATOMIC |
      IBV_QP_MIN_RNR_TIMER,
  );
}

/** RTR → RTS: how to send (timeouts and retries) and where to start counting (sq_psn). */
async function toRts(qp: VerbsQp, sq_psn: number) {
  await qp.modify(
    { qp_state: IBV_QPS_RTS, timeout: 14, retry_cnt: 7, rnr_retry: 7, sq_psn, max_rd_atomic: 1 },
    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
  );
}
