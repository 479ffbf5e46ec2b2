/** Bring-up helpers for the simulator's own tests (one transition per call, ibv_rc_pingpong values). */
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_ATOMIC,
  IBV_ACCESS_REMOTE_READ,
  IBV_ACCESS_REMOTE_WRITE,
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
} from "../verbs/constants.js";
import type { Context, Cq, Mr, Pd, Qp } from "../verbs/backend.js";

export const ALL_ACCESS =
  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

export interface End {
  ctx: Context;
  pd: Pd;
  cq: Cq;
  qp: Qp;
  mr: Mr;
}

export function makeEnd(ctx: Context, qp_type: number = IBV_QPT_RC): End {
  const pd = ctx.allocPd();
  const cq = ctx.createCq(64);
  const qp = pd.createQp({
    send_cq: cq,
    recv_cq: cq,
    qp_type,
    cap: { max_send_wr: 16, max_recv_wr: 16, max_send_sge: 2, max_recv_sge: 2, max_inline_data: 64 },
  });
  const mr = pd.regMr(8192, ALL_ACCESS);
  return { ctx, pd, cq, qp, mr };
}

export interface RcOptions {
  timeout?: number;
  retry_cnt?: number;
  rnr_retry?: number;
  min_rnr_timer?: number;
  sgid_index?: number;
  /** IBV_MTU_* (default IBV_MTU_1024). */
  path_mtu?: number;
}

/** RESET→INIT→RTR→RTS for an RC QP towards `peer`. */
export function connectRc(x: End, peer: End, o: RcOptions = {}): void {
  const sgid = o.sgid_index ?? 1;
  x.qp.modify(
    { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: ALL_ACCESS & ~IBV_ACCESS_LOCAL_WRITE },
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
  );
  x.qp.modify(
    {
      qp_state: IBV_QPS_RTR,
      path_mtu: o.path_mtu ?? IBV_MTU_1024,
      dest_qp_num: peer.qp.qp_num,
      rq_psn: 0,
      max_dest_rd_atomic: 1,
      min_rnr_timer: o.min_rnr_timer ?? 12,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid: peer.ctx.queryGid(1, sgid), sgid_index: sgid, hop_limit: 1 } },
    },
    IBV_QP_STATE |
      IBV_QP_AV |
      IBV_QP_PATH_MTU |
      IBV_QP_DEST_QPN |
      IBV_QP_RQ_PSN |
      IBV_QP_MAX_DEST_RD_ATOMIC |
      IBV_QP_MIN_RNR_TIMER,
  );
  x.qp.modify(
    {
      qp_state: IBV_QPS_RTS,
      timeout: o.timeout ?? 14,
      retry_cnt: o.retry_cnt ?? 7,
      rnr_retry: o.rnr_retry ?? 7,
      sq_psn: 0,
      max_rd_atomic: 1,
    },
    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
  );
}
