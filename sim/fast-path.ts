/**
 * Packet trains: the whole-message fast path for long RC SENDs and RDMA WRITEs while the
 * packet log is off.
 *
 * A train is one Packet record that stands for `count` consecutive request packets of one
 * message: "quiet" FIRST or MIDDLE packets of a full path MTU each, none asking for an ACK,
 * optionally followed by the packet that ends the message (a packet rxe marks ack_req after
 * 64 unacked ones ends a train, and travels alone). The requester emits a train exactly
 * where it would have emitted those packets back to back, so they sit together in the FIFO;
 * quiet packets make the responder send nothing and complete nothing, so handling them in
 * one step — one range check, one copy, PSN/counter arithmetic — leaves the same state as
 * handling them one by one; the last packet then goes through the ordinary responder. When
 * a train meets anything else (a PSN that is not the expected one, an opcode out of
 * sequence, missing access, no receive WQE, a bad rkey or range, a receive buffer too
 * small, overlapping source and destination memory, or the log turned on) it is split back
 * into its packets and each goes through the reference path (world.deliver).
 * sim/fast-path.test.ts runs the same workloads with the log on and off and compares
 * everything observable.
 */
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_QPT_RC,
  IBV_SEND_SOLICITED,
  IBV_WC_GRH,
  IBV_WC_RECV,
  IBV_WC_SUCCESS,
  IBV_WR_RDMA_WRITE_WITH_IMM,
  IBV_WR_SEND,
  IBV_WR_SEND_WITH_IMM,
} from "../verbs/constants.js";
import { CNT_RCVD_PKTS, CNT_RDMA_RECV, CNT_SENT_PKTS } from "./counters.js";
import { COPY_OK, copyMr, gatherCheck, scatter, scatterPacket, sgeMr } from "./dma.js";
import { inRange, lookupMr, type SimMr } from "./mr.js";
import {
  AETH_ACK,
  AETH_ACK_UNLIMITED,
  AETH_TYPE_MASK,
  M_COMP,
  M_RWR,
  RC_ACKNOWLEDGE,
  psnCompare,
  M_IMMDT,
  M_RETH,
  M_SEND,
  M_START,
  M_WRITE,
  OPCODE_MASK,
  PSN_MASK,
  RC_SEND_ONLY,
  SRC_BYTES,
  SRC_NONE,
  SRC_WQE,
  type Packet,
} from "./packets.js";
import { IN_FLIGHT_HIGH, QS_READY, makeWc, type SimQp } from "./qp.js";
import { toNs } from "./wire.js";
import { completer, completerAgain, oldestWaits, syncRetransTimer } from "./completer.js";
import {
  doComplete,
  endsMessage,
  opcodeAllowed,
  opcodeSequenceOk,
  responder,
  sendAck,
  writePayload,
} from "./responder.js";
import { WQE_PENDING, WQE_PROCESSING, WR_ATOMIC_OR_READ, WR_SEND, WR_WRITE, type Dma, type SendWqe } from "./wqe.js";
import type { SimWorld } from "./world.js";

/**
 * How often trains were sent, taken whole and split (for sim/fast-path.test.ts, which must
 * see the fast path used, not only its fallback; nothing reads these otherwise).
 */
export const trainStats = {
  sent: 0,
  whole: 0,
  split: 0,
  ackTrains: 0,
  sendRuns: 0,
  runsWhole: 0,
  runsSplit: 0,
  /** Packets respondSendRun's one-SGE loop handled. */
  runPackets: 0,
  /** Trains that joined the train before them on the link (world.ts joinTrain). */
  joined: 0,
};

/** rxe's RXE_MAX_PKT_PER_ACK (requester.ts): packet number 66 since the last ACK request asks for one. */
const MAX_PKT_PER_ACK = 64;
/** The BTH opcode of a MIDDLE packet, given the FIRST or MIDDLE opcode (RC: 0x00→0x01, 0x06→0x07). */
function middleOf(opcode: number): number {
  return opcode & 1 ? opcode : opcode + 1;
}

/** The LAST opcode of the message a FIRST/MIDDLE opcode belongs to (RC: 0x00/0x01→0x02, 0x06/0x07→0x08; +1 with immediate). */
function lastOf(opcode: number, imm: boolean): number {
  return (opcode & ~1) + 2 + (imm ? 1 : 0);
}

/**
 * The requester's side: called where rxe_requester would build the next packet of `wqe`
 * (RC, WRITE or SEND, more than one MTU left, window open, `opcode` from next_opcode).
 * Sends as one train the packets that would follow each other — the quiet ones, and the
 * message's last packet too when the window and the ACK pacing let it follow them — and
 * returns true, or returns false (nothing changed) when fewer than two would.
 */
export function sendTrain(qp: SimQp, wqe: SendWqe, opcode: number, windowEnd: number): boolean {
  // On one device each packet is received and answered as it is sent (world.transmit,
  // rxe_loopback), so a refusal stops the message where the packet-by-packet path stops it.
  if (qp.destDev === qp.device) return false;
  const mtu = qp.mtu;
  const dma = wqe.dma;
  const resid = dma.resid;
  const left = Math.ceil(resid / mtu);
  // What the window allows (the current PSN up to windowEnd inclusive), and how many more
  // packets go out before the one rxe marks ack_req (the 66th since the last).
  const room = ((windowEnd - qp.reqPsn) & PSN_MASK) + 1;
  const quiet = MAX_PKT_PER_ACK + 1 - qp.noackPkts;
  // The requester checks skb_out before each packet: at most 65 in flight (qp.ts inFlight).
  const sendable = Math.min(room, IN_FLIGHT_HIGH + 1 - qp.inFlight(toNs(qp.world.clock.now)));
  const withEnd = left <= sendable && left - 1 <= quiet;
  const n = withEnd ? left : Math.min(left - 1, sendable, quiet);
  if (n < 2) return false;
  const total = withEnd ? resid : n * mtu;
  const msgOff = dma.length - resid;
  // Checking the SGEs for n packets at once finds a fault exactly when one of the n checks would.
  if (!wqe.inline) {
    if (gatherCheck(qp.device, qp.pd, dma, total) !== COPY_OK) return false;
  } else dma.resid -= total;
  const world = qp.world;
  const mask = OPCODE_MASK[opcode];
  const pkt = world.newPacket();
  pkt.opcode = opcode;
  pkt.mask = mask;
  pkt.count = n;
  pkt.trainMtu = mtu;
  pkt.psn = qp.reqPsn;
  pkt.srcQp = qp;
  pkt.wrId = undefined;
  pkt.payloadLen = total;
  if (wqe.inline) {
    pkt.srcKind = SRC_BYTES;
    pkt.srcBytes = wqe.inline;
  } else {
    pkt.srcKind = SRC_WQE;
    pkt.srcWqe = wqe;
  }
  pkt.srcOff = msgOff;
  if (withEnd) {
    const imm = wqe.opcode === IBV_WR_SEND_WITH_IMM || wqe.opcode === IBV_WR_RDMA_WRITE_WITH_IMM;
    pkt.endOpcode = lastOf(opcode, imm);
    pkt.ackReq = true;
    pkt.solicited = (wqe.send_flags & IBV_SEND_SOLICITED) !== 0;
    if (imm) pkt.imm = wqe.imm_data;
  } else {
    pkt.endOpcode = -1;
    pkt.ackReq = false;
    pkt.solicited = false;
  }
  if (mask & M_RETH) {
    pkt.va = wqe.iova;
    pkt.rkey = wqe.rkey;
    pkt.dmaLen = dma.length - msgOff;
  }
  pkt.destQpn = qp.attr.dest_qp_num;
  pkt.sgid = qp.sgidBytes;
  pkt.dgid = qp.dgidBytes;
  // update_wqe_state / update_wqe_psn / update_state, n times over.
  if (mask & M_START) {
    wqe.first_psn = qp.reqPsn;
    wqe.last_psn = (qp.reqPsn + left - 1) & PSN_MASK;
  }
  qp.reqPsn = (qp.reqPsn + n) & PSN_MASK;
  if (wqe.wrMask & WR_WRITE) wqe.iova += total;
  if (withEnd) {
    wqe.state = WQE_PENDING;
    qp.noackPkts = 0;
    qp.reqOpcode = pkt.endOpcode;
    qp.reqWqeIndex++;
  } else {
    wqe.state = WQE_PROCESSING;
    qp.noackPkts += n;
    qp.reqOpcode = middleOf(opcode);
  }
  trainStats.sent++;
  world.transmit(qp.device, pkt, qp.destDev);
  qp.armRetransIfIdle();
  return true;
}

/**
 * The requester's side of a SEND run: called where rxe_requester would build an RC_SEND_ONLY
 * packet for `first` (log off, every check of its loop passed). The WQEs that follow it
 * and would also go out as plain one-packet SENDs right away (IBV_WR_SEND, at most one MTU,
 * window open, SGEs good) are sent with it as one record, with each WQE's bookkeeping done
 * as the requester does it. Returns false, having changed nothing, when the next WQE could
 * not join (the caller sends `first` alone).
 */
export function sendRun(qp: SimQp, first: SendWqe, windowEnd: number): boolean {
  const sq = qp.sq;
  const start = qp.reqWqeIndex;
  if (
    qp.destDev === qp.device || // one device's packets are received as each is sent (world.transmit)
    qp.reqState !== QS_READY ||
    !runnable(qp, first) ||
    start + 1 === sq.prod ||
    !runnable(qp, sq.at(start + 1)) ||
    psnCompare((qp.reqPsn + 1) & PSN_MASK, windowEnd) > 0
  )
    return false;
  const world = qp.world;
  // The requester checks skb_out before each packet: at most 65 in flight (qp.ts inFlight).
  const most = IN_FLIGHT_HIGH + 1 - qp.inFlight(toNs(world.clock.now));
  if (most < 2) return false;
  const t = world.newPacket();
  let n = 0;
  for (let idx = start; idx !== sq.prod; idx++) {
    const w = sq.at(idx);
    if (n > 0 && (n === most || !runnable(qp, w) || psnCompare(qp.reqPsn, windowEnd) > 0)) break;
    // finish_packet's gather check; a failing WQE ends the run (the requester then fails it).
    const dma = w.dma;
    const len = dma.length;
    if (len > 0) {
      if (w.inline) dma.resid -= len;
      else if (!gatherOne(qp, dma, len) && gatherCheck(qp.device, qp.pd, dma, len) !== COPY_OK) break;
    }
    if (n === 0) sendRunPacket(t, qp, w, qp.reqPsn);
    // update_wqe_state, update_wqe_psn, update_state for a SEND_ONLY (ack_req: noack 0).
    w.state = WQE_PENDING;
    w.first_psn = qp.reqPsn;
    w.last_psn = qp.reqPsn;
    qp.reqPsn = (qp.reqPsn + 1) & PSN_MASK;
    qp.reqOpcode = RC_SEND_ONLY;
    qp.reqWqeIndex++;
    qp.noackPkts = 0;
    n++;
  }
  if (n === 0) {
    world.recycle(t);
    return false;
  }
  // A run of one (the next WQE's SGEs failed) is an ordinary packet.
  t.count = n;
  t.sendRun = n > 1;
  t.runWqe = start;
  trainStats.sendRuns++;
  world.transmit(qp.device, t, qp.destDev);
  qp.armRetransIfIdle();
  return true;
}

/**
 * gatherCheck of a whole one-SGE message whose cursor is at its start, when it passes (the
 * cursor then at the end, as gatherCheck leaves it); false, having changed nothing, for
 * anything else (the caller runs gatherCheck, which finds the same answer the long way).
 */
function gatherOne(qp: SimQp, dma: Dma, len: number): boolean {
  if (dma.numSge !== 1 || dma.curSge !== 0 || dma.sgeOffset !== 0 || dma.resid !== len || dma.len[0] !== len)
    return false;
  const mr = sgeMr(qp.device, qp.pd, dma, 0, 0);
  if (mr === null || !inRange(mr, dma.addr[0], len)) return false;
  dma.sgeOffset = len;
  dma.resid = 0;
  return true;
}

/** Can WQE `w` go out as one plain RC_SEND_ONLY packet, following another one? */
function runnable(qp: SimQp, w: SendWqe): boolean {
  const dma = w.dma;
  return w.opcode === IBV_WR_SEND && dma.resid === dma.length && dma.length <= qp.mtu;
}

/** Fills `p` as the RC_SEND_ONLY packet the requester builds for WQE `w` of `qp` at `psn` (log off). */
export function sendRunPacket(p: Packet, qp: SimQp, w: SendWqe, psn: number): void {
  p.opcode = RC_SEND_ONLY;
  p.mask = OPCODE_MASK[RC_SEND_ONLY];
  p.psn = psn;
  p.srcQp = qp;
  p.wrId = undefined;
  const len = w.dma.length;
  p.payloadLen = len;
  p.srcWqe = null;
  if (len === 0) p.srcKind = SRC_NONE;
  else if (w.inline) {
    p.srcKind = SRC_BYTES;
    p.srcBytes = w.inline;
    p.srcOff = 0;
  } else {
    p.srcKind = SRC_WQE;
    p.srcWqe = w;
    p.srcOff = 0;
  }
  p.ackReq = true;
  p.solicited = (w.send_flags & IBV_SEND_SOLICITED) !== 0;
  p.destQpn = qp.attr.dest_qp_num;
  p.sgid = qp.sgidBytes;
  p.dgid = qp.dgidBytes;
}

/** How many packets of train `t` are quiet (all but a last packet that ends the message). */
function quietCount(t: Packet): number {
  return t.endOpcode >= 0 ? t.count - 1 : t.count;
}

/** Packet `i` of a train, as the requester would have built it alone (from the pool). */
export function trainPacket(world: SimWorld, t: Packet, i: number): Packet {
  const mtu = t.trainMtu;
  const p = world.newPacket();
  const last = i === quietCount(t);
  p.opcode = last ? t.endOpcode : i === 0 ? t.opcode : middleOf(t.opcode);
  p.mask = OPCODE_MASK[p.opcode];
  p.psn = (t.psn + i) & PSN_MASK;
  p.srcQp = t.srcQp;
  p.destQpn = t.destQpn;
  p.destDev = t.destDev;
  p.sgid = t.sgid;
  p.dgid = t.dgid;
  p.ackReq = last;
  p.solicited = last && t.solicited;
  p.payloadLen = last ? t.payloadLen - i * mtu : mtu;
  p.srcKind = t.srcKind;
  p.srcWqe = t.srcWqe;
  p.srcBytes = t.srcBytes;
  p.srcOff = t.srcOff + i * mtu;
  p.wrId = t.srcWqe && world.packetLog ? t.srcWqe.wr_id : undefined;
  if (p.mask & M_RETH) {
    p.va = t.va;
    p.rkey = t.rkey;
    p.dmaLen = t.dmaLen;
  }
  if (p.mask & M_IMMDT) p.imm = t.imm;
  return p;
}

/**
 * receiveTrain's checks for train `t` at `qp`, without their effects: true when it would be
 * taken whole (PSN and opcode sequence, and a receive WQE or an MR range that holds its
 * quiet packets). Then `qp` answers nothing before the train's last packet.
 */
export function trainFits(qp: SimQp, t: Packet): boolean {
  if (!trainInSequence(qp, t)) return false;
  const total = quietCount(t) * t.trainMtu;
  const m = t.mask;
  if (m & M_SEND) {
    const wqe = qp.rq.head();
    return wqe !== null && scatterFits(qp, wqe.dma, total, null);
  }
  return (m & M_WRITE) !== 0 && trainWriteMr(qp, t, total) !== null;
}

/** trainFits' checks for any train: an RC QP on the fast path, the expected PSN, the opcode in sequence and allowed. */
function trainInSequence(qp: SimQp, t: Packet): boolean {
  if (qp.qp_type !== IBV_QPT_RC || qp.world.perPacket) return false;
  if (t.psn !== qp.respPsn) return false;
  return opcodeSequenceOk(qp, t) && opcodeAllowed(qp, t);
}

/**
 * The MR a WRITE train's `total` quiet bytes land in, when the message's RETH (or the one it
 * continues) names one with remote write access and its whole range lies inside; else null.
 */
function trainWriteMr(qp: SimQp, t: Packet, total: number): SimMr | null {
  const reth = (t.mask & M_RETH) !== 0;
  const va = reth ? t.va : qp.respVa;
  const resid = reth ? t.dmaLen : qp.respResid;
  if (total > resid) return null;
  const mr = lookupMr(qp.device, qp.pd, reth ? t.rkey : qp.respRkey, IBV_ACCESS_REMOTE_WRITE, true);
  return mr !== null && inRange(mr, va, resid) ? mr : null;
}

/**
 * The responder's side, after rxe_rcv's checks passed: executes the quiet packets of the
 * train if each would take the plain path (expected PSN, opcode in sequence, access
 * allowed, resources there, every byte in range), hands a last packet to the responder, and
 * returns true; otherwise changes nothing and returns false (the caller splits the train).
 */
export function receiveTrain(qp: SimQp, t: Packet): boolean {
  // trainFits, each check made once: scatterTargets fails where scatterFits does, and
  // trainWriteMr is trainFits' WRITE check.
  if (!trainInSequence(qp, t)) return false;
  const n = quietCount(t);
  const mtu = t.trainMtu;
  const total = n * mtu;
  const m = t.mask;
  if (m & M_SEND) {
    const wqe = qp.rq.head();
    const targets = wqe ? scatterTargets(qp, wqe.dma, total) : null;
    if (!wqe || !targets) return false;
    qp.respWqe = wqe;
    // Source and receive buffer in the same memory: copy packet by packet, so overlap
    // resolves as it would (one block copy would behave like memmove instead).
    if (sharesMemory(t, null, targets)) {
      for (let i = 0; i < n; i++) scatter(qp.device, qp.pd, wqe.dma, mtu, t, null, i * mtu);
    } else scatter(qp.device, qp.pd, wqe.dma, total, t, null, 0);
  } else if (m & M_WRITE) {
    const mr = trainWriteMr(qp, t, total);
    if (mr === null) return false;
    const reth = (m & M_RETH) !== 0;
    const va = reth ? t.va : qp.respVa;
    const rkey = reth ? t.rkey : qp.respRkey;
    const resid = reth ? t.dmaLen : qp.respResid;
    if (reth) {
      qp.respVa = va;
      qp.respRkey = rkey;
      qp.respResid = resid;
      qp.respLength = resid;
    }
    const off = va - mr.addr;
    if (sharesMemory(t, mr.buffer, null)) {
      for (let i = 0; i < n; i++) {
        const p = trainPacket(qp.world, t, i);
        writePayload(qp, p, mr.bytes, off + i * mtu, mtu);
        qp.world.recycle(p);
      }
    } else writePayload(qp, t, mr.bytes, off, total);
    qp.respVa += total;
    qp.respResid -= total;
  } else return false;
  // What the last packet leaves behind (execute, then acknowledge: no ack_req, cleanup).
  qp.device.counters[CNT_RCVD_PKTS] += n;
  qp.respSyndrome = AETH_ACK_UNLIMITED;
  qp.sentPsnNak = false;
  qp.respPsn = (t.psn + n) & PSN_MASK;
  qp.respAckPsn = qp.respPsn;
  qp.respOpcode = middleOf(t.opcode);
  qp.respStatus = 0;
  qp.respMr = null;
  trainStats.whole++;
  if (t.endOpcode >= 0) {
    // The message's last packet follows through the reference path (ACK, completion, errors).
    t.opcode = t.endOpcode;
    t.mask = OPCODE_MASK[t.opcode];
    t.psn = (t.psn + n) & PSN_MASK;
    t.srcOff += total;
    t.payloadLen -= total;
    t.count = 1;
    qp.device.counters[CNT_RCVD_PKTS]++;
    if (!respondPlain(qp, t)) responder(qp, t);
  }
  return true;
}

/**
 * Would scatter() of `len` bytes into `dma` succeed? copy_data's checks without copying:
 * the memory the bytes would land in, or null when some check fails.
 */
function scatterTargets(qp: SimQp, dma: Dma, len: number): ArrayBufferLike[] | null {
  const out: ArrayBufferLike[] = [];
  return scatterFits(qp, dma, len, out) ? out : null;
}

/** Would scatter() of `len` bytes into `dma` succeed? Collects the target buffers into `out` if given. */
function scatterFits(qp: SimQp, dma: Dma, len: number, out: ArrayBufferLike[] | null): boolean {
  if (len > dma.resid) return false;
  let sge = dma.curSge;
  let off = dma.sgeOffset;
  let left = len;
  while (left > 0) {
    if (sge >= dma.numSge) return false;
    const sgeLen = dma.len[sge];
    if (off >= sgeLen) {
      sge++;
      off = 0;
      continue;
    }
    const mr = lookupMr(qp.device, qp.pd, dma.lkey[sge], IBV_ACCESS_LOCAL_WRITE, false);
    if (!mr) return false;
    const k = left < sgeLen - off ? left : sgeLen - off;
    if (!inRange(mr, dma.addr[sge] + off, k)) return false;
    if (out !== null) out.push(mr.buffer);
    left -= k;
    off += k;
  }
  return true;
}

/** Could the train's payload source be the same memory as `dst` or any of `dsts`? (Unknown counts as yes.) */
function sharesMemory(t: Packet, dst: ArrayBufferLike | null, dsts: ArrayBufferLike[] | null): boolean {
  if (t.srcKind === SRC_BYTES) return hits(t.srcBytes.buffer, dst, dsts);
  const dma = t.srcWqe!.dma;
  for (let k = 0; k < dma.numSge; k++) {
    // The WQE's MR cache, valid for every SGE gatherCheck walked for this train.
    const mr: SimMr | null = dma.mr[k];
    if (!mr || mr.destroyed || mr.lkey !== dma.lkey[k] || hits(mr.buffer, dst, dsts)) return true;
  }
  return false;
}

function hits(b: ArrayBufferLike, dst: ArrayBufferLike | null, dsts: ArrayBufferLike[] | null): boolean {
  return b === dst || (dsts !== null && dsts.includes(b));
}

/**
 * One request packet (not a train) on its plain path, with the log off: an RC SEND or
 * RDMA WRITE (no immediate) at the expected PSN, in sequence, allowed, with a receive WQE,
 * a good rkey and range, room in the CQ — what rxe_responder does in that case, without
 * walking its state machine. Returns false, having changed nothing, for anything else (the
 * caller runs the reference responder).
 */
export function respondPlain(qp: SimQp, pkt: Packet): boolean {
  if (qp.qp_type !== IBV_QPT_RC || qp.world.perPacket || qp.gotoError) return false;
  if (pkt.psn !== qp.respPsn) return false;
  if (!opcodeSequenceOk(qp, pkt) || !opcodeAllowed(qp, pkt)) return false;
  const m = pkt.mask;
  const n = pkt.payloadLen;
  if (m & M_SEND) {
    if (!receivePlain(qp, pkt)) return false;
  } else if (m & M_WRITE && !(m & M_RWR)) {
    const reth = (m & M_RETH) !== 0;
    if (reth && pkt.dmaLen === 0) return false;
    const va = reth ? pkt.va : qp.respVa;
    const rkey = reth ? pkt.rkey : qp.respRkey;
    const resid = reth ? pkt.dmaLen : qp.respResid;
    const mr = lookupMr(qp.device, qp.pd, rkey, IBV_ACCESS_REMOTE_WRITE, true);
    if (!mr || !inRange(mr, va, resid) || (n > 0 && !inRange(mr, va, n))) return false;
    if (reth) {
      qp.respVa = va;
      qp.respRkey = rkey;
      qp.respResid = resid;
      qp.respLength = resid;
    }
    if (n > 0) writePayload(qp, pkt, mr.bytes, va - mr.addr, n);
    qp.respVa += n;
    qp.respResid -= n;
  } else return false;
  finishPlain(qp, pkt);
  return true;
}

/**
 * A SEND packet's data into the receive WQE at the head, when there is one, the CQ has room
 * for its completion and the bytes fit; false, having changed nothing, otherwise.
 */
function receivePlain(qp: SimQp, pkt: Packet): boolean {
  const wqe = qp.rq.head();
  if (!wqe) return false;
  const cq = qp.recv_cq;
  if (pkt.mask & M_COMP && (cq.destroyed || cq.count >= cq.cqe)) return false;
  const dma = wqe.dma;
  const n = pkt.payloadLen;
  if (dma.numSge === 1) {
    // One SGE: scatter() checks everything before it copies a byte (len ≤ resid, and resid
    // is what is left of that SGE), so a failure leaves nothing changed but its MR cache.
    if (scatterPacket(qp.device, qp.pd, dma, n, pkt) !== COPY_OK) return false;
  } else {
    if (!scatterFits(qp, dma, n, null)) return false;
    scatter(qp.device, qp.pd, dma, n, pkt, null, 0);
  }
  qp.respWqe = wqe;
  return true;
}

/** What the responder leaves after a plain packet was executed: PSNs, completion, ACK. */
function finishPlain(qp: SimQp, pkt: Packet): void {
  qp.respSyndrome = AETH_ACK_UNLIMITED;
  qp.sentPsnNak = false;
  qp.respPsn = (pkt.psn + 1) & PSN_MASK;
  qp.respAckPsn = qp.respPsn;
  qp.respOpcode = pkt.opcode;
  qp.respStatus = IBV_WC_SUCCESS;
  if (endsMessage(pkt.mask)) qp.respMsn++;
  if (pkt.mask & M_COMP) doComplete(qp, pkt);
  if (pkt.ackReq) sendAck(qp, pkt, RC_ACKNOWLEDGE, AETH_ACK_UNLIMITED, pkt.psn);
  qp.respMr = null;
}

/**
 * The responder's side of a SEND run (world.ts receiveRunPacket), from packet `i` on, after
 * packet `i - 1` took respondPlain's path: each next packet takes it too unless it finds no
 * receive WQE, a full CQ or a buffer its bytes do not fit. respondPlain's other checks hold
 * for the whole run once they held for one packet: the QP type and the log do not change,
 * gotoError is set only on the reference path, each PSN is the one after, SEND_ONLY follows
 * SEND_ONLY, and an RC SEND needs no access flag. Counts each packet received. Returns the
 * index of the first packet that needs the reference path (counted, described by `t`), or n.
 */
export function respondSendRun(qp: SimQp, t: Packet, i: number, n: number): number {
  const src = t.srcQp!;
  const sq = src.sq;
  const counters = qp.device.counters;
  const rq = qp.rq;
  const cq = qp.recv_cq;
  let psn = t.psn; // packet i - 1's
  const world = qp.world;
  // The ACK train (FIFO's last record) the previous ACK of this loop was queued in or joined.
  let ack: Packet | null = null;
  // The MRs the last receive and source SGEs resolved to (sgeMr's answers, see below).
  let dMr: SimMr | null = null;
  let sMr: SimMr | null = null;
  for (; i < n; i++) {
    psn = (psn + 1) & PSN_MASK;
    const w = sq.at(t.runWqe + i);
    const sdma = w.dma;
    const len = sdma.length;
    const rw = rq.head();
    // One SGE on each side and bytes from the sender's memory (what small SENDs nearly always
    // are): receivePlain, scatterPacket and finishPlain for this packet without writing it
    // into `t`. PSN-independent fields finishPlain sets were set to the same values by
    // packet i - 1; anything else (or a check that fails) takes the general code below.
    if (
      rw !== null &&
      len > 0 &&
      w.inline === null &&
      sdma.numSge === 1 &&
      rw.dma.numSge === 1 &&
      !cq.destroyed &&
      cq.count < cq.cqe &&
      len <= rw.dma.resid
    ) {
      const dma = rw.dma;
      // The MR the previous packet's receive (source) lkey named is the answer again for the
      // same key while it is registered: lookup_mr would find it (same PD, same access).
      const dKey = dma.lkey[0];
      const mr =
        dMr !== null && dMr.lkey === dKey && !dMr.destroyed
          ? dMr
          : (dMr = sgeMr(qp.device, qp.pd, dma, 0, IBV_ACCESS_LOCAL_WRITE));
      const va = dma.addr[0] + dma.sgeOffset;
      if (mr !== null && inRange(mr, va, len)) {
        counters[CNT_RCVD_PKTS]++;
        const sKey = sdma.lkey[0];
        const smr =
          sMr !== null && sMr.lkey === sKey && !sMr.destroyed ? sMr : (sMr = sgeMr(src.device, src.pd, sdma, 0, 0)!);
        copyMr(mr, va - mr.addr, smr, sdma.addr[0] - smr.addr, len);
        dma.sgeOffset += len;
        dma.resid -= len;
        qp.respPsn = (psn + 1) & PSN_MASK;
        qp.respAckPsn = qp.respPsn;
        qp.respMsn++;
        // doComplete for a SEND without immediate.
        counters[CNT_RDMA_RECV]++;
        const wc = makeWc(rw.wr_id, IBV_WC_SUCCESS, IBV_WC_RECV, dma.length - dma.resid, 0, qp.qp_num, 0, IBV_WC_GRH);
        rq.pop();
        cq.push(wc, (w.send_flags & IBV_SEND_SOLICITED) !== 0);
        // The ACK: one more in the ACK train this loop's previous ACK went into, if it can be.
        if (ack !== null && world.extendAck(ack, psn, qp.respMsn & 0xffffff)) counters[CNT_SENT_PKTS]++;
        else ack = sendAck(qp, t, RC_ACKNOWLEDGE, AETH_ACK_UNLIMITED, psn) ? world.lastQueued() : null;
        trainStats.runPackets++;
        continue;
      }
    }
    ack = null;
    sendRunPacket(t, src, w, psn);
    counters[CNT_RCVD_PKTS]++;
    if (!receivePlain(qp, t)) return i;
    finishPlain(qp, t);
  }
  return n;
}

/**
 * A plain ACK with the log off: it acknowledges exactly the oldest WQE, a SEND or WRITE
 * waiting for it, with nothing unusual pending — rxe_completer's check_psn, check_ack,
 * do_complete and update_comp in that case, without walking its state machine. Returns
 * false, having changed nothing, for anything else.
 */
export function completePlainAck(qp: SimQp, pkt: Packet): boolean {
  if (pkt.opcode !== RC_ACKNOWLEDGE || (pkt.syndrome & AETH_TYPE_MASK) !== AETH_ACK || qp.world.perPacket) return false;
  const w = qp.sq.head();
  if (
    w === null ||
    w.state !== WQE_PENDING ||
    w.wrMask & WR_ATOMIC_OR_READ ||
    w.hasRdAtomic ||
    w.last_psn !== pkt.psn ||
    qp.compOpcode !== -1 ||
    psnCompare(pkt.psn, qp.compPsn) < 0
  )
    return false;
  qp.compRetryCnt = qp.attr.retry_cnt;
  qp.compRnrRetry = qp.attr.rnr_retry;
  qp.startedRetry = false;
  qp.completeSend(w);
  qp.compPsn = (pkt.psn + 1) & PSN_MASK;
  if (qp.waitPsn) {
    qp.waitPsn = false;
    qp.world.kickRequester(qp);
  }
  return true;
}

/**
 * The ACKs of an ACK train for `qp`, in turn (world.ts receiveAckOfTrain, once rxe_rcv's
 * per-train checks passed). An ACK that completePlainAck takes, on a QP in RTS with no
 * retry pending, is handled here with the completer's entry checks and its next run;
 * anything else goes through completer(). That next run, when the oldest WQE still waits,
 * only syncs the retransmit timer; consecutive plain ACKs at one instant leave it as the
 * last one's sync alone would (an arm at the same time is no change; a cancel undoes an
 * arm), so that sync is made once, before anything else can see the timer.
 */
export function completeAckTrain(qp: SimQp, t: Packet, n: number): void {
  const psn = t.psn;
  const msn = t.msn;
  const counters = qp.device.counters;
  let sync = false;
  for (let i = 0; i < n; i++) {
    t.psn = (psn + i) & PSN_MASK;
    t.msn = (msn + i * t.msnStep) & 0xffffff;
    if (!qp.reqReadyForResponses) continue; // dropped
    counters[CNT_RCVD_PKTS]++;
    const plain = qp.reqState === QS_READY && !qp.destroyed && !qp.needRetry && completePlainAck(qp, t);
    if (plain && oldestWaits(qp)) {
      sync = true; // completerAgain would only sync the timer
      continue;
    }
    if (sync) syncRetransTimer(qp);
    sync = false;
    if (plain) completerAgain(qp);
    else completer(qp, t, false);
  }
  if (sync) syncRetransTimer(qp);
}
