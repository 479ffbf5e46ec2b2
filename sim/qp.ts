/**
 * struct ibv_qp: creation with rxe's capacity rules (RXE-FACTS.md §3.1), posting (the
 * userspace provider's checks, then the kernel doorbell), query (§3), destroy, and the
 * per-QP state the requester, responder and completer share (named after rxe_qp's fields).
 */
import {
  IBV_EVENT_SQ_DRAINED,
  IBV_QPS_ERR,
  IBV_QPS_RESET,
  IBV_QPT_RAW_PACKET,
  IBV_QPT_RC,
  IBV_QPT_UC,
  IBV_QPT_UD,
  IBV_QPT_XRC_RECV,
  IBV_QPT_XRC_SEND,
  IBV_SEND_INLINE,
  IBV_SEND_SIGNALED,
  IBV_WR_ATOMIC_CMP_AND_SWP,
  IBV_WR_ATOMIC_FETCH_AND_ADD,
  IBV_WR_BIND_MW,
  IBV_WR_RDMA_READ,
  IBV_WR_RDMA_WRITE,
  IBV_WR_RDMA_WRITE_WITH_IMM,
  IBV_WR_SEND,
  IBV_WR_SEND_WITH_IMM,
  IBV_WC_WR_FLUSH_ERR,
  IBV_WC_SEND,
  IBV_WC_RDMA_WRITE,
  IBV_WC_RDMA_READ,
  IBV_WC_COMP_SWAP,
  IBV_WC_FETCH_ADD,
  IBV_WC_WITH_IMM,
  IBV_WC_SUCCESS,
} from "../verbs/constants.js";
import type { Qp } from "../verbs/backend.js";
import { argError, fail } from "../verbs/errors.js";
import type { AhAttr, QpAttrInput, QpCap, QpInitAttr, QpQuery, RecvWr, SendWr, Wc } from "../verbs/types.js";
import type { WcReason } from "../verbs/wc-reason.js";
import { SimAh } from "./ah.js";
import { emptyAv } from "./av.js";
import { alive, bigintOf, int, obj, optInt, typeErr } from "./check.js";
import { Timer, timerFireAt } from "./clock.js";
import { CNT_RDMA_SEND } from "./counters.js";
import { SimCq } from "./cq.js";
import type { SimContext } from "./context.js";
import type { SimDevice } from "./device.js";
import { gidEquals } from "./gid.js";
import { modifyQp } from "./modify.js";
import { SimMr } from "./mr.js";
import type { SimPd } from "./pd.js";
import { psnCompare } from "./packets.js";
import { completer } from "./completer.js";
import { noteReason } from "./explain.js";
import { respFlush } from "./responder.js";
import { RecvWqe, Ring, SendWqe, WR_ATOMIC, WR_INLINE, WR_READ, WR_SEND, WR_WRITE } from "./wqe.js";
import type { SimWorld } from "./world.js";
import { because } from "../verbs/verb-failure.js";

/** rxe's internal requester/responder states (enum rxe_qp_state), in its order. */
export const QS_RESET = 0;
export const QS_INIT = 1;
export const QS_READY = 2;
export const QS_DRAIN = 3;
export const QS_DRAINED = 4;
export const QS_ERROR = 5;

const MAX_WR = 1048576;
const MAX_SGE = 32;
const MAX_INLINE = 512;
/** rxe's RXE_MAX_UNACKED_PSNS: the requester's window. */
export const MAX_UNACKED_PSNS = 128;
/** rxe's RXE_INFLIGHT_SKBS_PER_QP_HIGH and _LOW (rxe_param.h): the requester stops with more than HIGH of its skbs not yet freed, and goes on once fewer than LOW are left. */
export const IN_FLIGHT_HIGH = 64;
export const IN_FLIGHT_LOW = 16;
const IN_FLIGHT_RING = 128;

/** A READ or atomic the responder answered, kept for replays (rxe's struct resp_res). */
export interface RespRes {
  isRead: boolean;
  first_psn: number;
  last_psn: number;
  va_org: number;
  length: number;
  rkey: number;
  mr: SimMr | null;
  orig: bigint;
}

/** The attribute values rxe keeps (qp->attr), except the live PSNs and the caps. */
export interface StoredAttr {
  qp_state: number;
  cur_qp_state: number;
  path_mtu: number;
  path_mig_state: number;
  qkey: number;
  dest_qp_num: number;
  qp_access_flags: number;
  ah_attr: AhAttr;
  alt_ah_attr: AhAttr;
  pkey_index: number;
  alt_pkey_index: number;
  en_sqd_async_notify: number;
  max_rd_atomic: number;
  max_dest_rd_atomic: number;
  min_rnr_timer: number;
  port_num: number;
  timeout: number;
  retry_cnt: number;
  rnr_retry: number;
  alt_port_num: number;
  alt_timeout: number;
}

const WC_OPCODE: Record<number, number> = {
  [IBV_WR_RDMA_WRITE]: IBV_WC_RDMA_WRITE,
  [IBV_WR_RDMA_WRITE_WITH_IMM]: IBV_WC_RDMA_WRITE,
  [IBV_WR_SEND]: IBV_WC_SEND,
  [IBV_WR_SEND_WITH_IMM]: IBV_WC_SEND,
  [IBV_WR_RDMA_READ]: IBV_WC_RDMA_READ,
  [IBV_WR_ATOMIC_CMP_AND_SWP]: IBV_WC_COMP_SWAP,
  [IBV_WR_ATOMIC_FETCH_AND_ADD]: IBV_WC_FETCH_ADD,
};

/** rxe's wr_opcode_mask: which class of work an opcode is on this QP type (0: not valid here). */
function wrOpcodeMask(opcode: number, type: number): number {
  switch (opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      return type === IBV_QPT_UD ? 0 : WR_INLINE | WR_WRITE;
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
      return WR_INLINE | WR_SEND;
    case IBV_WR_RDMA_READ:
      return type === IBV_QPT_RC ? WR_READ : 0;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      return type === IBV_QPT_RC ? WR_ATOMIC : 0;
  }
  return 0;
}

export function makeWc(
  wr_id: number,
  status: number,
  opcode: number,
  byte_len: number,
  imm_data: number,
  qp_num: number,
  src_qp: number,
  wc_flags: number,
): Wc {
  return {
    wr_id,
    status,
    opcode,
    vendor_err: 0,
    byte_len,
    imm_data,
    qp_num,
    src_qp,
    wc_flags,
    pkey_index: 0,
    slid: 0,
    sl: 0,
    dlid_path_bits: 0,
  };
}

export class SimQp implements Qp {
  destroyed = false;
  readonly world: SimWorld;
  readonly device: SimDevice;
  readonly context: SimContext;
  cap: QpCap;
  readonly sq_sig_all: number;
  readonly qp_context: unknown;
  readonly sq: Ring<SendWqe>;
  readonly rq: Ring<RecvWqe>;
  readonly maxSendSge: number;
  readonly maxInline: number;
  readonly maxRecvSge: number;

  attr: StoredAttr;
  /** The state libibverbs last set (ibqp->state): post_recv refuses RESET by it. */
  libState: number = IBV_QPS_RESET;
  mtu = 256;
  sgidBytes: Uint8Array = new Uint8Array(16);
  dgidBytes: Uint8Array = new Uint8Array(16);
  // The last GID arrays pathMatches found equal (see there).
  private okPktSgid: Uint8Array | null = null;
  private okPktDgid: Uint8Array | null = null;
  private okSgid: Uint8Array | null = null;
  private okDgid: Uint8Array | null = null;
  destDev: SimDevice | null = null;
  /** The QP this one's packets last reached (world.destQp's cache). */
  lastDestQp: SimQp | null = null;
  /** qp_timeout_jiffies: the local ACK timeout in jiffies, 0 for none. */
  timeoutJiffies = 0;

  // Requester (qp->req)
  reqState = QS_RESET;
  /** The requester is running (requester.ts): a nested kick waits for it, as rxe's task does. */
  reqActive = false;
  reqPsn = 0;
  reqWqeIndex = 0;
  reqOpcode = -1;
  noackPkts = 0;
  rdAtomic = 0;
  needRdAtomic = false;
  needRetry = false;
  waitForRnrTimer = false;
  waitPsn = false;
  reqQueued = false;
  /**
   * The requester's run is the posting process's (rxe_post_send runs it inline), paced by its
   * link while the lab link has faults (requester.ts); false once that run stops.
   */
  reqPaced = false;
  /**
   * rxe's qp->skb_out for this QP's requests between the two devices: when each one not yet
   * received arrives (ns, oldest first; a veth frees its skb in the receiver's ip_rcv, and a
   * dropped one at once, so only queued packets count). A ring, see inFlight().
   */
  // One entry per record (a packet, or a train's packets): run r's packet k arrives at
  // outFirst[r] + k * outGap[r], its last (k = outN[r] - 1) at outLast[r], as the wire timed them.
  private readonly outFirst = new Float64Array(IN_FLIGHT_RING);
  private readonly outGap = new Float64Array(IN_FLIGHT_RING);
  private readonly outLast = new Float64Array(IN_FLIGHT_RING);
  private readonly outN = new Int32Array(IN_FLIGHT_RING);
  /** The oldest run, how many runs there are, and how many of the oldest run's packets arrived. */
  private outHead = 0;
  private outRuns = 0;
  private outHeadDone = 0;
  /** Packets in flight (in all runs). */
  private outCount = 0;
  /** The instant (ns) inFlight last counted at. */
  private outAtNs = -1;
  /** need_req_skb: the requester stopped with too many in flight; this timer runs it again. */
  readonly skbTimer: Timer;
  /**
   * The paced requester (requester.ts, a wire profile's `paced`) waits for its link to be
   * free before building the next packet: this timer runs it again then.
   */
  readonly paceTimer: Timer;

  // Completer (qp->comp)
  compPsn = 0;
  compOpcode = -1;
  compRetryCnt = 0;
  compRnrRetry = 0;
  startedRetry = false;
  readonly retransTimer: Timer;
  readonly rnrTimer: Timer;

  // Responder (qp->resp)
  respState = QS_RESET;
  respPsn = 0;
  respAckPsn = 0;
  respOpcode = -1;
  respMsn = 0;
  sentPsnNak = false;
  dropMsg = false;
  gotoError = false;
  respStatus = 0;
  respSyndrome = 0;
  /** Why the responder refused the request it is handling (sim/explain.ts), if it did. */
  respReason: WcReason | undefined = undefined;
  /** What the requester's last unanswered tries met (a drop, a PSN NAK), for RETRY_EXC_ERR's reason. */
  retryCause: WcReason | undefined = undefined;
  respWqe: RecvWqe | null = null;
  respVa = 0;
  respRkey = 0;
  respResid = 0;
  respLength = 0;
  respMr: SimMr | null = null;
  respRes: RespRes | null = null;
  respResources: RespRes[] = [];
  respAtomicOrig = 0n;
  /** For READ replies in progress: the next response PSN, va and bytes left. */
  readCurPsn = 0;
  readVa = 0;
  readResid = 0;
  ipId = 0;

  constructor(
    readonly pd: SimPd,
    readonly qp_num: number,
    readonly qp_type: number,
    readonly send_cq: SimCq,
    readonly recv_cq: SimCq,
    requested: QpCap,
    sqSigAll: number,
    qpContext: unknown,
  ) {
    this.context = pd.context;
    this.world = pd.context.world;
    this.device = pd.context.dev;
    this.sq_sig_all = sqSigAll ? 1 : 0;
    this.qp_context = qpContext;
    const profile = this.world.profile;
    const caps = profile.sendCaps(requested);
    this.maxSendSge = caps.maxSendSge;
    this.maxInline = caps.maxInline;
    // rxe writes the coupled SGE/inline sizes back but leaves the WR depths as requested
    // (measured in the lab VM: {sge 1, inline 0} comes back with max_inline_data 16).
    this.cap = { ...requested, max_send_sge: this.maxSendSge, max_inline_data: this.maxInline };
    this.maxRecvSge = requested.max_recv_sge;
    this.sq = new Ring(profile.wqDepth(requested.max_send_wr), () => new SendWqe(this.maxSendSge));
    this.rq = new Ring(profile.wqDepth(requested.max_recv_wr), () => new RecvWqe(this.maxRecvSge));
    // rxe leaves the depths as asked in what ibv_create_qp writes back; other devices write the real ones.
    if (profile.writesBackDepths)
      this.cap = { ...this.cap, max_send_wr: this.sq.capacity, max_recv_wr: this.rq.capacity };
    this.attr = {
      qp_state: IBV_QPS_RESET,
      cur_qp_state: IBV_QPS_RESET,
      path_mtu: 1,
      path_mig_state: 0,
      qkey: 0,
      dest_qp_num: 0,
      qp_access_flags: 0,
      ah_attr: emptyAv(),
      alt_ah_attr: emptyAv(),
      pkey_index: 0,
      alt_pkey_index: 0,
      en_sqd_async_notify: 0,
      max_rd_atomic: 0,
      max_dest_rd_atomic: 0,
      min_rnr_timer: 0,
      port_num: 0,
      timeout: 0,
      retry_cnt: 0,
      rnr_retry: 0,
      alt_port_num: 0,
      alt_timeout: 0,
    };
    this.retransTimer = new Timer(() => {
      if (!this.destroyed) {
        completer(this, null, true);
        this.world.run();
      }
    });
    this.skbTimer = new Timer(() => {
      if (!this.destroyed) {
        this.world.kickRequester(this);
        this.world.run();
      }
    });
    // It touches only this QP's requester (which queues its packets behind those in flight).
    this.skbTimer.scope = this.device;
    this.paceTimer = new Timer(() => {
      if (!this.destroyed) {
        this.world.kickRequester(this);
        this.world.run();
      }
    });
    this.rnrTimer = new Timer(() => {
      if (!this.destroyed) {
        this.waitForRnrTimer = false;
        this.world.kickRequester(this);
        this.world.run();
      }
    });
  }

  /** skb_out now: this QP's requests on the wire between the devices, not yet received. */
  inFlight(nowNs: number): number {
    // Asked again at the same instant (the requester asks before each packet or train): the
    // same answer, as nothing sent since arrives by now.
    if (nowNs === this.outAtNs) return this.outCount;
    this.outAtNs = nowNs;
    while (this.outRuns > 0) {
      const r = this.outHead;
      const n = this.outN[r];
      if (this.outLast[r] <= nowNs) {
        this.outCount -= n - this.outHeadDone;
        this.outHeadDone = 0;
        this.outHead = (r + 1) % IN_FLIGHT_RING;
        this.outRuns--;
        continue;
      }
      // The last packet has not arrived: those before it that have (the same comparisons as
      // packet by packet, from an estimate; arrivals grow with k).
      const first = this.outFirst[r];
      const gap = this.outGap[r];
      let k = this.outHeadDone;
      if (n > 1 && first <= nowNs) {
        const guess = Math.floor((nowNs - first) / gap) + 1;
        if (guess > k) k = guess < n - 1 ? guess : n - 1;
        while (k > this.outHeadDone && first + (k - 1) * gap > nowNs) k--;
        while (k < n - 1 && first + k * gap <= nowNs) k++;
      }
      this.outCount -= k - this.outHeadDone;
      this.outHeadDone = k;
      break;
    }
    return this.outCount;
  }

  /** One more request on the wire, arriving at `atNs` (after all earlier ones: one link, FIFO). */
  sentAt(atNs: number): void {
    this.sentTrain(atNs, 0, 1, atNs);
  }

  /** `n` more requests on the wire (a train), arriving at `firstNs` + k * `gapNs`, the last at `lastNs`. */
  sentTrain(firstNs: number, gapNs: number, n: number, lastNs: number): void {
    // Cannot happen: the requester stops at 65 packets in flight, and each run holds one or more.
    if (this.outRuns === IN_FLIGHT_RING || this.outCount + n > IN_FLIGHT_RING) return;
    const r = (this.outHead + this.outRuns) % IN_FLIGHT_RING;
    this.outFirst[r] = firstNs;
    this.outGap[r] = gapNs;
    this.outLast[r] = lastNs;
    this.outN[r] = n;
    this.outRuns++;
    this.outCount += n;
  }

  /**
   * The requester stopped with more than RXE_INFLIGHT_SKBS_PER_QP_HIGH in flight: rxe's skb
   * destructor runs it again once fewer than RXE_INFLIGHT_SKBS_PER_QP_LOW are left, i.e. when
   * the one that leaves LOW - 1 arrives.
   */
  waitForSkbs(): void {
    let j = this.outCount - IN_FLIGHT_LOW;
    if (j < 0) return;
    // Packet j of those in flight (oldest first): find its run.
    let r = this.outHead;
    let k = j + this.outHeadDone;
    for (let i = 0; i < this.outRuns && k >= this.outN[r]; i++) {
      k -= this.outN[r];
      r = (r + 1) % IN_FLIGHT_RING;
    }
    j = k;
    const at = j === this.outN[r] - 1 ? this.outLast[r] : this.outFirst[r] + j * this.outGap[r];
    this.world.clock.arm(this.skbTimer, at / 1e6);
  }

  get respReady(): boolean {
    return this.respState === QS_READY;
  }
  get reqReadyForResponses(): boolean {
    return this.reqState >= QS_READY && this.reqState <= QS_DRAINED;
  }

  /**
   * rxe_rcv's address check for a connected QP: the packet's dgid is this QP's sgid and its
   * sgid this QP's dgid. GID arrays are never changed in place (a new path brings new
   * arrays), and every packet from the peer QP carries the same two arrays, so once those
   * four arrays matched they match again: the 32-byte comparison runs only when one changes.
   */
  pathMatches(pktSgid: Uint8Array, pktDgid: Uint8Array): boolean {
    if (
      pktSgid === this.okPktSgid &&
      pktDgid === this.okPktDgid &&
      this.sgidBytes === this.okSgid &&
      this.dgidBytes === this.okDgid
    )
      return true;
    if (!gidEquals(pktDgid, this.sgidBytes) || !gidEquals(pktSgid, this.dgidBytes)) return false;
    this.okPktSgid = pktSgid;
    this.okPktDgid = pktDgid;
    this.okSgid = this.sgidBytes;
    this.okDgid = this.dgidBytes;
    return true;
  }

  /** The QP type a BTH opcode belongs to. */
  typeOfOpcode(opcode: number): number {
    if (opcode < 0x20) return IBV_QPT_RC;
    if (opcode < 0x40) return IBV_QPT_UC;
    if (opcode >= 0x60 && opcode < 0x80) return IBV_QPT_UD;
    return -1;
  }

  /** The payload MTU in bytes: path MTU for RC/UC, the port's for UD (rxe's get_mtu). */
  get pmtu(): number {
    return this.qp_type === IBV_QPT_UD ? 128 << this.device.activeMtu : this.mtu;
  }

  // ---- completions ----

  /** rxe_comp.c do_complete: a CQE for signaled or failed WQEs; advances the SQ. */
  completeSend(wqe: SendWqe): void {
    const st = wqe.status;
    if (this.sq_sig_all || wqe.send_flags & IBV_SEND_SIGNALED || st !== IBV_WC_SUCCESS) {
      const op = wqe.opcode;
      const wc =
        st === IBV_WC_SUCCESS
          ? makeWc(
              wqe.wr_id,
              st,
              WC_OPCODE[op] ?? 0xff,
              wqe.dma.length,
              0,
              this.qp_num,
              0,
              op === IBV_WR_SEND_WITH_IMM || op === IBV_WR_RDMA_WRITE_WITH_IMM ? IBV_WC_WITH_IMM : 0,
            )
          : makeWc(wqe.wr_id, st, 0, 0, 0, this.qp_num, 0, 0);
      if (st !== IBV_WC_SUCCESS && st !== IBV_WC_WR_FLUSH_ERR) noteReason(wc, wqe.reason);
      this.sq.pop();
      this.send_cq.push(wc, false);
    } else {
      this.sq.pop();
    }
    if (wqe.opcode === IBV_WR_SEND || wqe.opcode === IBV_WR_SEND_WITH_IMM) this.device.counters[CNT_RDMA_SEND]++;
    if (this.reqState === QS_DRAIN) this.world.kickRequester(this);
  }

  /** SQ_DRAINED, which rxe raises on every drain (RXE-FACTS.md §2.3). */
  drained(): void {
    this.reqState = QS_DRAINED;
    this.context.pushAsync({ event_type: IBV_EVENT_SQ_DRAINED, qp_num: this.qp_num });
  }

  /** rxe_qp_error: both sides to ERROR, flush receives, then sends. */
  toError(): void {
    this.enterError();
    this.flushAll();
  }

  /**
   * The responder's own move to ERROR: the flushes run once the NAK already queued has been
   * received, as rxe's tasks do — measured on rxe, a shared CQ shows the requester's
   * REM_ACCESS_ERR before the responder's flushes.
   */
  toErrorAfterNak(): void {
    this.enterError();
    this.world.afterArrival(this.world.lastQueued() !== null, () => this.flushAll());
  }

  private enterError(): void {
    this.reqState = QS_ERROR;
    this.respState = QS_ERROR;
    this.attr.qp_state = IBV_QPS_ERR;
    this.world.clock.cancel(this.retransTimer);
    this.world.clock.cancel(this.rnrTimer);
    this.world.clock.cancel(this.skbTimer);
    this.world.clock.cancel(this.paceTimer);
    this.waitForRnrTimer = false;
  }

  private flushAll(): void {
    respFlush(this);
    this.flushSq();
  }

  /** rxe_drain_resp_pkts(notify): every outstanding send WQE completes with WR_FLUSH_ERR. */
  flushSq(): void {
    for (let w = this.sq.head(); w; w = this.sq.head()) {
      w.status = IBV_WC_WR_FLUSH_ERR;
      this.completeSend(w);
    }
    this.reqWqeIndex = this.sq.prod;
  }

  /** rxe_qp_reset: queues emptied without completions, protocol state cleared, attributes kept. */
  reset(): void {
    this.reqState = QS_RESET;
    this.respState = QS_RESET;
    this.world.clock.cancel(this.retransTimer);
    this.world.clock.cancel(this.rnrTimer);
    this.world.clock.cancel(this.skbTimer);
    this.world.clock.cancel(this.paceTimer);
    this.sq.clear();
    this.rq.clear();
    this.reqWqeIndex = this.sq.prod;
    this.reqOpcode = -1;
    this.needRetry = false;
    this.reqPaced = false;
    this.needRdAtomic = false;
    this.waitForRnrTimer = false;
    this.waitPsn = false;
    this.noackPkts = 0;
    this.rdAtomic = this.attr.max_rd_atomic;
    this.compOpcode = -1;
    this.startedRetry = false;
    this.respMsn = 0;
    this.respOpcode = -1;
    this.dropMsg = false;
    this.gotoError = false;
    this.sentPsnNak = false;
    this.respWqe = null;
    this.respMr = null;
    this.respRes = null;
    this.respResources = [];
  }

  /** Arms the retransmit timer if it is not pending (rxe_req.c update_state). */
  armRetransIfIdle(): void {
    if (this.timeoutJiffies && !this.retransTimer.armed)
      this.world.clock.arm(this.retransTimer, timerFireAt(this.world.clock.now, this.timeoutJiffies));
  }

  /** Is anything sent and not yet acknowledged? */
  get outstanding(): boolean {
    return psnCompare(this.reqPsn, this.compPsn) > 0;
  }

  // ---- verbs ----

  modify(attr: QpAttrInput, mask: number): void {
    alive("ibv_modify_qp", "QP", this);
    modifyQp(this, attr, mask);
    this.world.run();
  }

  query(mask?: number): QpQuery {
    alive("ibv_query_qp", "QP", this);
    if (mask !== undefined) int("ibv_query_qp", "attr_mask", mask);
    const a = this.attr;
    const cap: QpCap = {
      max_send_wr: this.sq.capacity,
      max_recv_wr: this.rq.capacity,
      max_send_sge: this.maxSendSge,
      max_recv_sge: this.maxRecvSge,
      max_inline_data: this.maxInline,
    };
    const av = (x: AhAttr): AhAttr => ({ ...x, grh: { ...x.grh } });
    return {
      attr: {
        qp_state: a.qp_state,
        cur_qp_state: a.cur_qp_state,
        path_mtu: a.path_mtu,
        path_mig_state: a.path_mig_state,
        qkey: a.qkey,
        rq_psn: this.respPsn,
        sq_psn: this.reqPsn,
        dest_qp_num: a.dest_qp_num,
        qp_access_flags: a.qp_access_flags,
        cap: { ...cap },
        ah_attr: av(a.ah_attr),
        alt_ah_attr: av(a.alt_ah_attr),
        pkey_index: a.pkey_index,
        alt_pkey_index: a.alt_pkey_index,
        // rxe does not write these two (RXE-FACTS.md §3); a zeroed struct reads 0.
        en_sqd_async_notify: 0,
        sq_draining: this.reqState === QS_DRAIN ? 1 : 0,
        max_rd_atomic: a.max_rd_atomic,
        max_dest_rd_atomic: a.max_dest_rd_atomic,
        min_rnr_timer: a.min_rnr_timer,
        port_num: a.port_num,
        timeout: a.timeout,
        retry_cnt: a.retry_cnt,
        rnr_retry: a.rnr_retry,
        alt_port_num: a.alt_port_num,
        alt_timeout: a.alt_timeout,
        rate_limit: 0,
      },
      init_attr: { qp_type: this.qp_type, sq_sig_all: this.sq_sig_all, cap },
    };
  }

  postSend(wr: SendWr | SendWr[]): void {
    const verb = "ibv_post_send";
    alive(verb, "QP", this);
    const list = Array.isArray(wr) ? wr : [wr];
    for (let i = 0; i < list.length; i++) checkSendWrTypes(verb, list[i], i);
    if (list.length === 0) fail(verb, "EINVAL", because({ kind: "wr-list-empty" }, { attribute: "wr" }));
    let error: unknown = null;
    for (let i = 0; i < list.length; i++) {
      try {
        this.postOneSend(verb, list[i], i);
      } catch (e) {
        error = e;
        break;
      }
    }
    // The doorbell (the kernel's rxe_post_send) runs for what was queued, even after an error.
    if (this.reqState < QS_READY) {
      if (error) throw error;
      fail(verb, "EINVAL", because({ kind: "sq-not-ready", state: this.attr.qp_state }, { attribute: "qp_state" }));
    }
    this.reqPaced = true;
    this.world.kickRequester(this);
    this.world.run();
    if (error) throw error;
  }

  private postOneSend(verb: string, w: SendWr, i: number): void {
    const sg = w.sg_list ?? [];
    const opcode = w.opcode;
    const flags = w.send_flags ?? 0;
    if (sg.length > this.maxSendSge)
      fail(
        verb,
        "EINVAL",
        because(
          { kind: "too-many-sge", queue: "send", i, n: sg.length, max: this.maxSendSge },
          { attribute: `wr[${i}].num_sge`, badWrIndex: i },
        ),
      );
    let length = 0;
    for (let k = 0; k < sg.length; k++) length = (length + sg[k].length) >>> 0;
    if (opcode === IBV_WR_ATOMIC_CMP_AND_SWP || opcode === IBV_WR_ATOMIC_FETCH_AND_ADD) {
      const ra = w.atomic?.remote_addr ?? 0;
      if (length < 8)
        fail(verb, "EINVAL", because({ kind: "atomic-buffer", i }, { attribute: `wr[${i}].sg_list`, badWrIndex: i }));
      if (ra % 8 !== 0)
        fail(
          verb,
          "EINVAL",
          because(
            { kind: "atomic-unaligned", i, addr: ra },
            { attribute: `wr[${i}].wr.atomic.remote_addr`, badWrIndex: i },
          ),
        );
    }
    if (flags & IBV_SEND_INLINE && length > this.maxInline)
      fail(
        verb,
        "EINVAL",
        because(
          { kind: "inline-too-long", i, bytes: length, max: this.maxInline },
          { attribute: `wr[${i}].send_flags`, badWrIndex: i },
        ),
      );
    if (opcode === IBV_WR_BIND_MW)
      fail(verb, "EINVAL", because({ kind: "no-mw" }, { attribute: `wr[${i}].opcode`, badWrIndex: i }));
    let ah: SimAh | null = null;
    if (this.qp_type === IBV_QPT_UD) {
      const u = w.ud;
      if (!u || !(u.ah instanceof SimAh))
        fail(
          verb,
          "EINVAL",
          because({ kind: "ud-ah", i, gone: false }, { attribute: `wr[${i}].wr.ud.ah`, badWrIndex: i }),
        );
      ah = u.ah;
      if (ah.destroyed || ah.pd.context.dev !== this.device)
        fail(
          verb,
          "EINVAL",
          because({ kind: "ud-ah", i, gone: true }, { attribute: `wr[${i}].wr.ud.ah`, badWrIndex: i }),
        );
    }
    // init_send_wqe: copy the WR (and inline bytes) into the ring slot.
    if (this.sq.full)
      fail(
        verb,
        "ENOMEM",
        because(
          { kind: "queue-full", queue: "send", capacity: this.sq.capacity },
          { attribute: "max_send_wr", badWrIndex: i },
        ),
      );
    const wqe = this.sq.producerSlot();
    wqe.wr_id = w.wr_id ?? 0;
    wqe.opcode = opcode;
    wqe.send_flags = flags;
    wqe.wrMask = wrOpcodeMask(opcode, this.qp_type);
    wqe.imm_data = (w.imm_data ?? 0) >>> 0;
    wqe.state = 0;
    wqe.status = IBV_WC_SUCCESS;
    wqe.reason = undefined;
    wqe.hasRdAtomic = false;
    wqe.ah = ah;
    if (ah) {
      wqe.remote_qpn = w.ud!.remote_qpn >>> 0;
      wqe.remote_qkey = w.ud!.remote_qkey >>> 0;
    }
    if (w.atomic && (opcode === IBV_WR_ATOMIC_CMP_AND_SWP || opcode === IBV_WR_ATOMIC_FETCH_AND_ADD)) {
      wqe.remote_addr = w.atomic.remote_addr;
      wqe.rkey = w.atomic.rkey >>> 0;
      wqe.compare_add = BigInt.asUintN(64, BigInt(w.atomic.compare_add));
      wqe.swap = BigInt.asUintN(64, BigInt(w.atomic.swap ?? 0n));
    } else {
      const rdma = w.rdma;
      wqe.remote_addr = rdma ? rdma.remote_addr : 0;
      wqe.rkey = rdma ? rdma.rkey >>> 0 : 0;
    }
    wqe.iova = wqe.remote_addr;
    const dma = wqe.dma;
    dma.numSge = sg.length;
    for (let k = 0; k < sg.length; k++) {
      dma.addr[k] = sg[k].addr;
      dma.len[k] = sg[k].length >>> 0;
      dma.lkey[k] = sg[k].lkey >>> 0;
    }
    dma.length = length;
    dma.reset();
    wqe.inline = null;
    if (flags & IBV_SEND_INLINE && wqe.wrMask & WR_INLINE) {
      // The provider copies inline bytes from process memory at post time; lkeys are not used.
      const data = new Uint8Array(length);
      let off = 0;
      for (let k = 0; k < sg.length; k++) {
        const s = sg[k];
        const mr = this.findMemory(s.addr, s.length);
        if (!mr)
          fail(
            verb,
            "EFAULT",
            because(
              { kind: "inline-unregistered", i, k, addr: s.addr },
              { attribute: `wr[${i}].sg_list[${k}].addr`, badWrIndex: i },
            ),
          );
        data.set(mr.bytes.subarray(s.addr - mr.addr, s.addr - mr.addr + s.length), off);
        off += s.length;
      }
      wqe.inline = data;
    }
    this.sq.advance();
  }

  /** The live MR of this device whose bytes contain [addr, addr+len) (for inline data). */
  private findMemory(addr: number, len: number): SimMr | null {
    for (const mr of this.device.mrs.values())
      if (addr >= mr.addr && addr + len <= mr.addr + mr.bytes.length) return mr;
    return null;
  }

  postRecv(wr: RecvWr | RecvWr[]): void {
    const verb = "ibv_post_recv";
    alive(verb, "QP", this);
    const list = Array.isArray(wr) ? wr : [wr];
    for (let i = 0; i < list.length; i++) checkRecvWrTypes(verb, list[i], i);
    if (list.length === 0) fail(verb, "EINVAL", because({ kind: "wr-list-empty" }, { attribute: "wr" }));
    if (this.libState === IBV_QPS_RESET)
      fail(verb, "EINVAL", because({ kind: "recv-in-reset" }, { attribute: "qp_state", badWrIndex: 0 }));
    for (let i = 0; i < list.length; i++) {
      const w = list[i];
      if (this.rq.full)
        fail(
          verb,
          "ENOMEM",
          because(
            { kind: "queue-full", queue: "recv", capacity: this.rq.capacity },
            { attribute: "max_recv_wr", badWrIndex: i },
          ),
        );
      const sg = w.sg_list ?? [];
      if (sg.length > this.maxRecvSge)
        fail(
          verb,
          "EINVAL",
          because(
            { kind: "too-many-sge", queue: "recv", i, n: sg.length, max: this.maxRecvSge },
            { attribute: `wr[${i}].num_sge`, badWrIndex: i },
          ),
        );
      const wqe = this.rq.producerSlot();
      wqe.wr_id = w.wr_id ?? 0;
      const dma = wqe.dma;
      dma.numSge = sg.length;
      let length = 0;
      for (let k = 0; k < sg.length; k++) {
        dma.addr[k] = sg[k].addr;
        dma.len[k] = sg[k].length >>> 0;
        dma.lkey[k] = sg[k].lkey >>> 0;
        length += dma.len[k];
      }
      dma.length = length;
      dma.reset();
      this.rq.advance();
    }
  }

  destroy(): void {
    alive("ibv_destroy_qp", "QP", this);
    // ib_uverbs refuses a destroy while the QP is attached to a multicast group (RXE-FACTS §10.5).
    if (this.world.mcast.attachments(this) > 0)
      fail("ibv_destroy_qp", "EBUSY", because({ kind: "qp-in-mcast" }, { attribute: "qp" }));
    this.destroyed = true;
    this.context.dropAsync((ev) => ev.qp_num === this.qp_num);
    this.world.clock.cancel(this.retransTimer);
    this.world.clock.cancel(this.rnrTimer);
    this.world.clock.cancel(this.skbTimer);
    this.world.clock.cancel(this.paceTimer);
    this.device.qps.delete(this.qp_num);
    this.send_cq.qpRefs--;
    this.recv_cq.qpRefs--;
    this.pd.qpCount--;
  }
}

export function stateName(s: number): string {
  return ["RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"][s] ?? String(s);
}

function sgeOk(s: unknown): boolean {
  const o = s as { addr: unknown; length: unknown; lkey: unknown } | null;
  return (
    typeof o === "object" &&
    o !== null &&
    Number.isInteger(o.addr) &&
    Number.isInteger(o.length) &&
    Number.isInteger(o.lkey)
  );
}

function checkSge(verb: string, s: unknown, where: string): void {
  const x = obj(verb, where, s);
  int(verb, `${where}.addr`, x.addr);
  int(verb, `${where}.length`, x.length);
  int(verb, `${where}.lkey`, x.lkey);
}

const isIntOrUndef = (v: unknown) => v === undefined || Number.isInteger(v);

/** The common, well-typed send WR, checked without building any strings (the hot path). */
function sendWrOk(w: unknown): boolean {
  if (typeof w !== "object" || w === null) return false;
  const o = w as SendWr;
  if (!(o.wr_id === undefined || typeof o.wr_id === "number")) return false;
  if (!Number.isInteger(o.opcode) || !isIntOrUndef(o.send_flags) || !isIntOrUndef(o.imm_data)) return false;
  const sg = o.sg_list;
  if (sg !== undefined) {
    if (!Array.isArray(sg)) return false;
    for (let k = 0; k < sg.length; k++) if (!sgeOk(sg[k])) return false;
  }
  return o.atomic === undefined && o.ud === undefined && (o.rdma === undefined || rdmaOk(o.rdma));
}

function rdmaOk(r: unknown): boolean {
  const o = r as { remote_addr: unknown; rkey: unknown } | null;
  return typeof o === "object" && o !== null && Number.isInteger(o.remote_addr) && Number.isInteger(o.rkey);
}

function checkSendWrTypes(verb: string, w: unknown, i: number): void {
  if (sendWrOk(w)) return;
  const o = obj(verb, `wr[${i}]`, w);
  if (o.wr_id !== undefined && typeof o.wr_id !== "number") throw typeErr(verb, `wr[${i}].wr_id`, "number", o.wr_id);
  int(verb, `wr[${i}].opcode`, o.opcode);
  optInt(verb, `wr[${i}].send_flags`, o.send_flags, 0);
  optInt(verb, `wr[${i}].imm_data`, o.imm_data, 0);
  if (o.sg_list !== undefined) {
    if (!Array.isArray(o.sg_list)) throw typeErr(verb, `wr[${i}].sg_list`, "array", o.sg_list);
    for (let k = 0; k < o.sg_list.length; k++) checkSge(verb, o.sg_list[k], `wr[${i}].sg_list[${k}]`);
  }
  if (o.rdma !== undefined) {
    const r = obj(verb, `wr[${i}].rdma`, o.rdma);
    int(verb, `wr[${i}].rdma.remote_addr`, r.remote_addr);
    int(verb, `wr[${i}].rdma.rkey`, r.rkey);
  }
  if (o.atomic !== undefined) {
    const a = obj(verb, `wr[${i}].atomic`, o.atomic);
    int(verb, `wr[${i}].atomic.remote_addr`, a.remote_addr);
    int(verb, `wr[${i}].atomic.rkey`, a.rkey);
    bigintOf(verb, `wr[${i}].atomic.compare_add`, a.compare_add ?? 0n);
    bigintOf(verb, `wr[${i}].atomic.swap`, a.swap ?? 0n);
  }
  if (o.ud !== undefined) {
    const u = obj(verb, `wr[${i}].ud`, o.ud);
    int(verb, `wr[${i}].ud.remote_qpn`, u.remote_qpn);
    int(verb, `wr[${i}].ud.remote_qkey`, u.remote_qkey);
  }
}

function checkRecvWrTypes(verb: string, w: unknown, i: number): void {
  if (typeof w === "object" && w !== null) {
    const o = w as RecvWr;
    if ((o.wr_id === undefined || typeof o.wr_id === "number") && Array.isArray(o.sg_list)) {
      let ok = true;
      for (let k = 0; k < o.sg_list.length && ok; k++) ok = sgeOk(o.sg_list[k]);
      if (ok) return;
    }
  }
  const o = obj(verb, `wr[${i}]`, w);
  if (o.wr_id !== undefined && typeof o.wr_id !== "number") throw typeErr(verb, `wr[${i}].wr_id`, "number", o.wr_id);
  if (o.sg_list !== undefined) {
    if (!Array.isArray(o.sg_list)) throw typeErr(verb, `wr[${i}].sg_list`, "array", o.sg_list);
    for (let k = 0; k < o.sg_list.length; k++) checkSge(verb, o.sg_list[k], `wr[${i}].sg_list[${k}]`);
  }
}

export function createQp(pd: SimPd, init: QpInitAttr): SimQp {
  const verb = "ibv_create_qp";
  const o = obj(verb, "init_attr", init);
  const type = int(verb, "qp_type", o.qp_type);
  if (type === IBV_QPT_RAW_PACKET || type === IBV_QPT_XRC_SEND || type === IBV_QPT_XRC_RECV)
    fail(verb, "EOPNOTSUPP", because({ kind: "qp-type", type, known: true }, { attribute: "qp_type" }));
  if (type !== IBV_QPT_RC && type !== IBV_QPT_UC && type !== IBV_QPT_UD)
    fail(verb, "EINVAL", because({ kind: "qp-type", type, known: false }, { attribute: "qp_type" }));
  const cq = (name: "send_cq" | "recv_cq"): SimCq => {
    const c = o[name];
    if (c === undefined || c === null)
      fail(verb, "EINVAL", because({ kind: "cq-required", cq: name }, { attribute: name }));
    if (!(c instanceof SimCq)) throw argError(TypeError, verb, { kind: "foreign-object", field: name, what: "CQ" });
    alive(verb, name, c);
    if (c.context !== pd.context)
      fail(verb, "EINVAL", because({ kind: "cq-other-context", cq: name }, { attribute: name }));
    return c;
  };
  const sendCq = cq("send_cq");
  const recvCq = cq("recv_cq");
  const c = obj(verb, "cap", o.cap);
  const cap: QpCap = {
    max_send_wr: optInt(verb, "cap.max_send_wr", c.max_send_wr, 0),
    max_recv_wr: optInt(verb, "cap.max_recv_wr", c.max_recv_wr, 0),
    max_send_sge: optInt(verb, "cap.max_send_sge", c.max_send_sge, 0),
    max_recv_sge: optInt(verb, "cap.max_recv_sge", c.max_recv_sge, 0),
    max_inline_data: optInt(verb, "cap.max_inline_data", c.max_inline_data, 0),
  };
  const limit = (name: keyof QpCap, max: number) => {
    const v = cap[name];
    if (v < 0 || v > max)
      fail(verb, "EINVAL", because({ kind: "cap-limit", field: name, value: v, max }, { attribute: `cap.${name}` }));
  };
  limit("max_send_wr", MAX_WR);
  limit("max_send_sge", MAX_SGE);
  limit("max_recv_wr", MAX_WR);
  limit("max_recv_sge", MAX_SGE);
  limit("max_inline_data", MAX_INLINE);
  const sqSigAll = optInt(verb, "sq_sig_all", o.sq_sig_all, 0);
  const dev = pd.context.dev;
  const qpn = dev.nextQpn++;
  const qp = new SimQp(pd, qpn, type, sendCq, recvCq, cap, sqSigAll, o.qp_context);
  dev.qps.set(qpn, qp);
  sendCq.qpRefs++;
  recvCq.qpRefs++;
  pd.qpCount++;
  return qp;
}
