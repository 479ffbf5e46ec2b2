/**
 * What the panes draw: plain data, derived from the session's events by `reduce.ts`.
 * Components take slices of this as props, so each can be rendered and tested alone.
 */
import type { QpQuery, Wc } from "../../../../verbs/types.js";

/** The QP model's word before a modify: where the QP should end up, or why it should fail. */
export interface Prediction {
  /** The predicted state after the call (absent when an error is predicted). */
  to?: number;
  /** The predicted errno name when the call should fail. */
  errno?: string;
  reason?: string;
  missing?: string[];
}

export interface TransitionTaken {
  from: number;
  to: number;
  /** Increases with every transition, so a repeated A→B still re-triggers the animation. */
  seq: number;
}

export interface QpView {
  handle: string;
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
  /** The prediction for the verb the session is paused before, when it touches this QP. */
  pending?: Prediction;
  /** Where the model and the device disagreed last, in words. */
  divergence?: string;
  /** Work requests posted and not yet completed (as far as the program polled). */
  sqOutstanding: number;
  rqOutstanding: number;
  sendCq?: string;
  recvCq?: string;
  pd?: string;
}

export interface MrView {
  handle: string;
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
  cqe: number;
  device?: string;
  /** Completions polled from this CQ, newest last. */
  entries: Wc[];
}

export interface PdView {
  handle: string;
  device?: string;
}

export interface PortView {
  port_num: number;
  state: number;
  active_mtu: number;
  link_layer: number;
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

/** One mark on the packet timeline: a WQE posted, a packet on the wire, an ACK, a CQE. */
export interface PacketMark {
  t: number;
  kind: "wqe" | "packet" | "ack" | "nak" | "cqe";
  qp_num: number;
  label: string;
  psn?: number;
  /** True for marks that show trouble (NAK, retry, error CQE). */
  bad?: boolean;
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
  /** The model disagreed with the device on this call. */
  divergence?: string;
  ms?: number;
}

export interface SweepPoint {
  bytes: number;
  gbps: number;
}

export interface LabView {
  devices: DeviceView[];
  pds: PdView[];
  mrs: MrView[];
  cqs: CqView[];
  qps: QpView[];
  counters: CounterView[];
  packets: PacketMark[];
  transcript: TranscriptRow[];
  sweep: SweepPoint[];
  /** The verb the program is paused before, if stepping. */
  pausedBefore?: { verb: string; detail: string };
  /** The last error a verb threw (shown prominently). */
  lastError?: TranscriptRow;
  /** Lines the program logged with verbs.log. */
  logs: string[];
}

export const emptyView = (): LabView => ({
  devices: [],
  pds: [],
  mrs: [],
  cqs: [],
  qps: [],
  counters: [],
  packets: [],
  transcript: [],
  sweep: [],
  logs: [],
});
