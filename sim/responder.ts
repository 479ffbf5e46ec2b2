/**
 * The responder (rxe_resp.c): checks each request packet (PSN, opcode sequence, the QP's
 * access flags, a receive WQE, the rkey and range) and executes it: SEND data into the
 * receive WQE (UD: behind the 40-byte GRH), WRITE into the MR, READ replies, atomics. Errors
 * follow rxe's classes: RNR NAK; PSN NAK; class A/C: NAK, complete the WQE in error, QP to
 * ERR; UC/UD: silent drops.
 */
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_ATOMIC,
  IBV_ACCESS_REMOTE_READ,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_QPT_RC,
  IBV_QPT_UC,
  IBV_QPT_UD,
  IBV_WC_GRH,
  IBV_WC_LOC_QP_OP_ERR,
  IBV_WC_RECV,
  IBV_WC_RECV_RDMA_WITH_IMM,
  IBV_WC_REM_ACCESS_ERR,
  IBV_WC_REM_INV_REQ_ERR,
  IBV_WC_SUCCESS,
  IBV_WC_WITH_IMM,
  IBV_WC_WR_FLUSH_ERR,
} from "../verbs/constants.js";
import { CNT_DUP_REQ, CNT_OUT_OF_SEQ_REQ, CNT_RDMA_RECV, CNT_SENT_PKTS, CNT_SND_RNR } from "./counters.js";
import { readPayload, scatter } from "./dma.js";
import { buildGrh } from "./gid.js";
import { noteReason, qpAccessRefusal, qpRef, rkeyRefusal, sgeRefusal } from "./explain.js";
import { inRange, lookupMr } from "./mr.js";
import {
  AETH_ACK_UNLIMITED,
  AETH_NAK_INVALID_REQ,
  AETH_NAK_PSN_SEQ_ERROR,
  AETH_NAK_REM_ACC_ERR,
  AETH_NAK_REM_OP_ERR,
  AETH_RNR_NAK,
  M_ATOMIC,
  M_COMP,
  M_DETH,
  M_END,
  M_IMMDT,
  M_READ,
  M_RETH,
  M_RWR,
  M_SEND,
  M_START,
  M_WRITE,
  OPCODE_MASK,
  PSN_MASK,
  RC_ACKNOWLEDGE,
  RC_ATOMIC_ACKNOWLEDGE,
  RC_COMPARE_SWAP,
  RC_READ_RESPONSE_FIRST,
  RC_READ_RESPONSE_LAST,
  RC_READ_RESPONSE_MIDDLE,
  RC_READ_RESPONSE_ONLY,
  RC_SEND_FIRST,
  RC_SEND_MIDDLE,
  RC_WRITE_FIRST,
  RC_WRITE_MIDDLE,
  SRC_BYTES,
  SRC_NONE,
  UC_SEND_FIRST,
  UC_SEND_MIDDLE,
  UC_WRITE_FIRST,
  UC_WRITE_MIDDLE,
  psnCompare,
  type Packet,
} from "./packets.js";
import { QS_ERROR, makeWc, type RespRes, type SimQp } from "./qp.js";
import type { Dma } from "./wqe.js";
import type { WcReason } from "../verbs/wc-reason.js";

const CHK_PSN = 1;
const CHK_OP_SEQ = 2;
const CHK_OP_VALID = 3;
const CHK_RESOURCE = 4;
const CHK_RKEY = 5;
const EXECUTE = 6;
const READ_REPLY = 7;
const COMPLETE = 8;
const ACKNOWLEDGE = 9;
const CLEANUP = 10;
const DUPLICATE = 11;
const ERR_MALFORMED_WQE = 12;
const ERR_CLASS_C_INV = 13; // unsupported opcode, misaligned atomic, missing opcode, too many RDMA/atomic
const ERR_PSN_OUT_OF_SEQ = 14;
const ERR_MISSING_OPCODE_LAST_D1E = 15;
const ERR_RNR = 16;
const ERR_RKEY_VIOLATION = 17;
const ERR_CQ_OVERFLOW = 18;
const DONE = 19;
const ERROR = 20;

/** Handles one request packet addressed to `qp` (the delivery checks have passed). */
export function responder(qp: SimQp, pkt: Packet): void {
  qp.respSyndrome = AETH_ACK_UNLIMITED;
  qp.respReason = undefined;
  let state = CHK_PSN;
  for (;;) {
    switch (state) {
      case CHK_PSN:
        state = checkPsn(qp, pkt);
        break;
      case CHK_OP_SEQ:
        state = checkOpSeq(qp, pkt);
        break;
      case CHK_OP_VALID:
        state = checkOpValid(qp, pkt);
        break;
      case CHK_RESOURCE:
        state = checkResource(qp, pkt);
        break;
      case CHK_RKEY:
        state = checkRkey(qp, pkt);
        break;
      case EXECUTE:
        state = execute(qp, pkt);
        break;
      case READ_REPLY:
        state = readReply(qp, pkt);
        break;
      case COMPLETE:
        state = doComplete(qp, pkt);
        break;
      case ACKNOWLEDGE:
        state = acknowledge(qp, pkt);
        break;
      case CLEANUP:
        qp.respMr = null;
        state = DONE;
        break;
      case DUPLICATE:
        state = duplicate(qp, pkt);
        break;
      case ERR_PSN_OUT_OF_SEQ:
        sendAck(qp, pkt, RC_ACKNOWLEDGE, AETH_NAK_PSN_SEQ_ERROR, qp.respPsn, 0n, {
          kind: "psn-ahead",
          qp: qpRef(qp),
          expected: qp.respPsn,
          got: pkt.psn,
        });
        state = CLEANUP;
        break;
      case ERR_CLASS_C_INV:
        classAC(
          qp,
          AETH_NAK_INVALID_REQ,
          IBV_WC_REM_INV_REQ_ERR,
          qp.respReason ?? { kind: "refused", at: qpRef(qp), what: "invalid-request" },
        );
        state = COMPLETE;
        break;
      case ERR_MISSING_OPCODE_LAST_D1E:
        // UC class D1: the previous message is abandoned and its receive WQE rewound.
        if (qp.respWqe) {
          qp.respWqe.dma.reset();
          qp.respOpcode = -1;
        }
        qp.respMr = null;
        state = CLEANUP;
        break;
      case ERR_RNR:
        if (qp.qp_type === IBV_QPT_RC) {
          qp.device.counters[CNT_SND_RNR]++;
          // The NAK carries the RESPONDER's min_rnr_timer.
          sendAck(qp, pkt, RC_ACKNOWLEDGE, AETH_RNR_NAK | (qp.attr.min_rnr_timer & 0x1f), pkt.psn, 0n, {
            kind: "rnr",
            qp: qpRef(qp),
          });
        } else qp.dropMsg = true;
        state = CLEANUP;
        break;
      case ERR_RKEY_VIOLATION:
        if (qp.qp_type === IBV_QPT_RC) {
          classAC(
            qp,
            AETH_NAK_REM_ACC_ERR,
            IBV_WC_REM_ACCESS_ERR,
            qp.respReason ?? { kind: "refused", at: qpRef(qp), what: "access" },
          );
          state = COMPLETE;
        } else {
          qp.dropMsg = true;
          state = CLEANUP;
        }
        break;
      case ERR_MALFORMED_WQE:
        classAC(
          qp,
          AETH_NAK_REM_OP_ERR,
          IBV_WC_LOC_QP_OP_ERR,
          qp.respReason ?? { kind: "refused", at: qpRef(qp), what: "recv-wqe" },
        );
        state = COMPLETE;
        break;
      case ERR_CQ_OVERFLOW:
        state = ERROR;
        break;
      case DONE:
        if (qp.gotoError) {
          state = ERROR;
          break;
        }
        return;
      case ERROR:
        qp.gotoError = false;
        qp.toErrorAfterNak();
        return;
      default:
        return;
    }
  }
}

function classAC(qp: SimQp, syndrome: number, status: number, reason: WcReason): void {
  qp.respSyndrome = syndrome;
  qp.respStatus = status;
  qp.respReason = reason;
  qp.gotoError = true;
}

/** copy_data refused the receive WQE: too short for the message, or an SGE it cannot write. */
function malformed(qp: SimQp, dma: Dma, len: number): number {
  qp.respReason =
    len > dma.resid
      ? { kind: "recv-short", at: qpRef(qp), recvBytes: dma.length }
      : sgeRefusal(qp.device, qp.pd, dma, IBV_ACCESS_LOCAL_WRITE, "recv", qpRef(qp));
  return ERR_MALFORMED_WQE;
}

function checkPsn(qp: SimQp, pkt: Packet): number {
  const diff = psnCompare(pkt.psn, qp.respPsn);
  if (qp.qp_type === IBV_QPT_RC) {
    if (diff > 0) {
      if (qp.sentPsnNak) return CLEANUP;
      qp.sentPsnNak = true;
      qp.device.counters[CNT_OUT_OF_SEQ_REQ]++;
      return ERR_PSN_OUT_OF_SEQ;
    }
    if (diff < 0) {
      qp.device.counters[CNT_DUP_REQ]++;
      return DUPLICATE;
    }
    qp.sentPsnNak = false;
  } else if (qp.qp_type === IBV_QPT_UC) {
    if (qp.dropMsg || diff !== 0) {
      if (pkt.mask & M_START) {
        qp.dropMsg = false;
        return CHK_OP_SEQ;
      }
      qp.dropMsg = true;
      return CLEANUP;
    }
  }
  return CHK_OP_SEQ;
}

function checkOpSeq(qp: SimQp, pkt: Packet): number {
  const prev = qp.respOpcode;
  const m = pkt.mask;
  const cont = (m & (M_SEND | M_WRITE)) !== 0 && !(m & M_START);
  if (qp.qp_type === IBV_QPT_RC) {
    const ok =
      prev === RC_SEND_FIRST || prev === RC_SEND_MIDDLE
        ? m & M_SEND && cont
        : prev === RC_WRITE_FIRST || prev === RC_WRITE_MIDDLE
          ? m & M_WRITE && cont
          : !cont;
    if (ok) return CHK_OP_VALID;
    qp.respReason = { kind: "op-sequence", at: qpRef(qp) };
    return ERR_CLASS_C_INV;
  }
  if (qp.qp_type === IBV_QPT_UC) {
    if (prev === UC_SEND_FIRST || prev === UC_SEND_MIDDLE)
      return m & M_SEND && cont ? CHK_OP_VALID : ERR_MISSING_OPCODE_LAST_D1E;
    if (prev === UC_WRITE_FIRST || prev === UC_WRITE_MIDDLE)
      return m & M_WRITE && cont ? CHK_OP_VALID : ERR_MISSING_OPCODE_LAST_D1E;
    if (cont) {
      qp.dropMsg = true;
      return CLEANUP;
    }
  }
  return CHK_OP_VALID;
}

/** For fast-path.ts: check_op_seq lets this RC packet through (on RC it changes nothing). */
export function opcodeSequenceOk(qp: SimQp, pkt: Packet): boolean {
  return checkOpSeq(qp, pkt) === CHK_OP_VALID;
}

/** For fast-path.ts: check_op_valid lets this RC packet through (on RC it changes nothing). */
export function opcodeAllowed(qp: SimQp, pkt: Packet): boolean {
  return checkOpValid(qp, pkt) === CHK_RESOURCE;
}

function checkOpValid(qp: SimQp, pkt: Packet): number {
  const acc = qp.attr.qp_access_flags;
  const m = pkt.mask;
  if (qp.qp_type === IBV_QPT_RC) {
    const need =
      m & M_READ
        ? IBV_ACCESS_REMOTE_READ
        : m & M_WRITE
          ? IBV_ACCESS_REMOTE_WRITE
          : m & M_ATOMIC
            ? IBV_ACCESS_REMOTE_ATOMIC
            : 0;
    if (need && !(acc & need)) {
      qp.respReason = qpAccessRefusal(qpRef(qp), need, acc);
      return ERR_CLASS_C_INV;
    }
  } else if (qp.qp_type === IBV_QPT_UC) {
    if (m & M_WRITE && !(acc & IBV_ACCESS_REMOTE_WRITE)) {
      qp.dropMsg = true;
      return CLEANUP;
    }
  }
  return CHK_RESOURCE;
}

function checkResource(qp: SimQp, pkt: Packet): number {
  if (pkt.mask & (M_READ | M_ATOMIC)) {
    if (qp.attr.max_dest_rd_atomic > 0) return CHK_RKEY;
    qp.respReason = { kind: "no-rd-atomic", qp: qpRef(qp) };
    return ERR_CLASS_C_INV;
  }
  if (pkt.mask & M_RWR) {
    qp.respWqe = qp.rq.head();
    return qp.respWqe ? CHK_RKEY : ERR_RNR;
  }
  return CHK_RKEY;
}

function checkRkey(qp: SimQp, pkt: Packet): number {
  const m = pkt.mask;
  let access: number;
  if (m & (M_READ | M_WRITE)) {
    if (m & M_RETH) {
      qp.respVa = pkt.va;
      qp.respRkey = pkt.rkey;
      qp.respResid = pkt.dmaLen;
      qp.respLength = pkt.dmaLen;
    }
    access = m & M_READ ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_WRITE;
  } else if (m & M_ATOMIC) {
    qp.respVa = pkt.va;
    qp.respRkey = pkt.rkey;
    qp.respResid = 8;
    access = IBV_ACCESS_REMOTE_ATOMIC;
  } else return EXECUTE;
  // A zero-byte READ/WRITE needs no address or rkey.
  if (m & M_RETH && pkt.dmaLen === 0) return EXECUTE;
  const mr = lookupMr(qp.device, qp.pd, qp.respRkey, access, true);
  if (!mr || !inRange(mr, qp.respVa, qp.respResid)) {
    const known = mr ?? qp.device.mrs.get(qp.respRkey >>> 8);
    qp.respReason = rkeyRefusal(qpRef(qp), qp.respRkey, known, known?.pd === qp.pd, access, qp.respVa, qp.respResid);
    return ERR_RKEY_VIOLATION;
  }
  qp.respMr = mr;
  return EXECUTE;
}

let grhId = 0;

function execute(qp: SimQp, pkt: Packet): number {
  const m = pkt.mask;
  if (m & M_SEND) {
    const dma = qp.respWqe!.dma;
    if (qp.qp_type === IBV_QPT_UD) {
      const roce = 12 + 8 + pkt.payloadLen + ((4 - (pkt.payloadLen & 3)) & 3) + 4;
      const grh = buildGrh(pkt.sgid, pkt.dgid, roce, grhId++ & 0xffff);
      if (scatter(qp.device, qp.pd, dma, 40, null, grh, 0) !== 0) return malformed(qp, dma, 40);
    }
    if (scatter(qp.device, qp.pd, dma, pkt.payloadLen, pkt, null, 0) !== 0) return malformed(qp, dma, pkt.payloadLen);
  } else if (m & M_WRITE) {
    const n = pkt.payloadLen;
    if (n > 0) {
      const mr = qp.respMr;
      if (!mr || !inRange(mr, qp.respVa, n)) {
        qp.respReason = rkeyRefusal(
          qpRef(qp),
          qp.respRkey,
          mr ?? undefined,
          true,
          IBV_ACCESS_REMOTE_WRITE,
          qp.respVa,
          n,
        );
        return ERR_RKEY_VIOLATION;
      }
      writePayload(qp, pkt, mr.bytes, qp.respVa - mr.addr, n);
    }
    qp.respVa += n;
    qp.respResid -= n;
  } else if (m & M_READ) {
    qp.respMsn++;
    return READ_REPLY;
  } else if (m & M_ATOMIC) {
    const mr = qp.respMr!;
    if (qp.respVa % 8 !== 0) {
      qp.respReason = { kind: "atomic-unaligned", at: qpRef(qp), va: qp.respVa };
      return ERR_CLASS_C_INV;
    }
    const view = new DataView(mr.bytes.buffer, mr.bytes.byteOffset, mr.bytes.byteLength);
    const off = qp.respVa - mr.addr;
    const orig = view.getBigUint64(off, true);
    qp.respAtomicOrig = orig;
    if (pkt.opcode === RC_COMPARE_SWAP) {
      if (orig === pkt.compare) view.setBigUint64(off, pkt.swapAdd, true);
    } else view.setBigUint64(off, BigInt.asUintN(64, orig + pkt.swapAdd), true);
  }
  qp.respPsn = (pkt.psn + 1) & PSN_MASK;
  qp.respAckPsn = qp.respPsn;
  qp.respOpcode = pkt.opcode;
  qp.respStatus = IBV_WC_SUCCESS;
  if (endsMessage(m)) qp.respMsn++;
  if (m & M_COMP) return COMPLETE;
  return qp.qp_type === IBV_QPT_RC ? ACKNOWLEDGE : CLEANUP;
}

/** An RDMA WRITE's payload into the target MR: contiguous sources go through the world's deferred block copy. */
export function writePayload(qp: SimQp, pkt: Packet, dst: Uint8Array, off: number, n: number): void {
  if (pkt.srcKind === SRC_BYTES) {
    qp.world.deferCopy(qp, dst, off, pkt.srcBytes, pkt.srcOff, n);
    return;
  }
  if (pkt.srcKind === SRC_NONE) return;
  const dma = pkt.srcWqe!.dma;
  const src = dma.numSge === 1 ? dma.mr[0] : null;
  if (src && !src.destroyed && src.lkey === dma.lkey[0]) {
    qp.world.deferCopy(qp, dst, off, src.bytes, dma.addr[0] - src.addr + pkt.srcOff, n);
    return;
  }
  qp.world.flushCopy();
  readPayload(pkt, 0, dst, off, n);
}

export function doComplete(qp: SimQp, pkt: Packet | null): number {
  const wqe = qp.respWqe;
  if (wqe) {
    const st = qp.respStatus;
    let wc;
    if (st === IBV_WC_SUCCESS && pkt) {
      qp.device.counters[CNT_RDMA_RECV]++;
      const m = pkt.mask;
      const writeImm = (m & M_IMMDT) !== 0 && (m & M_WRITE) !== 0;
      wc = makeWc(
        wqe.wr_id,
        st,
        writeImm ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV,
        writeImm ? qp.respLength : wqe.dma.length - wqe.dma.resid,
        m & M_IMMDT ? pkt.imm : 0,
        qp.qp_num,
        m & M_DETH ? pkt.srcQpn : 0,
        m & M_IMMDT ? IBV_WC_GRH | IBV_WC_WITH_IMM : IBV_WC_GRH,
      );
    } else {
      // Error CQEs are zeroed apart from wr_id, status and qp_num (RXE-FACTS.md §5.2).
      wc = makeWc(wqe.wr_id, st, 0, 0, 0, qp.qp_num, 0, 0);
      if (st !== IBV_WC_WR_FLUSH_ERR) noteReason(wc, qp.respReason);
    }
    qp.rq.pop();
    qp.respWqe = null;
    if (!qp.recv_cq.push(wc, pkt ? pkt.solicited : true)) return ERR_CQ_OVERFLOW;
  }
  if (!pkt) return DONE;
  return qp.qp_type === IBV_QPT_RC ? ACKNOWLEDGE : CLEANUP;
}

function acknowledge(qp: SimQp, pkt: Packet): number {
  if (qp.qp_type !== IBV_QPT_RC) return CLEANUP;
  if (qp.respSyndrome !== AETH_ACK_UNLIMITED)
    sendAck(qp, pkt, RC_ACKNOWLEDGE, qp.respSyndrome, pkt.psn, 0n, qp.respReason);
  else if (pkt.mask & M_ATOMIC) {
    saveResource(qp, {
      isRead: false,
      first_psn: pkt.psn,
      last_psn: pkt.psn,
      va_org: 0,
      length: 0,
      rkey: 0,
      mr: null,
      orig: qp.respAtomicOrig,
    });
    sendAck(qp, pkt, RC_ATOMIC_ACKNOWLEDGE, AETH_ACK_UNLIMITED, pkt.psn, qp.respAtomicOrig);
  } else if (pkt.ackReq) sendAck(qp, pkt, RC_ACKNOWLEDGE, AETH_ACK_UNLIMITED, pkt.psn);
  return CLEANUP;
}

function saveResource(qp: SimQp, res: RespRes): void {
  qp.respResources.push(res);
  while (qp.respResources.length > Math.max(1, qp.attr.max_dest_rd_atomic)) qp.respResources.shift();
}

/**
 * Sends an ACK/NAK (or an atomic ACK) back along the QP's own path. True when it was queued
 * (alone or joined to the ACK train queued last), which is then the FIFO's last record.
 */
export function sendAck(
  qp: SimQp,
  _req: Packet,
  opcode: number,
  syndrome: number,
  psn: number,
  orig = 0n,
  reason?: WcReason,
): boolean {
  const world = qp.world;
  const dest = qp.destDev;
  const tried = opcode === RC_ACKNOWLEDGE && reason === undefined && dest !== null;
  if (
    tried &&
    world.joinAck(
      qp,
      dest,
      qp.attr.dest_qp_num,
      syndrome,
      qp.sgidBytes,
      qp.dgidBytes,
      psn & PSN_MASK,
      qp.respMsn & 0xffffff,
    )
  ) {
    // transmit() of an ACK that joins the one queued last: counted, no packet built.
    qp.device.counters[CNT_SENT_PKTS]++;
    return true;
  }
  const a = world.newPacket();
  a.opcode = opcode;
  a.mask = OPCODE_MASK[opcode];
  a.psn = psn & PSN_MASK;
  a.srcQp = qp;
  a.destQpn = qp.attr.dest_qp_num;
  a.sgid = qp.sgidBytes;
  a.dgid = qp.dgidBytes;
  a.ackReq = false;
  a.solicited = false;
  a.payloadLen = 0;
  a.srcKind = SRC_NONE;
  a.syndrome = syndrome;
  a.msn = qp.respMsn & 0xffffff;
  a.orig = orig;
  a.reason = reason;
  // joinAck refused these very fields above (a refusal changes nothing): transmit need not ask again.
  return world.transmit(qp.device, a, qp.destDev, true, tried);
}

/** RDMA READ responses: one packet per path MTU, PSNs from the request's. */
function readReply(qp: SimQp, req: Packet): number {
  const mtu = qp.mtu;
  const mr = qp.respMr;
  const first = req.psn;
  let resid = qp.respResid;
  const length = resid;
  let va = qp.respVa;
  let psn = first;
  const nPkts = length === 0 ? 1 : Math.ceil(length / mtu);
  saveResource(qp, {
    isRead: true,
    first_psn: first,
    last_psn: (first + nPkts - 1) & PSN_MASK,
    va_org: va,
    length,
    rkey: qp.respRkey,
    mr,
    orig: 0n,
  });
  if (qp.respResid === 0 && !(req.mask & M_RETH && req.dmaLen > 0)) resid = 0;
  sendReadResponses(qp, mr, va, resid, psn, true);
  psn = (first + nPkts) & PSN_MASK;
  va += resid;
  qp.respOpcode = -1;
  if (psnCompare(psn, qp.respPsn) >= 0) qp.respPsn = psn;
  qp.respAckPsn = qp.respPsn;
  return CLEANUP;
}

function sendReadResponses(
  qp: SimQp,
  mr: import("./mr.js").SimMr | null,
  va: number,
  resid: number,
  psn: number,
  fromStart: boolean,
): void {
  const mtu = qp.mtu;
  let first = fromStart;
  const world = qp.world;
  do {
    const payload = resid < mtu ? resid : mtu;
    const last = resid <= mtu;
    const opcode = first
      ? last
        ? RC_READ_RESPONSE_ONLY
        : RC_READ_RESPONSE_FIRST
      : last
        ? RC_READ_RESPONSE_LAST
        : RC_READ_RESPONSE_MIDDLE;
    const p = world.newPacket();
    p.opcode = opcode;
    p.mask = OPCODE_MASK[opcode];
    p.psn = psn;
    p.srcQp = qp;
    p.destQpn = qp.attr.dest_qp_num;
    p.sgid = qp.sgidBytes;
    p.dgid = qp.dgidBytes;
    p.ackReq = false;
    p.solicited = false;
    p.payloadLen = payload;
    p.syndrome = AETH_ACK_UNLIMITED;
    p.msn = qp.respMsn & 0xffffff;
    if (payload > 0 && mr) {
      p.srcKind = SRC_BYTES;
      p.srcBytes = mr.bytes;
      p.srcOff = va - mr.addr;
    } else p.srcKind = SRC_NONE;
    world.transmit(qp.device, p, qp.destDev);
    first = false;
    resid -= payload;
    va += payload;
    psn = (psn + 1) & PSN_MASK;
  } while (resid > 0);
}

/**
 * True for a SEND's or WRITE's last packet, which makes the responder count one more message
 * (MSN) whether or not it consumes a receive WQE: rxe tests RXE_END_MASK since 5.17 ("Check
 * the last packet by RXE_END_MASK"); measured, the ACK of a plain RDMA WRITE carries MSN 1.
 */
export function endsMessage(mask: number): boolean {
  return (mask & M_END) !== 0 && (mask & (M_SEND | M_WRITE)) !== 0;
}

/** A request the responder has already executed (the requester retried). */
function duplicate(qp: SimQp, pkt: Packet): number {
  const prevPsn = (qp.respAckPsn - 1) & PSN_MASK;
  const m = pkt.mask;
  if (m & (M_SEND | M_WRITE)) {
    // C9-105: ACK again (with the last ACKed PSN) and drop. Every duplicate packet, whether it
    // asks for an ACK or not: rxe dropped the bth_ack check in 5.13 ("Fix missing acks from
    // responder"); measured, a WRITE resent whole after its last packet was lost gets three ACKs
    // of the PSN before it, one per duplicate (sim/RXE-FACTS.md §11).
    sendAck(qp, pkt, RC_ACKNOWLEDGE, AETH_ACK_UNLIMITED, prevPsn, 0n, {
      kind: "psn-behind",
      qp: qpRef(qp),
      expected: qp.respPsn,
      got: pkt.psn,
    });
    return CLEANUP;
  }
  const res = qp.respResources.find(
    (r) => psnCompare(pkt.psn, r.first_psn) >= 0 && psnCompare(pkt.psn, r.last_psn) <= 0,
  );
  if (!res) return CLEANUP;
  if (m & M_READ) {
    if (!res.isRead) return CLEANUP;
    const iova = pkt.va;
    const resid = pkt.dmaLen;
    if (iova < res.va_org || resid > res.length || iova + resid > res.va_org + res.length || pkt.rkey !== res.rkey)
      return CLEANUP;
    sendReadResponses(qp, res.mr, iova, resid, pkt.psn, pkt.psn === res.first_psn);
    return CLEANUP;
  }
  if (m & M_ATOMIC && !res.isRead) sendAck(qp, pkt, RC_ATOMIC_ACKNOWLEDGE, AETH_ACK_UNLIMITED, pkt.psn, res.orig);
  return CLEANUP;
}

/** The responder in ERROR: every receive WQE completes with WR_FLUSH_ERR, in order. */
export function respFlush(qp: SimQp): void {
  if (qp.respState !== QS_ERROR) return;
  for (let w = qp.respWqe ?? qp.rq.head(); w; w = qp.rq.head()) {
    qp.respWqe = w;
    qp.respStatus = IBV_WC_WR_FLUSH_ERR;
    doComplete(qp, null);
  }
  qp.respWqe = null;
}
