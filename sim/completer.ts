/**
 * The completer (rxe_comp.c): matches ACKs, NAKs, READ responses and atomic ACKs against
 * the oldest outstanding send WQE, completes WQEs, and runs the retry machinery: the local
 * ACK timeout (retry_cnt, 7 = forever) and RNR NAKs (the responder's timer, rnr_retry,
 * 7 = forever). A failed WQE completes with its status and takes the QP to ERR.
 */
import {
  IBV_QPT_RC,
  IBV_WC_LOC_PROT_ERR,
  IBV_WC_REM_ACCESS_ERR,
  IBV_WC_REM_INV_REQ_ERR,
  IBV_WC_REM_OP_ERR,
  IBV_WC_RETRY_EXC_ERR,
  IBV_WC_RNR_RETRY_EXC_ERR,
  IBV_WC_FATAL_ERR,
  IBV_WC_BAD_RESP_ERR,
  IBV_WR_RDMA_READ,
  IBV_WR_ATOMIC_CMP_AND_SWP,
  IBV_WR_ATOMIC_FETCH_AND_ADD,
  RNR_TIMER_USEC,
} from "../verbs/constants.js";
import {
  CNT_COMP_RETRY,
  CNT_RCV_RNR,
  CNT_RCV_SEQ_ERR,
  CNT_RETRY_EXCEEDED,
  CNT_RNR_RETRY_EXCEEDED,
} from "./counters.js";
import { scatter } from "./dma.js";
import { completePlainAck } from "./fast-path.js";
import { JIFFY_MS, timerFireAt } from "./clock.js";
import {
  AETH_ACK,
  AETH_NAK,
  AETH_NAK_INVALID_REQ,
  AETH_NAK_PSN_SEQ_ERROR,
  AETH_NAK_REM_ACC_ERR,
  AETH_RNR_NAK,
  AETH_TYPE_MASK,
  M_END,
  M_START,
  PSN_MASK,
  RC_ACKNOWLEDGE,
  RC_ATOMIC_ACKNOWLEDGE,
  RC_READ_RESPONSE_FIRST,
  RC_READ_RESPONSE_LAST,
  RC_READ_RESPONSE_MIDDLE,
  RC_READ_RESPONSE_ONLY,
  psnCompare,
  type Packet,
} from "./packets.js";
import { QS_ERROR, QS_READY, QS_RESET, type SimQp } from "./qp.js";
import {
  WQE_DONE,
  WQE_ERROR,
  WQE_PENDING,
  WQE_POSTED,
  WQE_PROCESSING,
  WR_ATOMIC_OR_READ,
  type SendWqe,
} from "./wqe.js";

/** rnrnak_jiffies: usecs_to_jiffies(rnrnak_usec[timer]) (which rounds up), at least one. */
export function rnrDelayJiffies(timer: number): number {
  return Math.max(1, Math.ceil(RNR_TIMER_USEC[timer & 0x1f] / (JIFFY_MS * 1000)));
}

const GET_WQE = 1;
const CHECK_PSN = 2;
const CHECK_ACK = 3;
const READ = 4;
const ATOMIC = 5;
const WRITE_SEND = 6;
const COMP_ACK = 7;
const COMP_WQE = 8;
const UPDATE_COMP = 9;
const ERROR_RETRY = 10;
const RNR_RETRY = 11;
const ERROR = 12;
const EXIT = 13;
const DONE = 14;

function resetRetryCounters(qp: SimQp): void {
  qp.compRetryCnt = qp.attr.retry_cnt;
  qp.compRnrRetry = qp.attr.rnr_retry;
  qp.startedRetry = false;
  qp.retryCause = undefined;
}

/**
 * One run of the completer: with a response packet, or none (a timer, or a WQE that needs
 * no ACK). `timeout` is true when the retransmit timer fired.
 */
export function completer(qp: SimQp, pkt: Packet | null, timeout: boolean): void {
  if (qp.destroyed) return;
  if (qp.reqState === QS_ERROR) {
    qp.flushSq();
    return;
  }
  if (qp.reqState === QS_RESET) return;
  // A response that says why the responder refused (or ignored) a request: kept for the reason of a failure.
  if (pkt !== null && pkt.reason !== undefined) qp.retryCause = pkt.reason;
  // While a retry is pending, responses wait (rxe leaves them queued; here they are dropped).
  if (qp.needRetry) return;
  const r = pkt !== null && completePlainAck(qp, pkt) ? DONE : completeOne(qp, pkt, timeout);
  if (r !== EXIT) completerAgain(qp);
}

/**
 * rxe runs the completer again after each packet (or WQE) it handled: when the oldest WQE
 * is still waiting for its ACK that run only re-arms the timer, so do just that; otherwise
 * complete WQEs (failed or done ones) until one waits.
 */
export function completerAgain(qp: SimQp): void {
  for (;;) {
    if (oldestWaits(qp)) {
      syncRetransTimer(qp);
      return;
    }
    if (completeOne(qp, null, false) === EXIT) return;
  }
}

/** Whether the oldest send WQE is still waiting to be sent or acknowledged (or there is none). */
export function oldestWaits(qp: SimQp): boolean {
  const head = qp.sq.head();
  return head === null || head.state === WQE_POSTED || head.state === WQE_PENDING || head.state === WQE_PROCESSING;
}

function completeOne(qp: SimQp, pkt: Packet | null, timeoutRetry: boolean): number {
  let wqe: SendWqe | null = null;
  let state = GET_WQE;
  for (;;) {
    switch (state) {
      case GET_WQE: {
        wqe = qp.sq.head();
        if (!wqe || wqe.state === WQE_POSTED) state = pkt ? DONE : EXIT;
        else if (wqe.state === WQE_DONE) state = COMP_WQE;
        else if (wqe.state === WQE_ERROR) state = ERROR;
        else state = pkt ? CHECK_PSN : EXIT;
        break;
      }
      case CHECK_PSN: {
        const w = wqe!;
        const p = pkt!;
        if (psnCompare(p.psn, w.last_psn) > 0) {
          if (w.state === WQE_PENDING) {
            if (w.wrMask & WR_ATOMIC_OR_READ) state = ERROR_RETRY;
            else {
              resetRetryCounters(qp);
              state = COMP_WQE;
            }
          } else state = DONE;
          break;
        }
        const diff = psnCompare(p.psn, qp.compPsn);
        if (diff < 0) state = p.psn === w.last_psn ? COMP_ACK : DONE;
        else if (diff > 0 && w.wrMask & WR_ATOMIC_OR_READ) state = DONE;
        else state = CHECK_ACK;
        break;
      }
      case CHECK_ACK:
        state = checkAck(qp, pkt!, wqe!);
        break;
      case READ: {
        const w = wqe!;
        const p = pkt!;
        const r = scatter(qp.device, qp.pd, w.dma, p.payloadLen, p, null, 0);
        if (r !== 0) {
          w.status = IBV_WC_LOC_PROT_ERR;
          state = ERROR;
        } else state = w.dma.resid === 0 && p.mask & M_END ? COMP_ACK : UPDATE_COMP;
        break;
      }
      case ATOMIC: {
        const w = wqe!;
        const orig = new Uint8Array(8);
        new DataView(orig.buffer).setBigUint64(0, pkt!.orig, true);
        const r = scatter(qp.device, qp.pd, w.dma, 8, null, orig, 0);
        if (r !== 0) {
          w.status = IBV_WC_LOC_PROT_ERR;
          state = ERROR;
        } else state = COMP_ACK;
        break;
      }
      case WRITE_SEND:
        state = wqe!.state === WQE_PENDING && wqe!.last_psn === pkt!.psn ? COMP_ACK : UPDATE_COMP;
        break;
      case COMP_ACK: {
        const w = wqe!;
        if (w.hasRdAtomic) {
          w.hasRdAtomic = false;
          qp.rdAtomic++;
          if (qp.needRdAtomic) {
            qp.needRdAtomic = false;
            qp.world.kickRequester(qp);
          }
        }
        qp.completeSend(w);
        state = psnCompare(pkt!.psn, qp.compPsn) >= 0 ? UPDATE_COMP : DONE;
        break;
      }
      case COMP_WQE: {
        const w = wqe!;
        if (pkt && w.state === WQE_PENDING) {
          if (psnCompare(w.last_psn, qp.compPsn) >= 0) {
            qp.compPsn = (w.last_psn + 1) & PSN_MASK;
            qp.compOpcode = -1;
          }
          if (qp.waitPsn) {
            qp.waitPsn = false;
            qp.world.kickRequester(qp);
          }
        }
        qp.completeSend(w);
        state = GET_WQE;
        break;
      }
      case UPDATE_COMP: {
        const p = pkt!;
        qp.compOpcode = p.mask & M_END ? -1 : p.opcode;
        if (psnCompare(p.psn, qp.compPsn) >= 0) qp.compPsn = (p.psn + 1) & PSN_MASK;
        if (qp.waitPsn) {
          qp.waitPsn = false;
          qp.world.kickRequester(qp);
        }
        state = DONE;
        break;
      }
      case DONE:
        return DONE;
      case EXIT:
        if (timeoutRetry && wqe) {
          state = ERROR_RETRY;
          break;
        }
        syncRetransTimer(qp);
        return EXIT;
      case ERROR_RETRY: {
        const w = wqe;
        if (!w || w.state === WQE_POSTED) return EXIT;
        if (qp.startedRetry && !timeoutRetry) return DONE;
        if (qp.compRetryCnt > 0) {
          if (qp.compRetryCnt !== 7) qp.compRetryCnt--;
          if (psnCompare(qp.reqPsn, qp.compPsn) > 0) {
            qp.device.counters[CNT_COMP_RETRY]++;
            qp.needRetry = true;
            qp.startedRetry = true;
            qp.world.kickRequester(qp);
          }
          return DONE;
        }
        qp.device.counters[CNT_RETRY_EXCEEDED]++;
        w.status = IBV_WC_RETRY_EXC_ERR;
        w.reason = {
          kind: "retries",
          cause: qp.retryCause ?? { kind: "no-answer", qpn: qp.attr.dest_qp_num },
          counter: "retry_cnt",
          value: qp.attr.retry_cnt,
        };
        state = ERROR;
        break;
      }
      case RNR_RETRY: {
        if (qp.compRnrRetry > 0) {
          if (qp.compRnrRetry !== 7) qp.compRnrRetry--;
          qp.needRetry = true;
          qp.waitForRnrTimer = true;
          const clock = qp.world.clock;
          clock.arm(qp.rnrTimer, timerFireAt(clock.now, rnrDelayJiffies(pkt!.syndrome & ~AETH_TYPE_MASK)));
          return EXIT;
        }
        qp.device.counters[CNT_RNR_RETRY_EXCEEDED]++;
        wqe!.status = IBV_WC_RNR_RETRY_EXC_ERR;
        wqe!.reason = {
          kind: "retries",
          cause: pkt?.reason ?? { kind: "rnr" },
          counter: "rnr_retry",
          value: qp.attr.rnr_retry,
        };
        state = ERROR;
        break;
      }
      case ERROR:
        // rxe warns when no status was set (a malformed response sequence); report it as a bad response.
        if (wqe!.status === 0) wqe!.status = IBV_WC_BAD_RESP_ERR;
        qp.completeSend(wqe!);
        qp.toError();
        return EXIT;
      default:
        return EXIT;
    }
  }
}

/**
 * The retransmit timer runs while sent PSNs are unacknowledged (rxe re-arms it on every
 * completer exit); with nothing outstanding it is stopped, which is what a spurious expiry
 * in rxe amounts to.
 */
export function syncRetransTimer(qp: SimQp): void {
  if (qp.qp_type !== IBV_QPT_RC) return;
  const clock = qp.world.clock;
  if (qp.reqState === QS_READY && qp.timeoutJiffies && qp.outstanding)
    clock.arm(qp.retransTimer, timerFireAt(clock.now, qp.timeoutJiffies));
  else if (!qp.outstanding || qp.reqState === QS_ERROR) clock.cancel(qp.retransTimer);
}

function checkAck(qp: SimQp, pkt: Packet, wqe: SendWqe): number {
  const mask = pkt.mask;
  // The sequence of READ responses.
  switch (qp.compOpcode) {
    case -1:
      if (!(mask & M_START)) return ERROR;
      break;
    case RC_READ_RESPONSE_FIRST:
    case RC_READ_RESPONSE_MIDDLE:
      if (pkt.opcode !== RC_READ_RESPONSE_MIDDLE && pkt.opcode !== RC_READ_RESPONSE_LAST) {
        if (
          (pkt.psn === wqe.first_psn && pkt.opcode === RC_READ_RESPONSE_FIRST) ||
          (wqe.first_psn === wqe.last_psn && pkt.opcode === RC_READ_RESPONSE_ONLY)
        )
          break;
        return ERROR;
      }
      break;
  }
  switch (pkt.opcode) {
    case RC_READ_RESPONSE_FIRST:
    case RC_READ_RESPONSE_LAST:
    case RC_READ_RESPONSE_ONLY:
      if ((pkt.syndrome & AETH_TYPE_MASK) !== AETH_ACK) return ERROR;
    // falls through
    case RC_READ_RESPONSE_MIDDLE:
      if (wqe.opcode !== IBV_WR_RDMA_READ) {
        wqe.status = IBV_WC_FATAL_ERR;
        return ERROR;
      }
      resetRetryCounters(qp);
      return READ;
    case RC_ATOMIC_ACKNOWLEDGE:
      if ((pkt.syndrome & AETH_TYPE_MASK) !== AETH_ACK) return ERROR;
      if (wqe.opcode !== IBV_WR_ATOMIC_CMP_AND_SWP && wqe.opcode !== IBV_WR_ATOMIC_FETCH_AND_ADD) return ERROR;
      resetRetryCounters(qp);
      return ATOMIC;
    case RC_ACKNOWLEDGE: {
      const syn = pkt.syndrome;
      switch (syn & AETH_TYPE_MASK) {
        case AETH_ACK:
          resetRetryCounters(qp);
          return WRITE_SEND;
        case AETH_RNR_NAK:
          qp.device.counters[CNT_RCV_RNR]++;
          return RNR_RETRY;
        case AETH_NAK:
          switch (syn) {
            case AETH_NAK_PSN_SEQ_ERROR:
              // A NAK implicitly acknowledges everything before its PSN.
              if (psnCompare(pkt.psn, qp.compPsn) > 0) {
                qp.device.counters[CNT_RCV_SEQ_ERR]++;
                qp.compPsn = pkt.psn;
                if (qp.waitPsn) {
                  qp.waitPsn = false;
                  qp.world.kickRequester(qp);
                }
              }
              return ERROR_RETRY;
            case AETH_NAK_INVALID_REQ:
              wqe.status = IBV_WC_REM_INV_REQ_ERR;
              wqe.reason = pkt.reason;
              return ERROR;
            case AETH_NAK_REM_ACC_ERR:
              wqe.status = IBV_WC_REM_ACCESS_ERR;
              wqe.reason = pkt.reason;
              return ERROR;
            default:
              wqe.status = IBV_WC_REM_OP_ERR;
              wqe.reason = pkt.reason;
              return ERROR;
          }
      }
      return ERROR;
    }
  }
  return ERROR;
}
