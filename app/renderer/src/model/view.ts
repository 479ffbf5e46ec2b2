/**
 * What the panes draw: plain data, derived from the session's events by `reduce.ts`.
 * Components take slices of this as props, so each can be rendered and tested alone.
 */
import type { QpQuery, Wc } from "../../../../verbs/types.js";
import type { WcWhy } from "../../../session/explain-wc.js";
import type { PacketDrop, WcReason } from "../../../../verbs/wc-reason.js";
import type { VerbFailure } from "../../../../verbs/verb-failure.js";
import type { Check, Prediction, SessionNotice, SourceSite } from "../../../session/transcript.js";
import type { PacketRecord } from "../../../bridge/contract.js";

/** A polled completion; a failed one with why, when the session knows (the simulator's reason, or inferred). */
export type PolledWc = Wc & { why?: WcWhy };

/** The newest failed completion of a QP (not a flush), shown on the main view while it matters. */
/**
 * What the QP model expected of a call and what the device did, in English ("INIT → RTR";
 * "EINVAL"), with the note on which way the model was wrong; `outcomes` is both sides as data,
 * for the UI to word in the learner's language (absent in transcripts recorded before it).
 */
export interface Divergence {
  expected: string;
  actual: string;
  note?: string;
  outcomes?: NonNullable<Check["outcomes"]>;
}

export interface WcFailure {
  status: number;
  wr_id: number;
  why?: WcWhy;
  /** The event that polled it. */
  seq: number;
}

export interface TransitionTaken {
  from: number;
  to: number;
  /** Increases with every transition, so a repeated A→B still re-triggers the animation. */
  seq: number;
}

export interface QpView {
  handle: string;
  /** Its one name in every pane (model/names.ts): "a (QP 0x11)". */
  name: string;
  qp_num: number;
  qp_type: number;
  /** The device the QP lives on (rxe0, rxe1). */
  device: string;
  state: number;
  query?: QpQuery;
  /** Dotted field paths that changed since the previous snapshot (`attr.qp_state`). */
  changed: string[];
  previous?: QpQuery;
  lastTransition?: TransitionTaken;
  /** The last verb was a modify of this QP that failed: the transition it attempted. */
  failedTransition?: { from: number; to: number; code: string; attribute?: string };
  /** The session's prediction for the verb it is paused before, when that verb is on this QP. */
  pending?: Prediction;
  /** Why the model predicts the pending modify fails, as data (worded by i18n.ts `verbWhy`). */
  pendingWhy?: VerbFailure;
  /** Where the model and the device disagreed last (worded by i18n.ts `divergence`). */
  divergence?: Divergence;
  /** Its newest error completion since it last left RESET. */
  failure?: WcFailure;
  /** The transitions librdmacm made on it (rdma_create_qp, rdma_accept, a CM event), oldest first. */
  cmMoves?: CmQpMove[];
  /** Work requests posted and not yet completed (as far as the program polled). */
  sqOutstanding: number;
  rqOutstanding: number;
  sendCq?: string;
  recvCq?: string;
  pd?: string;
}

/** One ibv_modify_qp librdmacm made for the program (a state change; its same-state re-modifies are left out). */
export interface CmQpMove {
  from: number;
  to: number;
  /** The librdmacm function ("ucma_modify_qp_rtr") and the call or event it ran in ("rdma_accept"). */
  by: string;
  during: string;
  /** The event that recorded it. */
  seq: number;
}

/** A CM message's private data as received: the bytes up to the last non-zero one, then how many zeros follow. */
export interface CmPrivateData {
  /** private_data_len: the message's whole field. */
  len: number;
  /** Its first bytes, up to and including the last non-zero one. */
  bytes: Uint8Array;
  /** The zero padding after them (len − bytes.length). */
  zeros: number;
}

/** One line of a cm id's log: a librdmacm call made on it, or an event rdma_get_cm_event handed out about it. */
export type CmLogRow =
  | {
      kind: "call";
      seq: number;
      /** "rdma_connect" */
      verb: string;
      /** "ok", or the errno name. */
      outcome: string;
      /** What it was given, in short ("10.77.0.2:7471", "private data 15 bytes"). */
      detail?: string;
      reason?: string;
      /** The reason as data (worded by i18n.ts `verbWhy`). */
      why?: VerbFailure;
      /** QP transitions librdmacm made inside it, by QP name. */
      moves: { qp: string; from: number; to: number }[];
    }
  | {
      kind: "event";
      seq: number;
      /** rdma_event_str: "RDMA_CM_EVENT_ESTABLISHED" */
      event: string;
      status: number;
      /** The status by name where it has one: "-ETIMEDOUT", "IB_CM_REJ_CONSUMER_DEFINED", "IB_SIDR_REJECT". */
      statusName?: string;
      /** A failure event (ADDR_ERROR, REJECTED, UNREACHABLE, …) or a non-zero status. */
      bad: boolean;
      /** CONNECT_REQUEST: the new (child) id it carries. */
      child?: string;
      privateData?: CmPrivateData;
      /** RDMA_PS_UDP ESTABLISHED: how to reach the peer (event->param.ud). */
      ud?: { qp_num: number; qkey: number };
      /** rdma_ack_cm_event was called on it. */
      acked: boolean;
      moves: { qp: string; from: number; to: number }[];
    };

/** A cm id and what happened on it; a listening id holds the child ids its CONNECT_REQUESTs carried. */
export interface CmIdView {
  /** "cm_id0": the fold's label. */
  handle: string;
  /** Its one name (model/names.ts): the learner's variable, else its label. */
  name: string;
  /** "RDMA_PS_TCP", "RDMA_PS_UDP" */
  ps: string;
  /** The event channel's name. */
  channel?: string;
  /** src_addr and dst_addr as last seen ("10.77.0.2:7471"); dst absent while unresolved. */
  local?: string;
  remote?: string;
  /** rdma_listen succeeded on it. */
  listening: boolean;
  /** For a child id: the listening id's name, and the CONNECT_REQUEST's seq. */
  parent?: { name: string; seq: number };
  destroyed: boolean;
  rows: CmLogRow[];
  children: CmIdView[];
}

export interface MrView {
  handle: string;
  /** Its one name in every pane (model/names.ts). */
  name: string;
  pd?: string;
  addr: number;
  length: number;
  lkey: number;
  rkey: number;
  access: number;
  /** The first bytes of the MR as the session last read them (hex view). */
  bytes?: Uint8Array;
  /** Offsets that changed since the previous read. */
  changedBytes?: number[];
}

export interface CqView {
  handle: string;
  /** Its one name in every pane (model/names.ts). */
  name: string;
  cqe: number;
  device?: string;
  /** Completions polled from this CQ, newest last. */
  entries: PolledWc[];
}

export interface PdView {
  handle: string;
  /** Its one name in every pane (model/names.ts). */
  name: string;
  device?: string;
}

export interface PortView {
  port_num: number;
  /** Undefined until the program queried the port (ctx.queryPort): nothing is known before. */
  state?: number;
  active_mtu?: number;
  link_layer?: number;
  gids: { index: number; gid: string; type?: number }[];
}

export interface DeviceView {
  handle: string;
  name: string;
  ports: PortView[];
}

export interface CounterView {
  device: string;
  name: string;
  value: number;
  delta: number;
}

/** A lane of the packet timeline: one QP. */
export interface TimelineLane {
  /** Which lane: a QP number and its device (laneKey; rxe0's and rxe1's first QPs are both 0x11). */
  key: string;
  qp_num: number;
  /** "qp0" when the session created it, else empty (a QPN only seen on the wire). */
  handle: string;
  /** The QP's one name (model/names.ts): "a (QP 0x11)", or "QP 0x11" for a QPN only seen on the wire. */
  name?: string;
  device: string;
}

/** What a packet is, for its colour: a request, a response carrying data, an ACK, a NAK, an RNR NAK. */
export type PacketClass = "request" | "response" | "ack" | "nak" | "rnr";

/** One row of the packet timeline, top to bottom in the order things happened. */
export type TimelineRow =
  | {
      kind: "wqe";
      key: string;
      t: number;
      qp_num: number;
      lane: string;
      /** "SQ" for postSend, "RQ" for postRecv. */
      queue: "SQ" | "RQ";
      /** "RDMA_WRITE", "SEND", "RECV". */
      opcode: string;
      wr_id: number;
      bytes: number;
      /** Send WRs: asked for a completion (or the QP signals all). */
      signaled?: boolean;
      /** The post was refused (errno name); nothing went on the wire. */
      refused?: string;
    }
  | {
      kind: "packet";
      key: string;
      t: number;
      /** The sending and the receiving QP's lanes. */
      from: string;
      to: string;
      /** The BTH opcode without its transport prefix: "RDMA_WRITE_FIRST", "SEND_ONLY", "ACKNOWLEDGE". */
      opcode: string;
      /** What the learner reads first: the opcode, or "ACK", "RNR NAK", "NAK PSN sequence error". */
      label: string;
      klass: PacketClass;
      psn: number;
      len: number;
      wr_id?: number;
      /** Why it was dropped, if it was: in English, and as data the UI words (i18n.ts dropReason). */
      dropped?: string;
      drop?: PacketDrop;
      /** An RNR NAK's timer field (the responder's min_rnr_timer). */
      rnrTimer?: number;
      /** Every header field, for the tooltip (worded by i18n.ts `packetDetail`). */
      detail: PacketRecord;
    }
  | {
      kind: "cqe";
      key: string;
      t: number;
      qp_num: number;
      lane: string;
      /** "RDMA_WRITE", "SEND", "RECV". */
      opcode: string;
      wr_id: number;
      /** "SUCCESS", "RNR_RETRY_EXC_ERR", … */
      status: string;
      bytes: number;
      bad: boolean;
      /** Why it failed, when the session knows (its tooltip). */
      why?: WcReason;
    }
  /** Packets of a long burst not carried to the renderer (the middle of a big message). */
  | { kind: "gap"; key: string; count: number }
  /** The virtual clock jumped: a timer (retransmit, RNR wait) or a sleep. */
  | {
      kind: "wait";
      key: string;
      t: number;
      ms: number;
      /** Why time passed: an RNR wait, an ACK timeout (both resend), or the program waiting. */
      why: "rnr" | "retransmit" | "program" | "wire";
      /** For an RNR wait: the timer the NAK asked for, and how long after the NAK the retry went. */
      rnrTimer?: number;
      sinceNakMs?: number;
    };

/** The packet timeline: WQE → packets → CQE, one lane per QP, oldest row first. */
export interface TimelineView {
  /** False on the native backend (no packet log); undefined before the first snapshot. */
  observable?: boolean;
  lanes: TimelineLane[];
  rows: TimelineRow[];
  /** Rows before `rows` that are not drawn (the pane keeps the newest). */
  hiddenRows: number;
  /** Packets before the oldest one kept (the renderer keeps a window of them). */
  earlierPackets: number;
}

/** A row of the transcript pane: one verbs call or UI step. */
export interface TranscriptRow {
  seq: number;
  verb: string;
  /** Short text of the arguments ("RESET → INIT, mask IBV_QP_STATE | …"). */
  detail: string;
  /** "ok", or the errno name. */
  outcome: string;
  /** The attribute an error named (IBV_QP_DEST_QPN). */
  attribute?: string;
  reason?: string;
  /** The error's reason as data, where the UI can word it in the learner's language. */
  why?: VerbFailure;
  /** The model disagreed with the device on this call. */
  divergence?: Divergence;
  ms?: number;
  /** The one name of the object called ("a (QP 0x11)"); absent for the root `verbs`. */
  on?: string;
  /** The line of main.ts that made the call. */
  source?: SourceSite;
}

/**
 * A call's outcome as data: an error's errno and the attribute at fault (`missing`: a bit the
 * transition requires and the mask lacked), a poll's completions (and the first bad status), or
 * text that reads the same in every language (a state name, an object's name, "ok").
 */
export type LineOutcome =
  | { kind: "error"; code: string; attribute?: string; missing?: boolean }
  | { kind: "completions"; n: number; bad?: string }
  | { kind: "text"; text: string };

/** The latest outcome of the calls on one line of main.ts, shown after the line in the editor. */
export interface LineResult {
  line: number;
  /** The seq of the latest call on the line. */
  seq: number;
  /** What the call did, worded by i18n.ts `lineOutcome` ("EINVAL: missing IBV_QP_PORT", "RTR", "1 completion", "a (QP 0x11)", "ok"). */
  outcome: LineOutcome;
  bad: boolean;
  /** How many calls the line made (a loop's line makes many). */
  count: number;
}

/** A line the program logged (or the error it ended with), and where in main.ts. */
export interface LogLine {
  text: string;
  source?: SourceSite;
  /** The "program ended" line of a verb's refusal: its data, for the learner's language (i18n.ts `endedLine`). */
  ended?: { code: string; verb?: string; why: VerbFailure };
}

/** One message size of a throughput sweep: what was measured of it. */
export interface SweepPoint {
  bytes: number;
  /** Bandwidth; absent where the backend's clock did not move (the simulator). */
  gbps?: number;
  /** Packets on the wire per message (rxe's sent_pkts): exact on both backends. */
  packetsPerMsg?: number;
}

export interface LabView {
  devices: DeviceView[];
  pds: PdView[];
  mrs: MrView[];
  cqs: CqView[];
  qps: QpView[];
  counters: CounterView[];
  packets: TimelineView;
  transcript: TranscriptRow[];
  sweep: SweepPoint[];
  /** The verb the program is paused before, if stepping. */
  pausedBefore?: { verb: string; detail: string; source?: SourceSite };
  /** The last error a verb threw (shown prominently). */
  lastError?: TranscriptRow;
  /** Lines the program logged with verbs.log. */
  logs: LogLine[];
  /** The outcome of the calls on each line of main.ts that made one. */
  lineResults: LineResult[];
  /** Beginner mistakes the session saw pass silently, oldest first, with the event that earned each. */
  notices: (SessionNotice & { seq: number })[];
  /** The rdma_cm ids at the top (listeners and connecting ids), each with its log and children. */
  cm: CmIdView[];
}

export const emptyView = (): LabView => ({
  devices: [],
  pds: [],
  mrs: [],
  cqs: [],
  qps: [],
  counters: [],
  packets: { lanes: [], rows: [], hiddenRows: 0, earlierPackets: 0 },
  transcript: [],
  sweep: [],
  logs: [],
  lineResults: [],
  notices: [],
  cm: [],
});
