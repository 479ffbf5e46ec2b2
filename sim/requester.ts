/**
 * The requester (rxe_req.c): turns send WQEs into packets, one per path-MTU of payload,
 * with rxe's PSN accounting, window (128 unacked PSNs), RDMA READ/atomic credits
 * (max_rd_atomic), retries (go-back-N from the oldest unacknowledged PSN) and local errors.
 */
import { sgeRefusal } from "./explain.js";
import {
  IBV_QPT_RC,
  IBV_QPT_UC,
  IBV_QPT_UD,
  IBV_SEND_SOLICITED,
  IBV_WC_LOC_PROT_ERR,
  IBV_WC_LOC_QP_OP_ERR,
} from "../verbs/constants.js";
import {
  IBV_WR_ATOMIC_CMP_AND_SWP,
  IBV_WR_ATOMIC_FETCH_AND_ADD,
  IBV_WR_RDMA_READ,
  IBV_WR_RDMA_WRITE,
  IBV_WR_RDMA_WRITE_WITH_IMM,
  IBV_WR_SEND,
  IBV_WR_SEND_WITH_IMM,
  IBV_WC_SUCCESS,
} from "../verbs/constants.js";
import { completer } from "./completer.js";
import { toNs } from "./wire.js";
import { CNT_SEND_ERR } from "./counters.js";
import { sendRun, sendTrain } from "./fast-path.js";
import { COPY_EFAULT, COPY_OK, gatherCheck } from "./dma.js";
import {
  M_ATMETH,
  M_DETH,
  M_END,
  M_IMMDT,
  M_READ,
  M_RETH,
  M_START,
  OPCODE_MASK,
  PSN_MASK,
  RC_COMPARE_SWAP,
  RC_FETCH_ADD,
  RC_READ_REQUEST,
  RC_SEND_FIRST,
  RC_SEND_MIDDLE,
  RC_SEND_ONLY,
  RC_WRITE_FIRST,
  RC_WRITE_MIDDLE,
  SRC_BYTES,
  SRC_NONE,
  SRC_WQE,
  UC_SEND_FIRST,
  UC_SEND_MIDDLE,
  UC_WRITE_FIRST,
  UC_WRITE_MIDDLE,
  UD_SEND_ONLY,
  UD_SEND_ONLY_IMM,
  psnCompare,
} from "./packets.js";
import { IN_FLIGHT_HIGH, MAX_UNACKED_PSNS, QS_DRAIN, QS_DRAINED, QS_ERROR, QS_RESET, type SimQp } from "./qp.js";
import {
  WQE_DONE,
  WQE_ERROR,
  WQE_PENDING,
  WQE_POSTED,
  WQE_PROCESSING,
  WR_ATOMIC_OR_READ,
  WR_READ,
  WR_WRITE,
  WR_WRITE_OR_SEND,
  type SendWqe,
} from "./wqe.js";

/** rxe's RXE_MAX_PKT_PER_ACK: a long message asks for an ACK at least this often. */
const MAX_PKT_PER_ACK = 64;

/**
 * rxe's next_opcode: the BTH opcode of the next packet of `wqe`, given the previous one,
 * or -1 when the operation is not valid on this QP type.
 */
function nextOpcode(qp: SimQp, wqe: SendWqe, fits: boolean): number {
  const prev = qp.reqOpcode;
  const op = wqe.opcode;
  if (qp.qp_type === IBV_QPT_RC || qp.qp_type === IBV_QPT_UC) {
    const rc = qp.qp_type === IBV_QPT_RC;
    const base = rc ? 0 : 0x20;
    switch (op) {
      case IBV_WR_RDMA_WRITE:
      case IBV_WR_RDMA_WRITE_WITH_IMM: {
        const imm = op === IBV_WR_RDMA_WRITE_WITH_IMM ? 1 : 0;
        const inMsg =
          prev === (rc ? RC_WRITE_FIRST : UC_WRITE_FIRST) || prev === (rc ? RC_WRITE_MIDDLE : UC_WRITE_MIDDLE);
        if (inMsg) return fits ? base + 0x08 + imm : base + 0x07;
        return fits ? base + 0x0a + imm : base + 0x06;
      }
      case IBV_WR_SEND:
      case IBV_WR_SEND_WITH_IMM: {
        const imm = op === IBV_WR_SEND_WITH_IMM ? 1 : 0;
        const inMsg = prev === (rc ? RC_SEND_FIRST : UC_SEND_FIRST) || prev === (rc ? RC_SEND_MIDDLE : UC_SEND_MIDDLE);
        if (inMsg) return fits ? base + 0x02 + imm : base + 0x01;
        return fits ? base + 0x04 + imm : base + 0x00;
      }
      case IBV_WR_RDMA_READ:
        return rc ? RC_READ_REQUEST : -1;
      case IBV_WR_ATOMIC_CMP_AND_SWP:
        return rc ? RC_COMPARE_SWAP : -1;
      case IBV_WR_ATOMIC_FETCH_AND_ADD:
        return rc ? RC_FETCH_ADD : -1;
    }
    return -1;
  }
  if (qp.qp_type === IBV_QPT_UD) {
    if (op === IBV_WR_SEND) return UD_SEND_ONLY;
    if (op === IBV_WR_SEND_WITH_IMM) return UD_SEND_ONLY_IMM;
  }
  return -1;
}

/** rxe's req_next_wqe, including the drain check that raises SQ_DRAINED. */
function nextWqe(qp: SimQp): SendWqe | null {
  const sq = qp.sq;
  if (qp.reqState === QS_DRAIN) {
    const head = sq.head();
    const busy = head !== null && (qp.reqWqeIndex !== sq.cons || head.state !== WQE_POSTED);
    if (!busy) qp.drained();
  }
  if (qp.reqWqeIndex === sq.prod) return null;
  const wqe = sq.at(qp.reqWqeIndex);
  if ((qp.reqState === QS_DRAIN || qp.reqState === QS_DRAINED) && wqe.state !== WQE_PROCESSING) return null;
  return wqe;
}

/** rxe's req_retry: rewind to the oldest unacknowledged WQE and resend from comp.psn. */
function retry(qp: SimQp): void {
  const sq = qp.sq;
  qp.reqWqeIndex = sq.cons;
  qp.reqPsn = qp.compPsn;
  qp.reqOpcode = -1;
  let first = true;
  for (let i = sq.cons; i !== sq.prod; i++) {
    const wqe = sq.at(i);
    if (wqe.state === WQE_POSTED) break;
    if (wqe.state === WQE_DONE) continue;
    wqe.iova = wqe.remote_addr;
    if (!first || !(wqe.wrMask & WR_READ)) wqe.dma.reset();
    if (first) {
      first = false;
      if (wqe.wrMask & WR_WRITE_OR_SEND) {
        // Skip the packets already acknowledged (retry_first_write_send).
        const npsn = (qp.compPsn - wqe.first_psn) & PSN_MASK;
        for (let k = 0; k < npsn; k++) {
          const to = Math.min(wqe.dma.resid, qp.pmtu);
          advanceCursor(wqe, to);
          if (wqe.wrMask & WR_WRITE) wqe.iova += to;
          qp.reqOpcode = nextOpcode(qp, wqe, wqe.dma.resid + to <= qp.pmtu);
        }
      }
      if (wqe.wrMask & WR_READ) {
        const done = Math.floor((wqe.dma.length - wqe.dma.resid) / qp.mtu);
        wqe.iova += done * qp.mtu;
      }
    }
    wqe.state = WQE_POSTED;
  }
}

function advanceCursor(wqe: SendWqe, n: number): void {
  const dma = wqe.dma;
  let left = n;
  while (left > 0 && dma.curSge < dma.numSge) {
    const room = dma.len[dma.curSge] - dma.sgeOffset;
    if (room <= 0) {
      dma.curSge++;
      dma.sgeOffset = 0;
      continue;
    }
    const k = Math.min(room, left);
    dma.sgeOffset += k;
    left -= k;
  }
  dma.resid -= n;
}

/**
 * Runs the requester until it has nothing (more) to send. Like rxe's task, it never runs
 * twice at once: a kick while it runs (from a loopback answer handled inline) is covered by
 * the running loop, which re-checks everything before each packet.
 */
export function requester(qp: SimQp): void {
  if (qp.destroyed || qp.reqActive) return;
  qp.reqActive = true;
  try {
    if (!requesterLoop(qp)) qp.reqPaced = false;
  } finally {
    qp.reqActive = false;
  }
}

/** True when it stopped to wait for the link (a paced run goes on when it is free). */
function requesterLoop(qp: SimQp): boolean {
  const world = qp.world;
  for (;;) {
    if (qp.reqState === QS_RESET) return false;
    if (qp.reqState === QS_ERROR) {
      // rxe_requester in ERROR: the completer flushes what is queued.
      completer(qp, null, false);
      return false;
    }
    if (qp.waitForRnrTimer) return false;
    if (qp.needRetry) {
      retry(qp);
      qp.needRetry = false;
    }
    // rxe_post_send runs the requester in the posting process (rxe_run_task(&qp->req.task, 0)),
    // which builds a packet and transmits it (rxe_xmit_packet) before it looks at the next,
    // while the receive path runs beside it in softirq. On rxe the link's per-packet time is
    // that CPU work, so such a run builds its next packet only once the link is free, and a
    // NAK the completer took meanwhile is seen here first (need_retry: it goes back at once).
    // A run the completer or a timer starts (a retry, the window or skb_out reopening) is in
    // softirq itself and sends its packets before the receive path runs again (§11: the
    // timer's retry leaves whole before any ACK): not paced. Connected QPs between the two
    // devices only (a UD datagram's device is its AH's; loopback costs no time).
    if (
      qp.reqPaced &&
      world.paced &&
      qp.qp_type !== IBV_QPT_UD &&
      qp.destDev !== null &&
      qp.destDev !== qp.device &&
      qp.reqWqeIndex !== qp.sq.prod
    ) {
      const free = world.linkFreeNs(qp.device, qp.destDev);
      if (free > toNs(world.clock.now)) {
        world.clock.arm(qp.paceTimer, free / 1e6);
        return true;
      }
    }
    const wqe = nextWqe(qp);
    if (!wqe) return false;
    const rc = qp.qp_type === IBV_QPT_RC;
    const windowEnd = (qp.compPsn + MAX_UNACKED_PSNS) & PSN_MASK;
    if (rc && psnCompare(qp.reqPsn, windowEnd) > 0) {
      qp.waitPsn = true;
      return false;
    }
    // Limit the number of inflight SKBs per QP (rxe_requester): more than 64 not yet freed.
    if (qp.inFlight(toNs(world.clock.now)) > IN_FLIGHT_HIGH) {
      qp.waitForSkbs();
      return false;
    }
    // RDMA READ and atomics need an initiator credit (max_rd_atomic): none means waiting forever.
    if (rc && wqe.wrMask & WR_ATOMIC_OR_READ && !wqe.hasRdAtomic) {
      if (qp.rdAtomic <= 0) {
        qp.needRdAtomic = true;
        return false;
      }
      qp.rdAtomic--;
      qp.needRdAtomic = false;
      wqe.hasRdAtomic = true;
    }
    const mtu = qp.pmtu;
    const dma = wqe.dma;
    let payload = wqe.wrMask & WR_WRITE_OR_SEND ? dma.resid : 0;
    const opcode = nextOpcode(qp, wqe, payload <= mtu);
    if (opcode < 0) {
      wqe.status = IBV_WC_LOC_QP_OP_ERR;
      wqe.reason = { kind: "op-invalid", opcode: wqe.opcode };
      fail(qp, wqe);
      return false;
    }
    if (payload > mtu) {
      if (qp.qp_type === IBV_QPT_UD) {
        // C10-93.1.1: a UD message over the MTU is not sent, and not an error either.
        wqe.first_psn = qp.reqPsn;
        wqe.last_psn = qp.reqPsn;
        qp.reqPsn = (qp.reqPsn + 1) & PSN_MASK;
        qp.reqOpcode = UD_SEND_ONLY;
        qp.reqWqeIndex++;
        wqe.state = WQE_DONE;
        wqe.status = IBV_WC_SUCCESS;
        completer(qp, null, false);
        continue;
      }
      // Long RC messages with the log off: the quiet packets ahead go out as one train.
      if (rc && !world.perPacket && sendTrain(qp, wqe, opcode, windowEnd)) continue;
      payload = mtu;
    }
    // One-packet RC SENDs with the log off: those that follow each other go out as one run.
    if (opcode === RC_SEND_ONLY && !world.perPacket && sendRun(qp, wqe, windowEnd)) continue;
    const mask = OPCODE_MASK[opcode];
    // finish_packet: the payload's SGEs are checked now (the bytes move when the packet lands).
    const msgOff = dma.length - dma.resid;
    // rollback_state's copy of the data cursor, should the packet not leave (below).
    const cur = { sge: dma.curSge, off: dma.sgeOffset, resid: dma.resid, noack: qp.noackPkts };
    if (payload > 0 && !wqe.inline) {
      const r = gatherCheck(qp.device, qp.pd, dma, payload);
      if (r !== 0) {
        wqe.status = r === COPY_EFAULT ? IBV_WC_LOC_PROT_ERR : IBV_WC_LOC_QP_OP_ERR;
        wqe.reason = sgeRefusal(qp.device, qp.pd, dma, 0, "send");
        fail(qp, wqe);
        return false;
      }
    } else if (payload > 0) {
      dma.resid -= payload;
    }
    const pkt = world.newPacket();
    pkt.opcode = opcode;
    pkt.mask = mask;
    pkt.psn = qp.reqPsn;
    pkt.srcQp = qp;
    pkt.wrId = world.packetLog ? wqe.wr_id : undefined;
    pkt.payloadLen = payload;
    if (payload === 0) pkt.srcKind = SRC_NONE;
    else if (wqe.inline) {
      pkt.srcKind = SRC_BYTES;
      pkt.srcBytes = wqe.inline;
      pkt.srcOff = msgOff;
    } else {
      pkt.srcKind = SRC_WQE;
      pkt.srcWqe = wqe;
      pkt.srcOff = msgOff;
    }
    let ackReq = (mask & M_END) !== 0 || qp.noackPkts++ > MAX_PKT_PER_ACK;
    if (ackReq) qp.noackPkts = 0;
    if (!rc) ackReq = (mask & M_END) !== 0;
    pkt.ackReq = ackReq;
    pkt.solicited = (mask & M_END) !== 0 && (wqe.send_flags & IBV_SEND_SOLICITED) !== 0;
    if (mask & M_RETH) {
      pkt.va = wqe.iova;
      pkt.rkey = wqe.rkey;
      pkt.dmaLen = dma.length - msgOff;
    }
    if (mask & M_IMMDT) pkt.imm = wqe.imm_data;
    if (mask & M_ATMETH) {
      pkt.va = wqe.iova;
      pkt.rkey = wqe.rkey;
      pkt.swapAdd = opcode === RC_COMPARE_SWAP ? wqe.swap : wqe.compare_add;
      pkt.compare = wqe.compare_add;
    }
    let dest;
    let mcast = false;
    if (mask & M_DETH) {
      pkt.qkey = wqe.remote_qkey;
      pkt.srcQpn = qp.qp_num;
      pkt.destQpn = wqe.remote_qpn;
      const av = wqe.ah!.av;
      pkt.sgid = av.sgid;
      pkt.dgid = av.dgid;
      dest = av.destDev;
      mcast = av.mcast;
    } else {
      pkt.destQpn = qp.attr.dest_qp_num;
      pkt.sgid = qp.sgidBytes;
      pkt.dgid = qp.dgidBytes;
      dest = qp.destDev;
    }
    if (dest !== qp.device && world.faults.active && dest && world.faults.refusedAtSender(qp.device, dest, pkt)) {
      // rxe_xmit_packet: the datagram was refused on its way out (above the sender's netdev
      // MTU, or the peer veth's), so rxe_send gave -EAGAIN. rxe counts send_err, rolls the WQE back
      // and runs the requester again, for as long as the QP lives: no retry timer, no
      // completion (sim/RXE-FACTS.md §10). Here the next try comes SEND_AGAIN_MS later.
      dma.curSge = cur.sge;
      dma.sgeOffset = cur.off;
      dma.resid = cur.resid;
      qp.noackPkts = cur.noack;
      qp.device.counters[CNT_SEND_ERR]++;
      world.recycle(pkt);
      world.faults.sendAgain(qp, world.clock, () => world.kickRequester(qp));
      return false;
    }
    // update_wqe_state / update_wqe_psn
    if (mask & M_END) {
      if (rc) wqe.state = WQE_PENDING;
    } else wqe.state = WQE_PROCESSING;
    if (mask & M_START) {
      let numPkt = Math.ceil((dma.resid + payload) / qp.mtu);
      if (mask & M_READ) numPkt = Math.ceil(dma.length / qp.mtu);
      if (numPkt === 0) numPkt = 1;
      wqe.first_psn = qp.reqPsn;
      wqe.last_psn = (qp.reqPsn + numPkt - 1) & PSN_MASK;
    }
    if (mask & M_READ) qp.reqPsn = (wqe.first_psn + Math.max(1, Math.ceil(dma.length / qp.mtu))) & PSN_MASK;
    else qp.reqPsn = (qp.reqPsn + 1) & PSN_MASK;
    if (wqe.wrMask & WR_WRITE) wqe.iova += payload;
    // update_state
    qp.reqOpcode = opcode;
    if (mask & M_END) qp.reqWqeIndex++;
    if (!rc && mask & M_END) wqe.state = WQE_DONE;
    const sent = mcast ? world.transmitMcast(qp.device, pkt) : world.transmit(qp.device, pkt, dest);
    if (rc) qp.armRetransIfIdle();
    // rxe completes a UD/UC send once its packet is out, and rxe receives it within that
    // transmit (loopback) or right after (veth): the sender sees it complete once it arrived.
    else if (mask & M_END) world.afterArrival(sent, () => completer(qp, null, false));
    // rxe_loopback: world.transmit had the responder answer this packet, and the completer
    // take that answer, before the next packet is built (§5): a NAK has stopped the QP here.
  }
}

/** The WQE failed before it was sent: the completer reports it and moves the QP to ERR. */
function fail(qp: SimQp, wqe: SendWqe): void {
  wqe.state = WQE_ERROR;
  completer(qp, null, false);
}
