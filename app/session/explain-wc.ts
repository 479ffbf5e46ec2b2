/**
 * Why a work completion failed, from what the session knows of both sides' objects: the WR
 * as posted, the QP that completed it, every QP and MR in the session. The simulator knows
 * the exact reason (its responder refused the request, sim/explain.ts); the native backend
 * gives only the status, so this inference is what a learner gets there, labelled as
 * inferred, and on the simulator wherever it gives no reason. The reason is data
 * (verbs/wc-reason.ts), worded per language. Browser-safe, pure.
 */
import {
  IBV_ACCESS_REMOTE_ATOMIC,
  IBV_ACCESS_REMOTE_READ,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPS_SQD,
  IBV_WC_LOC_PROT_ERR,
  IBV_WC_LOC_QP_OP_ERR,
  IBV_WC_REM_ACCESS_ERR,
  IBV_WC_REM_OP_ERR,
  IBV_WC_REM_INV_RD_REQ_ERR,
  IBV_WC_REM_INV_REQ_ERR,
  IBV_WC_RETRY_EXC_ERR,
  IBV_WC_RNR_RETRY_EXC_ERR,
  IBV_WR_ATOMIC_CMP_AND_SWP,
  IBV_WR_ATOMIC_FETCH_AND_ADD,
  IBV_WR_RDMA_READ,
  IBV_WR_RDMA_WRITE,
  IBV_WR_RDMA_WRITE_WITH_IMM,
  IBV_WR_SEND,
  IBV_WR_SEND_WITH_IMM,
} from "../../verbs/constants.js";
import type { QpRef, WcReason } from "../../verbs/wc-reason.js";
import { pickPeer } from "./qp-index.js";

/** A send WR as the session saw it posted. */
export interface WrFact {
  wr_id: number;
  opcode: number;
  /** Bytes in its sg_list. */
  length: number;
  /** RDMA and atomic WRs: the remote address and rkey. */
  remote_addr?: number;
  rkey?: number;
  /** Its local SGEs. */
  sges?: { addr: number; length: number; lkey: number }[];
}

/** A QP as ibv_query_qp showed it, with the PSNs its program set. */
export interface QpFact {
  qp_num: number;
  /** The device it lives on ("rxe1"), if known. */
  device?: string;
  /** Its PD (a handle or any id the MRs share), if known. */
  pd?: number;
  state: number;
  dest_qp_num: number;
  qp_access_flags: number;
  max_dest_rd_atomic: number;
  /** The sq_psn / rq_psn its last modify set (the live values move with traffic). */
  sq_psn_set?: number;
  rq_psn_set?: number;
  retry_cnt?: number;
  rnr_retry?: number;
  /** The bytes of the receive WQE a SEND met: the one that failed, else the oldest still posted. */
  recv_bytes?: number;
}

export interface MrFact {
  /** "mr3": how the learner knows it. */
  name: string;
  device?: string;
  pd?: number;
  addr: number;
  length: number;
  rkey: number;
  lkey?: number;
  access: number;
}

export interface WcFacts {
  status: number;
  /** The QP that completed the WR. */
  qp: QpFact;
  /** The WR, when the session saw it posted (send-queue completions). */
  wr?: WrFact;
  /** Every QP and MR the session knows, on both sides. */
  qps: QpFact[];
  mrs: MrFact[];
}

/** Why a completion failed, and how the app knows: from the simulator's responder, or inferred here. */
export interface WcWhy {
  /** The reason as data; `wcReasonText` (verbs/wc-reason.ts) words it in English, i18n.ts in the UI's language. */
  reason: WcReason;
  source: "simulator" | "inferred";
  /** The opcode of the WR that failed ("IBV_WR_RDMA_WRITE"), when known: rxe reports opcode 0 on error completions. */
  posted?: string;
}

const isWrite = (op: number) => op === IBV_WR_RDMA_WRITE || op === IBV_WR_RDMA_WRITE_WITH_IMM;
const isAtomic = (op: number) => op === IBV_WR_ATOMIC_CMP_AND_SWP || op === IBV_WR_ATOMIC_FETCH_AND_ADD;
const ref = (q: QpFact): QpRef => (q.device ? { qpn: q.qp_num, device: q.device } : { qpn: q.qp_num });

/** The remote access an opcode needs, or 0 (a SEND needs none). */
function accessFor(op: number): number {
  if (isWrite(op)) return IBV_ACCESS_REMOTE_WRITE;
  if (op === IBV_WR_RDMA_READ) return IBV_ACCESS_REMOTE_READ;
  if (isAtomic(op)) return IBV_ACCESS_REMOTE_ATOMIC;
  return 0;
}

/** The remote bytes an RDMA or atomic WR touches. */
const remoteLength = (wr: WrFact) => (isAtomic(wr.opcode) ? 8 : wr.length);

/**
 * The most specific reason the session's objects give for a failed completion, or undefined
 * when they explain nothing (the status's general meaning then stands alone).
 */
export function inferWcReason(f: WcFacts): WcReason | undefined {
  const peerQp = pickPeer(f.qp, f.qps);
  const peer = peerQp && ref(peerQp);
  switch (f.status) {
    case IBV_WC_REM_ACCESS_ERR:
      return f.wr && peerQp ? remoteAccess(f.wr, peerQp, f.mrs) : undefined;
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_INV_RD_REQ_ERR: {
      if (!f.wr || !peerQp) return undefined;
      const need = accessFor(f.wr.opcode);
      if (need && !(peerQp.qp_access_flags & need))
        return { kind: "qp-access", peer, need, have: peerQp.qp_access_flags };
      if ((f.wr.opcode === IBV_WR_RDMA_READ || isAtomic(f.wr.opcode)) && peerQp.max_dest_rd_atomic === 0)
        return { kind: "no-rd-atomic", qp: peer! };
      if (isAtomic(f.wr.opcode) && f.wr.remote_addr !== undefined && f.wr.remote_addr % 8 !== 0)
        return { kind: "atomic-unaligned", va: f.wr.remote_addr };
      return undefined;
    }
    case IBV_WC_RETRY_EXC_ERR: {
      const cause = retryCause(f, peerQp);
      if (!cause) return undefined;
      return f.qp.retry_cnt !== undefined
        ? { kind: "retries", cause, counter: "retry_cnt", value: f.qp.retry_cnt }
        : cause;
    }
    case IBV_WC_REM_OP_ERR:
      if (!f.wr || !peerQp || (f.wr.opcode !== IBV_WR_SEND && f.wr.opcode !== IBV_WR_SEND_WITH_IMM)) return undefined;
      return peerQp.recv_bytes !== undefined && peerQp.recv_bytes < f.wr.length
        ? { kind: "send-longer", peer: peer!, sendBytes: f.wr.length, recvBytes: peerQp.recv_bytes }
        : undefined;
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_QP_OP_ERR:
      return f.wr ? localSges(f.wr, f.qp, f.mrs) : undefined;
    case IBV_WC_RNR_RETRY_EXC_ERR: {
      if (!peer) return undefined;
      const cause: WcReason = { kind: "rnr", qp: peer };
      return f.qp.rnr_retry !== undefined
        ? { kind: "retries", cause, counter: "rnr_retry", value: f.qp.rnr_retry }
        : cause;
    }
    default:
      return undefined;
  }
}

/** Why the requester's retries got no ACK, from the two QPs' attributes. */
function retryCause(f: WcFacts, peerQp: QpFact | undefined): WcReason | undefined {
  if (!peerQp) {
    const others = f.qps.filter((q) => q !== f.qp).map((q) => q.qp_num);
    return { kind: "dest-qp-unknown", qpn: f.qp.dest_qp_num, others };
  }
  const peer = ref(peerQp);
  if (peerQp.state !== IBV_QPS_RTR && peerQp.state !== IBV_QPS_RTS && peerQp.state !== IBV_QPS_SQD)
    return { kind: "peer-not-ready", peer, state: peerQp.state };
  if (peerQp.dest_qp_num !== f.qp.qp_num)
    return { kind: "peer-answers-other", peer, answers: peerQp.dest_qp_num, me: f.qp.qp_num };
  if (f.qp.sq_psn_set !== undefined && peerQp.rq_psn_set !== undefined && f.qp.sq_psn_set !== peerQp.rq_psn_set)
    return { kind: "psn-set-apart", peer, sqPsn: f.qp.sq_psn_set, rqPsn: peerQp.rq_psn_set };
  return undefined;
}

function localSges(wr: WrFact, qp: QpFact, mrs: MrFact[]): WcReason | undefined {
  const mine = mrs.filter((m) => qp.device === undefined || m.device === undefined || m.device === qp.device);
  for (const [i, s] of (wr.sges ?? []).entries()) {
    const mr = mine.find((m) => m.lkey === s.lkey);
    if (!mr) return { kind: "sge-lkey-unknown", owner: "send", i, lkey: s.lkey };
    if (qp.pd !== undefined && mr.pd !== undefined && mr.pd !== qp.pd)
      return { kind: "sge-other-pd", owner: "send", i, lkey: s.lkey, mr: mr.name };
    if (s.addr < mr.addr || s.addr + s.length > mr.addr + mr.length)
      return {
        kind: "sge-outside",
        owner: "send",
        i,
        addr: s.addr,
        len: s.length,
        mr: mr.name,
        mrAddr: mr.addr,
        mrLen: mr.length,
      };
  }
  return undefined;
}

function remoteAccess(wr: WrFact, peerQp: QpFact, mrs: MrFact[]): WcReason | undefined {
  const rkey = wr.rkey;
  if (rkey === undefined) return undefined;
  if (rkey === 0) return { kind: "rkey-zero" };
  const peer = ref(peerQp);
  const onPeer = mrs.filter((m) => peerQp.device === undefined || m.device === undefined || m.device === peerQp.device);
  const mr = onPeer.find((m) => m.rkey === rkey);
  const byLkey = onPeer.find((m) => m.lkey === rkey);
  if (!mr && byLkey) return { kind: "rkey-is-lkey", rkey, mr: byLkey.name, mrRkey: byLkey.rkey };
  if (!mr) return { kind: "rkey-unknown", rkey, peer };
  const need = accessFor(wr.opcode);
  if (need && !(mr.access & need)) return { kind: "mr-access", rkey, mr: mr.name, need, have: mr.access };
  if (peerQp.pd !== undefined && mr.pd !== undefined && mr.pd !== peerQp.pd)
    return { kind: "mr-other-pd", rkey, mr: mr.name, peer };
  const va = wr.remote_addr ?? 0;
  const n = remoteLength(wr);
  if (va < mr.addr || va + n > mr.addr + mr.length)
    return { kind: "outside-mr", mr: mr.name, va, n, mrAddr: mr.addr, mrLen: mr.length };
  return undefined;
}
