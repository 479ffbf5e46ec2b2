/**
 * Why a work completion failed, from what the session knows of both sides' objects: the WR
 * as posted, the QP that completed it, every QP and MR in the session. The simulator knows
 * the exact reason (its responder refused the request, sim/explain.ts); the native backend
 * gives only the status, so this inference is what a learner gets there, labelled as
 * inferred, and on the simulator wherever it gives no reason. Browser-safe, pure.
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
  flagNames,
  ibv_access_flags,
  ibv_qp_state,
  ibv_wr_opcode,
  nameOf,
} from "../../verbs/constants.js";

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
  reason: string;
  source: "simulator" | "inferred";
  /** The opcode of the WR that failed ("IBV_WR_RDMA_WRITE"), when known: rxe reports opcode 0 on error completions. */
  posted?: string;
}

const hex = (n: number) => `0x${n.toString(16)}`;
const flags = (a: number) => flagNames(ibv_access_flags, a).join(" | ") || "none";
const stateName = (s: number) => nameOf(ibv_qp_state, s).replace("IBV_QPS_", "");
const isWrite = (op: number) => op === IBV_WR_RDMA_WRITE || op === IBV_WR_RDMA_WRITE_WITH_IMM;
const isAtomic = (op: number) => op === IBV_WR_ATOMIC_CMP_AND_SWP || op === IBV_WR_ATOMIC_FETCH_AND_ADD;

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
export function inferWcReason(f: WcFacts): string | undefined {
  const peer = f.qps.find((q) => q.qp_num === f.qp.dest_qp_num && q !== f.qp);
  const peerName = peer ? `QP ${peer.qp_num}${peer.device ? ` on ${peer.device}` : ""}` : undefined;
  switch (f.status) {
    case IBV_WC_REM_ACCESS_ERR:
      return f.wr && peer ? remoteAccess(f.wr, peer, peerName!, f.mrs) : undefined;
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_INV_RD_REQ_ERR: {
      if (!f.wr || !peer) return undefined;
      const need = accessFor(f.wr.opcode);
      if (need && !(peer.qp_access_flags & need))
        return `${peerName}'s qp_access_flags lack ${nameOf(ibv_access_flags, need)} (they are ${flags(peer.qp_access_flags)})`;
      if ((f.wr.opcode === IBV_WR_RDMA_READ || isAtomic(f.wr.opcode)) && peer.max_dest_rd_atomic === 0)
        return `${peerName} has max_dest_rd_atomic 0: it takes no RDMA READ or atomic`;
      if (isAtomic(f.wr.opcode) && f.wr.remote_addr !== undefined && f.wr.remote_addr % 8 !== 0)
        return `the atomic's remote address ${hex(f.wr.remote_addr)} is not 8-byte aligned`;
      return undefined;
    }
    case IBV_WC_RETRY_EXC_ERR: {
      const tries =
        f.qp.retry_cnt !== undefined ? `; after ${f.qp.retry_cnt + 1} tries (retry_cnt ${f.qp.retry_cnt})` : "";
      if (!peer) {
        const known = f.qps.filter((q) => q !== f.qp).map((q) => q.qp_num);
        return (
          `dest_qp_num is ${f.qp.dest_qp_num}, and no QP in this session has that number` +
          (known.length ? ` (the others are ${known.join(", ")})` : "") +
          `: the peer device drops every packet${tries}`
        );
      }
      if (peer.state !== IBV_QPS_RTR && peer.state !== IBV_QPS_RTS && peer.state !== IBV_QPS_SQD)
        return `${peerName} is in ${stateName(peer.state)}: a QP takes requests only from RTR on${tries}`;
      if (peer.dest_qp_num !== f.qp.qp_num)
        return `${peerName} answers QP ${peer.dest_qp_num} (its dest_qp_num), not QP ${f.qp.qp_num}: no ACK comes back${tries}`;
      if (f.qp.sq_psn_set !== undefined && peer.rq_psn_set !== undefined && f.qp.sq_psn_set !== peer.rq_psn_set)
        return (
          `this QP's sq_psn was set to ${f.qp.sq_psn_set} and ${peerName}'s rq_psn to ${peer.rq_psn_set}: ` +
          `the responder ${f.qp.sq_psn_set > peer.rq_psn_set ? "NAKs the PSNs as out of sequence" : "takes the requests for duplicates"}${tries}`
        );
      return undefined;
    }
    case IBV_WC_REM_OP_ERR:
      if (!f.wr || !peer || (f.wr.opcode !== IBV_WR_SEND && f.wr.opcode !== IBV_WR_SEND_WITH_IMM)) return undefined;
      return peer.recv_bytes !== undefined && peer.recv_bytes < f.wr.length
        ? `the SEND carries ${f.wr.length} bytes, and ${peerName}'s receive WQE holds ${peer.recv_bytes}`
        : undefined;
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_QP_OP_ERR:
      return f.wr ? localSges(f.wr, f.qp, f.mrs) : undefined;
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return peer
        ? `${peerName} had no receive WQE posted when the SEND arrived (post_recv before the peer sends)` +
            (f.qp.rnr_retry !== undefined
              ? `; after ${f.qp.rnr_retry + 1} tries (rnr_retry ${f.qp.rnr_retry}) the requester gave up`
              : "")
        : undefined;
    default:
      return undefined;
  }
}

function localSges(wr: WrFact, qp: QpFact, mrs: MrFact[]): string | undefined {
  const mine = mrs.filter((m) => qp.device === undefined || m.device === undefined || m.device === qp.device);
  for (const [i, s] of (wr.sges ?? []).entries()) {
    const mr = mine.find((m) => m.lkey === s.lkey);
    if (!mr) return `the WR's sg_list[${i}].lkey ${hex(s.lkey)} is the lkey of no MR on this QP's device`;
    if (qp.pd !== undefined && mr.pd !== undefined && mr.pd !== qp.pd)
      return `the WR's sg_list[${i}] names ${mr.name}, of another PD than the QP's`;
    if (s.addr < mr.addr || s.addr + s.length > mr.addr + mr.length)
      return `the WR's sg_list[${i}] [${hex(s.addr)}, ${hex(s.addr + s.length)}) is outside ${mr.name} [${hex(mr.addr)}, ${hex(mr.addr + mr.length)})`;
  }
  return undefined;
}

function remoteAccess(wr: WrFact, peer: QpFact, peerName: string, mrs: MrFact[]): string | undefined {
  const rkey = wr.rkey;
  if (rkey === undefined) return undefined;
  if (rkey === 0) return "rkey 0 names no MR (an MR registered without a REMOTE_* access flag has rkey 0)";
  const onPeer = mrs.filter((m) => peer.device === undefined || m.device === undefined || m.device === peer.device);
  const mr = onPeer.find((m) => m.rkey === rkey);
  const byLkey = onPeer.find((m) => m.lkey === rkey);
  if (!mr && byLkey)
    return byLkey.rkey === 0
      ? `rkey ${hex(rkey)} is the lkey of ${byLkey.name}, registered without a REMOTE_* access flag: its rkey is 0`
      : `rkey ${hex(rkey)} is ${byLkey.name}'s lkey, not its rkey (${hex(byLkey.rkey)})`;
  if (!mr) return `rkey ${hex(rkey)} is not the rkey of any MR on ${peerName}'s device`;
  const need = accessFor(wr.opcode);
  if (need && !(mr.access & need))
    return `${mr.name} (rkey ${hex(rkey)}) lacks ${nameOf(ibv_access_flags, need)} (its access is ${flags(mr.access)})`;
  if (peer.pd !== undefined && mr.pd !== undefined && mr.pd !== peer.pd)
    return `${mr.name} (rkey ${hex(rkey)}) belongs to another PD than ${peerName}`;
  const va = wr.remote_addr ?? 0;
  const n = remoteLength(wr);
  if (va < mr.addr || va + n > mr.addr + mr.length)
    return (
      `[${hex(va)}, ${hex(va + n)}) (${n} bytes) is outside ${mr.name} [${hex(mr.addr)}, ${hex(mr.addr + mr.length)})` +
      (va + n > mr.addr + mr.length && va >= mr.addr ? `: ${va + n - (mr.addr + mr.length)} bytes past its end` : "")
    );
  return undefined;
}

/** The WR opcode's name for a learner ("IBV_WR_RDMA_WRITE"). */
export const wrOpcodeName = (op: number) => nameOf(ibv_wr_opcode, op);
