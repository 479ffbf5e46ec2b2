/**
 * Builds what the panes draw (LabView) from what the host sends: the session's transcript
 * events (objects created, QP snapshots, completions, counter deltas), the latest state
 * snapshot (the QP models, MR bytes, counters) and the step gate. Pure, so every pane can be
 * tested with plain data and the same view comes back after a reload or a backend restart.
 */
import type { GateState, StateSnapshot } from "../../../bridge/contract.js";
import type { Ref, WireValue } from "../../../session/wire.js";
import type { Check, SourceSite, TranscriptEvent, VerbEvent } from "../../../session/transcript.js";
import {
  flagNames,
  ibv_qp_attr_mask,
  ibv_qp_state,
  IBV_SEND_SIGNALED,
  IBV_WC_RECV,
  IBV_WC_SUCCESS,
  IBV_WC_WR_FLUSH_ERR,
} from "../../../../verbs/constants.js";
import type { QpAttr, QpAttrInput, QpCap, Wc } from "../../../../verbs/types.js";
import { changedOffsets } from "./hexdump.js";
import { buildTimeline, laneKey } from "./timeline.js";
import { accessNames, stateName, wcStatusName } from "./format.js";
import { objectLabel, objectName } from "./names.js";
import { buildCmLog, CM_TYPES } from "./cm-log.js";
import type {
  Divergence,
  CmQpMove,
  CounterView,
  DeviceView,
  LabView,
  LineOutcome,
  LineResult,
  LogLine,
  PolledWc,
  QpView,
  SweepPoint,
  TranscriptRow,
  WcFailure,
} from "./view.js";
import { emptyView } from "./view.js";
import { modifyWhy, verbWhy } from "./verb-why.js";

export interface ViewInputs {
  events: readonly TranscriptEvent[];
  snapshot?: StateSnapshot | null;
  /** The snapshot before it, for byte-level MR highlights. */
  previousSnapshot?: StateSnapshot | null;
  gate?: GateState | null;
}

const isVerb = (e: TranscriptEvent): e is VerbEvent => e.kind === "verb";
type Props = Record<string, WireValue>;
const refHandle = (v: unknown): number | undefined =>
  v && typeof v === "object" && typeof (v as Ref).$handle === "number" ? (v as Ref).$handle : undefined;

/** A one-line summary of a verb's arguments for the transcript pane. */
export function describeCall(method: string, args: readonly unknown[]): string {
  switch (method) {
    case "modify": {
      const attr = (args[0] ?? {}) as Partial<QpAttr>;
      const mask = Number(args[1] ?? 0);
      const to =
        mask & ibv_qp_attr_mask.IBV_QP_STATE && attr.qp_state !== undefined ? `→ ${stateName(attr.qp_state)}, ` : "";
      const names = flagNames(ibv_qp_attr_mask, mask).map((n) => n.replace("IBV_QP_", ""));
      return `${to}mask ${names.join("|") || "0"}`;
    }
    case "postSend":
    case "postRecv": {
      const wrs = Array.isArray(args[0]) ? args[0] : [args[0]];
      return `${wrs.length} WR${wrs.length === 1 ? "" : "s"}`;
    }
    case "createQp": {
      const init = (args[0] ?? {}) as { qp_type?: number; cap?: { max_send_wr?: number; max_recv_wr?: number } };
      const t =
        init.qp_type === 2 ? "RC" : init.qp_type === 3 ? "UC" : init.qp_type === 4 ? "UD" : String(init.qp_type);
      return `${t}, max_send_wr ${init.cap?.max_send_wr}, max_recv_wr ${init.cap?.max_recv_wr}`;
    }
    case "regMr":
      // Flags by name, as the learner wrote them (IBV_ACCESS_LOCAL_WRITE, not 1).
      return `${typeof args[0] === "number" ? `${args[0]} bytes, ` : ""}access ${accessNames(Number(args[1] ?? 0))}`;
    case "log":
      return args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ");
    case "setLink":
      // What the link was given: {"blockRoceUdp":true}, as the program (or the Network panel) wrote it.
      return JSON.stringify(args[0] ?? {});
    default:
      return args
        .filter((x) => typeof x === "number" || typeof x === "string")
        .map(String)
        .join(", ");
  }
}

const rowCache = new WeakMap<VerbEvent, TranscriptRow>();

/**
 * The transcript pane's row for an event (cached: events never change once written, and the
 * object it was called on is named when the row is first made, as the fold knows it then).
 */
export function transcriptRow(e: VerbEvent, on?: string, qpType?: number): TranscriptRow {
  let row = rowCache.get(e);
  if (!row) rowCache.set(e, (row = makeRow(e, on, qpType)));
  return row;
}

/** A check the model and device disagreed on, as the panes show it (its English, and its data when recorded). */
function divergenceOf(c: Check): Divergence {
  return {
    expected: c.expected,
    actual: c.actual,
    ...(c.note !== undefined && { note: c.note }),
    ...(c.outcomes && { outcomes: c.outcomes }),
  };
}

function makeRow(e: VerbEvent, on: string | undefined, qpType: number | undefined): TranscriptRow {
  const why = verbWhy(e, qpType);
  return {
    seq: e.seq,
    verb: e.verb,
    detail: describeCall(e.method, e.args),
    ...(on && { on }),
    ...(e.source && { source: e.source }),
    outcome: e.error ? (e.error.code ?? e.error.name) : "ok",
    ...(e.error?.attribute !== undefined && { attribute: e.error.attribute }),
    ...(e.error?.reason !== undefined && { reason: e.error.reason }),
    ...(why && { why }),
    ...(e.check && !e.check.agree && { divergence: divergenceOf(e.check) }),
    ms: e.durationMs,
  };
}

/**
 * The throughput sweep a program logs as `verbs.log("sweep", points)`: one point or an array
 * of points with `bytes` (or `size`), a bandwidth in `gbps` or `MBps`, and `packets_per_msg`
 * (lesson 12 logs MBps, null when no time passed, as for traffic within one device on the
 * simulator, and packets per message, which both backends count exactly).
 */
export function parseSweep(message: string): SweepPoint[] {
  const m = /^sweep\b[:\s]*(.*)$/s.exec(message.trim());
  if (!m) return [];
  let value: unknown;
  try {
    value = JSON.parse(m[1]);
  } catch {
    const nums = m[1].match(/[\d.]+/g);
    return nums && nums.length >= 2 ? [{ bytes: Number(nums[0]), gbps: Number(nums[1]) }] : [];
  }
  const points: SweepPoint[] = [];
  for (const o of (Array.isArray(value) ? value : [value]) as Record<string, unknown>[]) {
    if (!o || typeof o !== "object") continue;
    const bytes = o.bytes ?? o.size;
    const gbps = typeof o.gbps === "number" ? o.gbps : typeof o.MBps === "number" ? (o.MBps * 8) / 1000 : undefined;
    const pkts = typeof o.packets_per_msg === "number" ? o.packets_per_msg : undefined;
    if (typeof bytes === "number" && (gbps !== undefined || pkts !== undefined))
      points.push({ bytes, ...(gbps !== undefined && { gbps }), ...(pkts !== undefined && { packetsPerMsg: pkts }) });
  }
  return points;
}

/** A sweep with newer points: one point per size (a rerun replaces the size's old one), smallest first. */
export function mergeSweep(old: readonly SweepPoint[], points: readonly SweepPoint[]): SweepPoint[] {
  const bySize = new Map(old.map((p) => [p.bytes, p]));
  for (const p of points) bySize.set(p.bytes, p);
  return [...bySize.values()].sort((a, b) => a.bytes - b.bytes);
}

interface Obj {
  handle: number;
  type: string;
  props: Props;
  alive: boolean;
  /** Index among objects of its type, in creation order (lessons count QPs and MRs this way). */
  index: number;
  /** The learner's variable for it (from its creating call's line). */
  variable?: string;
  /** A QP whose number a QP on another device has too: its device, which its name then says. */
  sharesNumberOn?: string;
}

/** An object's one name (model/names.ts), from what the fold knows of it. */
const nameOf = (o: Obj): string =>
  objectName({
    type: o.type,
    index: o.index,
    ...(o.variable && { variable: o.variable }),
    ...(o.type === "qp" && { qp_num: Number(o.props.qp_num) }),
    ...(o.sharesNumberOn && { device: o.sharesNumberOn }),
    ...(o.type === "context" && { device: (o.props.device as { name?: string } | undefined)?.name }),
  });

/** A send WR posted on a QP and not yet known (to the program) to be retired. */
interface SqSlot {
  wr_id: number;
  signaled: boolean;
}

/**
 * Send-queue occupancy as the program can know it. The SQ retires WQEs in order (rxe's
 * completer pops them as their ACKs arrive), but an unsignaled WQE produces no CQE: the
 * program learns it is gone only when a later signaled WQE's completion is polled, which
 * retires it and every WQE posted before it. A failed WQE always completes (flushes too).
 */
export function retireSend(slots: SqSlot[], wc: Pick<Wc, "wr_id" | "status">): void {
  let i = slots.findIndex((w) => w.wr_id === wc.wr_id && (w.signaled || wc.status !== IBV_WC_SUCCESS));
  if (i < 0) i = slots.findIndex((w) => w.wr_id === wc.wr_id);
  // A wr_id the view never saw posted (reused ids, a replay): retire the oldest one.
  slots.splice(0, (i < 0 ? 0 : i) + 1);
}

/** A QP by its number (a completion names its QP by number). */
interface QpByNum {
  handle: number;
  sigAll: boolean;
  sendCq?: number;
  recvCq?: number;
}

/**
 * What the events say, folded one event at a time (`foldEvent`): the objects created, the QPs'
 * last attributes and moves, the completions polled, the queues' occupancy. `deriveView` makes
 * the view from it and the latest snapshot and gate. Arrays here grow in place; the view gets
 * copies, so a view already handed to React never changes under it.
 */
export interface ViewFold {
  /** How many events were folded, and the first and last of them (to tell an extension from a new list). */
  count: number;
  first?: TranscriptEvent;
  last?: TranscriptEvent;
  transcript: TranscriptRow[];
  logs: LogLine[];
  sweep: SweepPoint[];
  objs: Map<number, Obj>;
  perType: Map<string, number>;
  attrs: Map<number, QpAttr | null>;
  polled: Map<number, PolledWc[]>;
  /** Each QP's newest error completion (by handle), cleared when it goes back to RESET. */
  failures: Map<number, WcFailure>;
  notices: LabView["notices"];
  lastMove: Map<number, { from: number; to: number; seq: number }>;
  diverged: Map<number, Divergence>;
  sqSlots: Map<number, SqSlot[]>;
  rqPosted: Map<number, number>;
  rqDone: Map<number, number>;
  /** Live QPs by qp_num: one per device (rxe0's and rxe1's first QPs are both 0x11). */
  qpByNum: Map<number, QpByNum[]>;
  /** The same QPs by handle (a post names its QP by handle). */
  qpByHandle: Map<number, QpByNum>;
  ports: Map<number, DeviceView["ports"][number]>;
  /** The latest outcome of the calls made on each line of main.ts, by line. */
  lineResults: Map<number, LineResult>;
  /** The librdmacm calls (on the CM, its channels, ids and events), for the CM pane. */
  cmCalls: VerbEvent[];
  /** The transitions librdmacm made on each QP (by handle). */
  cmMoves: Map<number, CmQpMove[]>;
  /** The QP rdma_create_qp made on each cm id (id handle → QP handle). */
  cmIdQp: Map<number, number>;
  lastVerb?: VerbEvent;
  /** The last verb that moved any hw counter (the counters pane shows its deltas). */
  lastCounterEvent?: VerbEvent;
}

export const emptyFold = (): ViewFold => ({
  count: 0,
  transcript: [],
  logs: [],
  sweep: [],
  objs: new Map(),
  perType: new Map(),
  attrs: new Map(),
  polled: new Map(),
  failures: new Map(),
  notices: [],
  lastMove: new Map(),
  diverged: new Map(),
  sqSlots: new Map(),
  rqPosted: new Map(),
  rqDone: new Map(),
  qpByNum: new Map(),
  qpByHandle: new Map(),
  ports: new Map(),
  lineResults: new Map(),
  cmCalls: [],
  cmMoves: new Map(),
  cmIdQp: new Map(),
});

/** The QP a completion polled from CQ `cq` names: of those numbered `qpNum`, the one using that CQ. */
function qpOfCompletion(f: ViewFold, cq: number, qpNum: number): QpByNum | undefined {
  const same = f.qpByNum.get(qpNum);
  if (!same) return undefined;
  return same.find((q) => q.sendCq === cq || q.recvCq === cq) ?? (same.length === 1 ? same[0] : undefined);
}

const rqOutstanding = (f: ViewFold, h: number) => Math.max(0, (f.rqPosted.get(h) ?? 0) - (f.rqDone.get(h) ?? 0));

/** Folds one more event into `f` (events in transcript order). */
export function foldEvent(f: ViewFold, e: TranscriptEvent): void {
  if (f.count === 0) f.first = e;
  f.count++;
  f.last = e;
  if (e.kind === "log") {
    f.logs.push({ text: e.message, ...(e.source && { source: e.source }) });
    const points = parseSweep(e.message);
    if (points.length) f.sweep = mergeSweep(f.sweep, points);
    return;
  }
  if (e.kind === "end") {
    if (e.error) {
      const at = errorSite(e.error);
      f.logs.push({
        text: `program ended: ${e.error.code ?? e.error.name}: ${e.error.message}`,
        ...(at && { source: at }),
        ...(e.error.why && {
          ended: { code: e.error.code ?? e.error.name, ...(e.error.verb && { verb: e.error.verb }), why: e.error.why },
        }),
      });
    }
    return;
  }
  if (!isVerb(e)) return;
  f.lastVerb = e;
  if (e.counters?.length) f.lastCounterEvent = e;
  const callee = f.objs.get(e.target.$handle);
  const row = transcriptRow(
    e,
    callee && nameOf(callee),
    callee?.type === "qp" ? Number(callee.props.qp_type) : undefined,
  );
  f.transcript.push(row);
  for (const n of e.notices ?? []) f.notices.push({ ...n, seq: e.seq });
  const adopt = (r: Ref, variable?: string) => {
    const index = f.perType.get(r.type) ?? 0;
    f.perType.set(r.type, index + 1);
    f.objs.set(r.$handle, {
      handle: r.$handle,
      type: r.type,
      props: (r.props ?? {}) as Props,
      alive: true,
      index,
      ...(variable && { variable }),
    });
  };
  for (const r of e.adopted ?? []) if (!f.objs.has(r.$handle)) adopt(r);
  for (const r of e.created ?? []) {
    adopt(r, e.created!.length === 1 ? e.source?.variable : undefined);
    // A CONNECT_REQUEST carries a new id no call created (the child): it is named from here on.
    if (r.type === "cmEvent")
      for (const k of ["listen_id", "id"]) {
        const id = (r.props as Props | undefined)?.[k] as Ref | undefined;
        if (id?.type === "cmId" && !f.objs.has(id.$handle)) adopt(id);
      }
    if (r.type === "qp") {
      const init = (e.method === "createQp" ? (e.args[0] ?? {}) : {}) as { sq_sig_all?: number };
      const qpNum = Number(r.props?.qp_num);
      const q: QpByNum = {
        handle: r.$handle,
        sigAll: !!init.sq_sig_all,
        sendCq: refHandle(r.props?.send_cq),
        recvCq: refHandle(r.props?.recv_cq),
      };
      // A QPN used again (a QP destroyed, another created): the newer one answers to it. One on
      // another device keeps its own.
      const same = f.qpByNum.get(qpNum) ?? [];
      for (const old of same) if (f.objs.get(old.handle)?.alive === false) f.qpByHandle.delete(old.handle);
      const others = same.filter((o) => f.qpByHandle.has(o.handle));
      f.qpByNum.set(qpNum, [...others, q]);
      f.qpByHandle.set(r.$handle, q);
      // Two live QPs of one number (rxe0's and rxe1's first are both 0x11): each name says its device.
      const deviceOf = (h: number) => {
        const pd = f.objs.get(refHandle(f.objs.get(h)?.props.pd) ?? -1);
        const ctx = f.objs.get(refHandle(pd?.props.context) ?? -1);
        return (ctx?.props.device as { name?: string } | undefined)?.name;
      };
      if (others.length)
        for (const h of [r.$handle, ...others.map((o) => o.handle)]) {
          const o = f.objs.get(h);
          const dev = deviceOf(h);
          if (o && dev) o.sharesNumberOn = dev;
        }
    }
  }
  const target = f.objs.get(e.target.$handle);
  if (!e.error && target && ["destroy", "dereg", "dealloc", "close"].includes(e.method)) target.alive = false;
  // rdma_destroy_qp is called on the id: it destroys the QP rdma_create_qp made on it.
  if (!e.error && target?.type === "cmId" && e.method === "createQp")
    for (const r of e.created ?? []) if (r.type === "qp") f.cmIdQp.set(target.handle, r.$handle);
  if (!e.error && target?.type === "cmId" && e.method === "destroyQp") {
    const qp = f.objs.get(f.cmIdQp.get(target.handle) ?? NaN);
    if (qp) qp.alive = false;
  }
  for (const q of e.qps ?? []) {
    f.attrs.set(q.qp, q.after);
    if (q.before && q.after && q.before.qp_state !== q.after.qp_state) {
      f.lastMove.set(q.qp, { from: q.before.qp_state, to: q.after.qp_state, seq: e.seq });
      if (q.after.qp_state === ibv_qp_state.IBV_QPS_RESET) {
        f.failures.delete(q.qp);
        f.sqSlots.set(q.qp, []);
        f.rqPosted.set(q.qp, 0);
        f.rqDone.set(q.qp, 0);
      }
    }
  }
  for (const m of e.moves ?? []) f.lastMove.set(m.qp, { from: m.from, to: m.to, seq: e.seq });
  if (CM_TYPES.has(e.target.type)) f.cmCalls.push(e);
  for (const t of e.librdmacm ?? [])
    if (t.from !== t.to)
      f.cmMoves.set(t.qp, [
        ...(f.cmMoves.get(t.qp) ?? []),
        { from: t.from, to: t.to, by: t.by, during: t.during, seq: e.seq },
      ]);
  if (e.check && !e.check.agree && e.prediction) f.diverged.set(e.prediction.qp, divergenceOf(e.check));
  for (const c of e.completions ?? []) {
    const list = f.polled.get(c.cq) ?? [];
    list.push(c.why ? { ...c.wc, why: c.why } : c.wc);
    f.polled.set(c.cq, list);
    const qp = qpOfCompletion(f, c.cq, c.wc.qp_num);
    if (!qp) continue;
    if (c.wc.status !== IBV_WC_SUCCESS && c.wc.status !== IBV_WC_WR_FLUSH_ERR)
      f.failures.set(qp.handle, {
        status: c.wc.status,
        wr_id: c.wc.wr_id,
        ...(c.why && { why: c.why }),
        seq: e.seq,
      });
    const slots = f.sqSlots.get(qp.handle) ?? [];
    // Which queue: the CQ says when the two differ; a success says by its opcode; an error
    // completion (opcode undefined, as on rxe) by whether a send WR has that wr_id.
    const send =
      qp.sendCq !== qp.recvCq
        ? c.cq === qp.sendCq
        : c.wc.status === IBV_WC_SUCCESS
          ? c.wc.opcode < IBV_WC_RECV
          : slots.some((w) => w.wr_id === c.wc.wr_id) || !rqOutstanding(f, qp.handle);
    if (send) retireSend(slots, c.wc);
    else f.rqDone.set(qp.handle, (f.rqDone.get(qp.handle) ?? 0) + 1);
  }
  if (!e.error && (e.method === "postSend" || e.method === "postRecv")) {
    const wrs = (Array.isArray(e.args[0]) ? e.args[0] : [e.args[0]]) as
      { wr_id?: number; send_flags?: number }[] | undefined[];
    const h = e.target.$handle;
    if (e.method === "postRecv") f.rqPosted.set(h, (f.rqPosted.get(h) ?? 0) + wrs.length);
    else {
      const sigAll = f.qpByHandle.get(h)?.sigAll ?? false;
      const slots = f.sqSlots.get(h) ?? [];
      for (const w of wrs)
        slots.push({
          wr_id: Number(w?.wr_id ?? 0),
          signaled: sigAll || !!(Number(w?.send_flags ?? 0) & IBV_SEND_SIGNALED),
        });
      f.sqSlots.set(h, slots);
    }
  }
  if (e.source) {
    const before = f.lineResults.get(e.source.line);
    f.lineResults.set(e.source.line, {
      line: e.source.line,
      seq: e.seq,
      outcome: lineOutcome(e, f, row),
      bad: !!e.error,
      count: (before?.count ?? 0) + 1,
    });
  }
  if (!e.error && e.method === "queryPort" && e.result && typeof e.result === "object") {
    const pa = e.result as Record<string, number>;
    f.ports.set(e.target.$handle, {
      port_num: Number(e.args[0] ?? 1),
      state: pa.state,
      active_mtu: pa.active_mtu,
      link_layer: pa.link_layer,
      gids: [],
    });
  }
}

/**
 * A call's outcome as the editor shows it after its line: the errno and the attribute at
 * fault, the state a modify reached, the completions a poll returned, the object a create made.
 */
export function lineOutcome(e: VerbEvent, f: Pick<ViewFold, "objs">, row: TranscriptRow): LineOutcome {
  if (e.error) {
    const code = e.error.code ?? e.error.name;
    const attribute = e.error.attribute;
    if (!attribute) return { kind: "error", code };
    // "missing" only where the transition check says the bit was required and absent.
    const w = row.why;
    const missing = w?.kind === "mask" && w.missing.length > 0 && (!w.notAllowed.length || attribute === w.missing[0]);
    return { kind: "error", code, attribute, ...(missing && { missing }) };
  }
  if (e.completions || e.method === "poll" || e.method === "pollWait") {
    const wcs = e.completions ?? [];
    const bad = wcs.find((c) => c.wc.status !== IBV_WC_SUCCESS);
    return { kind: "completions", n: wcs.length, ...(bad && { bad: wcStatusName(bad.wc.status) }) };
  }
  if (e.method === "modify") {
    const after = e.qps.find((q) => q.qp === e.target.$handle)?.after;
    return { kind: "text", text: after ? stateName(after.qp_state) : "ok" };
  }
  const made = e.created?.[0] && f.objs.get(e.created[0].$handle);
  return { kind: "text", text: made ? nameOf(made) : "ok" };
}

/** The whole view from scratch: every event folded, then the view made from the fold. */
export function buildView(inputs: ViewInputs): LabView {
  const f = emptyFold();
  for (const e of inputs.events) foldEvent(f, e);
  return deriveView(f, inputs);
}

/** Builds views of a growing transcript, folding only the events new since the last build. */
export interface ViewBuilder {
  /** Equal to `buildView(inputs)`. */
  build(inputs: ViewInputs): LabView;
  /** The toolbar's "paused before" for `pending`, against the events of the last build. */
  pausedBefore(pending: PendingCall): LabView["pausedBefore"];
}

/**
 * An incremental `buildView`: when `events` extends the list of the last build (the store
 * appends), only the new events are folded; any other list (a reset, an import, a resync that
 * replaced it) is folded from the start. `fold` is replaceable for the equivalence test only.
 */
export function createViewBuilder(fold: (f: ViewFold, e: TranscriptEvent) => void = foldEvent): ViewBuilder {
  let f = emptyFold();
  return {
    build(inputs) {
      const { events } = inputs;
      const extends_ =
        f.count === 0 || (events.length >= f.count && events[0] === f.first && events[f.count - 1] === f.last);
      if (!extends_) f = emptyFold();
      for (let i = f.count; i < events.length; i++) fold(f, events[i]!);
      return deriveView(f, inputs);
    },
    pausedBefore(pending) {
      return pausedBeforeView(pending, f.objs.get(pending.target.$handle));
    },
  };
}

function deriveView(f: ViewFold, { events, snapshot, previousSnapshot, gate }: ViewInputs): LabView {
  const view = emptyView();
  const { objs, attrs, polled, lastMove, diverged, sqSlots, qpByHandle, ports, lastVerb } = f;
  view.transcript = f.transcript.slice();
  view.logs = f.logs.slice();
  view.sweep = f.sweep.slice();
  view.lineResults = [...f.lineResults.values()];
  view.notices = f.notices.slice();
  if (lastVerb?.error) view.lastError = transcriptRow(lastVerb);

  const live = (type: string) => [...objs.values()].filter((o) => o.type === type && o.alive);
  const label = (h: unknown) => {
    const n = refHandle(h);
    const o = n === undefined ? undefined : objs.get(n);
    return o ? objectLabel(o) : undefined;
  };
  const contextDevice = new Map<number, string>();
  for (const c of live("context")) {
    const dev = (c.props.device as { name?: string } | undefined)?.name ?? "?";
    contextDevice.set(c.handle, dev);
    const gids = Array.isArray(c.props.gids)
      ? (c.props.gids as { gid_index: number; gid: string; gid_type: number }[])
      : [];
    const port = ports.get(c.handle);
    if (!view.devices.some((d) => d.name === dev))
      view.devices.push({
        handle: objectLabel(c),
        name: dev,
        ports: [
          {
            port_num: port?.port_num ?? 1,
            ...(port && { state: port.state, active_mtu: port.active_mtu, link_layer: port.link_layer }),
            gids: gids.map((g) => ({ index: g.gid_index, gid: g.gid, type: g.gid_type })),
          },
        ],
      });
  }
  const deviceOfPd = (pd: unknown) => contextDevice.get(refHandle(objs.get(refHandle(pd) ?? -1)?.props.context) ?? -1);
  view.pds = live("pd").map((p) => ({
    handle: objectLabel(p),
    name: nameOf(p),
    device: contextDevice.get(refHandle(p.props.context) ?? -1),
  }));

  const bytesNow = new Map((snapshot?.mrBytes ?? []).map((m) => [m.handle, m.bytes]));
  const bytesBefore = new Map((previousSnapshot?.mrBytes ?? []).map((m) => [m.handle, m.bytes]));
  view.mrs = live("mr").map((m) => {
    const bytes = bytesNow.get(m.handle);
    return {
      handle: objectLabel(m),
      name: nameOf(m),
      pd: label(m.props.pd),
      addr: Number(m.props.addr ?? 0),
      length: Number(m.props.length ?? 0),
      lkey: Number(m.props.lkey ?? 0),
      rkey: Number(m.props.rkey ?? 0),
      access: Number(m.props.access ?? 0),
      ...(bytes && { bytes, changedBytes: changedOffsets(bytesBefore.get(m.handle), bytes) }),
    };
  });
  view.cqs = live("cq").map((c) => ({
    handle: objectLabel(c),
    name: nameOf(c),
    cqe: Number(c.props.cqe ?? 0),
    device: contextDevice.get(refHandle(c.props.context) ?? -1),
    entries: polled.get(c.handle)?.slice() ?? [],
  }));

  // The verb just performed highlights what it changed; older changes fade back to normal.
  const justChanged = new Map((lastVerb?.qps ?? []).filter((q) => q.changes.length).map((q) => [q.qp, q]));
  const models = new Map((snapshot?.qps ?? []).map((m) => [m.qp, m]));
  const pending = gate?.pending;
  const qpObjs = live("qp");
  view.qps = qpObjs.map((o): QpView => {
    const attr = attrs.get(o.handle) ?? undefined;
    const cap = (o.props.cap ?? {}) as unknown as QpCap;
    const qpType = Number(o.props.qp_type);
    const qpNum = Number(o.props.qp_num);
    const init_attr = { qp_type: qpType, sq_sig_all: 0, cap };
    const change = justChanged.get(o.handle);
    const model = models.get(o.handle);
    const state = attr?.qp_state ?? model?.observed ?? ibv_qp_state.IBV_QPS_RESET;
    const sendCq = refHandle(o.props.send_cq);
    const recvCq = refHandle(o.props.recv_cq);
    // The session's own prediction, made before the gate with the port and GID facts it has.
    const prediction = pending?.target.$handle === o.handle ? pending.prediction : undefined;
    const pendingWhy =
      prediction && prediction.outcome !== "ok"
        ? (prediction.why ??
          (pending!.method === "modify"
            ? modifyWhy(qpType, state, pending!.args, prediction.outcome, prediction.attribute)
            : undefined))
        : undefined;
    let failedTransition: QpView["failedTransition"];
    if (lastVerb?.error && lastVerb.method === "modify" && lastVerb.target.$handle === o.handle) {
      const [a, mask] = lastVerb.args as [QpAttrInput | null, number];
      const to = Number(mask) & ibv_qp_attr_mask.IBV_QP_STATE && a?.qp_state !== undefined ? a.qp_state : state;
      failedTransition = {
        from: state,
        to,
        code: lastVerb.error.code ?? lastVerb.error.name,
        ...(lastVerb.error.attribute !== undefined && { attribute: lastVerb.error.attribute }),
      };
    }
    return {
      handle: objectLabel(o),
      name: nameOf(o),
      qp_num: qpNum,
      ...(failedTransition && { failedTransition }),
      qp_type: qpType,
      device: deviceOfPd(o.props.pd) ?? "",
      state,
      ...(attr && { query: { attr, init_attr } }),
      ...(change?.before && attr && { previous: { attr: change.before, init_attr } }),
      changed: change ? change.changes.map((c) => `attr.${c.field}`) : [],
      ...(lastMove.has(o.handle) && { lastTransition: lastMove.get(o.handle) }),
      ...(prediction && { pending: prediction }),
      ...(pendingWhy && { pendingWhy }),
      ...(diverged.has(o.handle) && { divergence: diverged.get(o.handle) }),
      ...(f.failures.has(o.handle) && { failure: f.failures.get(o.handle) }),
      ...(f.cmMoves.has(o.handle) && { cmMoves: f.cmMoves.get(o.handle)!.slice() }),
      sqOutstanding: sqSlots.get(o.handle)?.length ?? 0,
      rqOutstanding: rqOutstanding(f, o.handle),
      sendCq: label(o.props.send_cq),
      recvCq: label(o.props.recv_cq),
      pd: label(o.props.pd),
    };
  });

  // Counters: values from the snapshot, the delta from the last verb that moved any.
  const lastDelta = new Map<string, number>();
  for (const c of f.lastCounterEvent?.counters ?? [])
    for (const [name, d] of Object.entries(c.delta)) lastDelta.set(`${c.context}/${name}`, d);
  const counters: CounterView[] = [];
  for (const c of snapshot?.counters ?? [])
    for (const [name, value] of Object.entries(c.counters))
      counters.push({ device: c.device, name, value, delta: lastDelta.get(`${c.handle}/${name}`) ?? 0 });
  view.counters = counters;

  view.packets = buildTimeline({
    events,
    packets: snapshot?.packets,
    lanes: view.qps.map((q) => ({
      key: laneKey(q.device, q.qp_num),
      qp_num: q.qp_num,
      handle: q.handle,
      name: q.name,
      device: q.device,
    })),
    qp: (h) => {
      const o = objs.get(h);
      if (o?.type !== "qp") return undefined;
      const qpNum = Number(o.props.qp_num);
      return { qp_num: qpNum, device: deviceOfPd(o.props.pd) ?? "", sigAll: qpByHandle.get(h)?.sigAll ?? false };
    },
    cqDevice: (h) => contextDevice.get(refHandle(objs.get(h)?.props.context) ?? -1),
  });
  view.cm = buildCmLog(f.cmCalls, (h) => {
    const o = objs.get(h);
    return o && { name: nameOf(o), label: objectLabel(o) };
  });
  if (pending) view.pausedBefore = pausedBeforeView(pending, objs.get(pending.target.$handle));
  return view;
}

type PendingCall = NonNullable<GateState["pending"]>;

function pausedBeforeView(pending: PendingCall, t: Obj | undefined): LabView["pausedBefore"] {
  return {
    verb: pending.verb,
    detail: `${t ? nameOf(t) : "verbs"}.${pending.method}(${describeCall(pending.method, pending.args)})`,
    ...(pending.source && { source: pending.source }),
  };
}

/** Where an error the program ended with came from in main.ts (the runner adds line and column). */
function errorSite(error: { line?: number; column?: number }): SourceSite | undefined {
  return error.line !== undefined && error.column !== undefined
    ? { line: error.line, column: error.column }
    : undefined;
}
