/**
 * The RC pair that scripts/bench-rxe.ts and native/tools/lat-probe.ts measure, and the RC
 * bring-up the native tests use: one QP per device with its own send and receive CQ and one
 * MR, connected over link-local GIDs the way perftest connects (INIT → RTR → RTS with the
 * peer's QPN and GID, PSN 0).
 */
import type { Context, Cq, Mr, Pd, Qp, VerbsBackend } from "../../verbs/backend.js";
import * as v from "../../verbs/constants.js";
import type { GidEntry } from "../../verbs/types.js";

export const ACCESS = v.IBV_ACCESS_LOCAL_WRITE | v.IBV_ACCESS_REMOTE_WRITE | v.IBV_ACCESS_REMOTE_READ;
/** Work requests each queue holds (perftest's default tx depth); each CQ holds twice that. */
export const TX_DEPTH = 128;

export interface Side {
  ctx: Context;
  pd: Pd;
  scq: Cq;
  rcq: Cq;
  qp: Qp;
  mr: Mr;
  gid: GidEntry;
}

export function openSide(backend: VerbsBackend, dev: string, mrSize: number, maxInline: number): Side {
  const ctx = backend.openDevice(dev);
  const pd = ctx.allocPd();
  const scq = ctx.createCq(TX_DEPTH * 2);
  const rcq = ctx.createCq(TX_DEPTH * 2);
  const qp = pd.createQp({
    send_cq: scq,
    recv_cq: rcq,
    qp_type: v.IBV_QPT_RC,
    sq_sig_all: 0,
    cap: { max_send_wr: TX_DEPTH, max_recv_wr: TX_DEPTH, max_send_sge: 1, max_recv_sge: 1, max_inline_data: maxInline },
  });
  const mr = pd.regMr(mrSize, ACCESS);
  const gid = ctx.queryGidTable().find((g) => g.gid.startsWith("fe80"));
  if (!gid) throw new Error(`${dev} has no link-local GID`);
  return { ctx, pd, scq, rcq, qp, mr, gid };
}

/**
 * RESET → INIT → RTR → RTS against the peer's QP number and GID (rc_pingpong's and perftest's
 * values: MTU 1024, PSN 0, retries 7 unless `retry` says otherwise), one transition per call.
 * Any QP with the contract's `modify` will do (the raw addon's too).
 */
export function connectRc(
  qp: Pick<Qp, "modify">,
  peerQpn: number,
  gid: Pick<GidEntry, "gid_index">,
  dgid: string,
  opts: { access: number; timeout: number; retry?: number },
): void {
  const retry = opts.retry ?? 7;
  qp.modify(
    { qp_state: v.IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: opts.access },
    v.IBV_QP_STATE | v.IBV_QP_PKEY_INDEX | v.IBV_QP_PORT | v.IBV_QP_ACCESS_FLAGS,
  );
  qp.modify(
    {
      qp_state: v.IBV_QPS_RTR,
      path_mtu: v.IBV_MTU_1024,
      dest_qp_num: peerQpn,
      rq_psn: 0,
      max_dest_rd_atomic: 1,
      min_rnr_timer: 12,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid, sgid_index: gid.gid_index, hop_limit: 64 } },
    },
    v.IBV_QP_STATE |
      v.IBV_QP_AV |
      v.IBV_QP_PATH_MTU |
      v.IBV_QP_DEST_QPN |
      v.IBV_QP_RQ_PSN |
      v.IBV_QP_MAX_DEST_RD_ATOMIC |
      v.IBV_QP_MIN_RNR_TIMER,
  );
  qp.modify(
    { qp_state: v.IBV_QPS_RTS, sq_psn: 0, timeout: opts.timeout, retry_cnt: retry, rnr_retry: retry, max_rd_atomic: 1 },
    v.IBV_QP_STATE |
      v.IBV_QP_TIMEOUT |
      v.IBV_QP_RETRY_CNT |
      v.IBV_QP_RNR_RETRY |
      v.IBV_QP_SQ_PSN |
      v.IBV_QP_MAX_QP_RD_ATOMIC,
  );
}

/**
 * One side of the measured pair, as perftest exchanges QPN and GID. A 4 s local ACK timeout
 * (20): under emulation load rxe can otherwise give up on a long stream.
 */
export function connectOne(x: Side, peerQpn: number, peerGid: string): void {
  connectRc(x.qp, peerQpn, x.gid, peerGid, { access: ACCESS, timeout: 20 });
}

export function connect(a: Side, b: Side): void {
  connectOne(a, b.qp.qp_num, b.gid.gid);
  connectOne(b, a.qp.qp_num, a.gid.gid);
}
