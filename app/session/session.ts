/**
 * The session: wraps a VerbsBackend so every verb passes through it exactly once. For each
 * call it asks the QP model for a prediction, waits at the step gate, performs the call on
 * the backend, times it, snapshots ibv_query_qp of the QPs before and after, collects
 * completions and counter deltas, compares prediction and reality, and appends one event
 * to the transcript (written to the sink at once) and emits it.
 *
 * Objects are named by handles (numbers, in creation order, so a replay of the same calls
 * gives the same handles). Handle 0 is the backend.
 */
import { createActor } from "xstate";
import {
  IBV_QPS_ERR,
  IBV_QPS_RTS,
  IBV_WC_SUCCESS,
  IBV_WC_WR_FLUSH_ERR,
  ibv_wc_status,
  nameOf,
} from "../../verbs/constants.js";
import { argError, errnos, errorToData, VerbsError } from "../../verbs/errors.js";
import { SET_LINK_VERB, type LinkFaults } from "../../verbs/lab.js";
import type { Context, Mr, Pd, Qp } from "../../verbs/backend.js";
import type { CmEvent, CmEventChannel, CmId, CmQpTransition } from "../../verbs/cm.js";
import type { QpAttr, QpAttrInput, SendWr, Wc } from "../../verbs/types.js";
import {
  predictModify,
  predictPostSend,
  qpMachine,
  qpStateName,
  snapshotQpState,
  type PredictContext,
} from "../../state-machines/qp.js";
import { createVerbsFacade } from "./facade.js";
import { createHandles, type Entry } from "./handles.js";
import { createLookout } from "./lookout.js";
import { createQpIndex } from "./qp-index.js";
import { checkPrediction } from "./prediction-check.js";
import { methodsWith, verbSpec } from "./verb-table.js";
import { Gate } from "./step-gate.js";
import {
  SessionStoppedError,
  type QpModelView,
  type Session,
  type SessionOptions,
  type PendingCall,
} from "./session-types.js";
import {
  compactLineWriter,
  parseTranscript,
  TRANSCRIPT_SCHEMA,
  TRANSCRIPT_VERSION,
  type FieldChange,
  type Prediction,
  type SourceSite,
  type QpSnapshot,
  type SessionNotice,
  type StateMove,
  type TranscriptEvent,
  type TranscriptHeader,
  type VerbEvent,
} from "./transcript.js";
import { encodeValue, EVENT_BYTES_MAX, type CmIdReply, type HandleType, type Ref } from "./wire.js";
import { counterWatch } from "./counter-watch.js";
import { because, seen } from "../../verbs/verb-failure.js";

/**
 * Events kept in memory when the sink can read its lines back (a file): the recent ones, so
 * that a program of a million verbs records in bounded memory; the earlier ones are read back
 * from the sink when the whole transcript is asked for.
 */
export const KEEP_EVENTS = 2000;

/** Calls after which traffic may have moved: counters are read after them (counter-watch.ts; from the one table). */
const TRAFFIC = methodsWith("traffic");

/** The fields of two query results that differ, by dotted path. */
export function diffFields(before: unknown, after: unknown, path = ""): FieldChange[] {
  if (typeof before === "object" && before !== null && typeof after === "object" && after !== null) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    const out: FieldChange[] = [];
    for (const k of keys)
      out.push(
        ...diffFields(
          (before as Record<string, unknown>)[k],
          (after as Record<string, unknown>)[k],
          path ? `${path}.${k}` : k,
        ),
      );
    return out;
  }
  if (before === after) return [];
  const enc = (v: unknown) => encodeValue(v);
  return [{ field: path, before: enc(before), after: enc(after) }];
}

const wcStatusName = (s: number) => nameOf(ibv_wc_status, s);

function isZeroed(v: unknown): boolean {
  const bytes =
    v instanceof ArrayBuffer
      ? new Uint8Array(v)
      : ArrayBuffer.isView(v)
        ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
        : undefined;
  return bytes !== undefined && bytes.every((b) => b === 0);
}

/** Runs `f`; an object already gone, or a refusal, leaves nothing more to release. */
function attempt(f: () => void): void {
  try {
    f();
  } catch {
    // nothing to do: see Session.release
  }
}

export function createSession(options: SessionOptions): Session {
  const { backend, sink } = options;
  const wall = options.wallClock ?? (() => (typeof performance !== "undefined" ? performance.now() : Date.now()));
  const gate = new Gate(options.step ?? false);
  // Every object this session handed out, by handle (handles.ts).
  const registry = createHandles(backend);
  const { toRef } = registry;
  const watch = counterWatch();
  const events: TranscriptEvent[] = [];
  const listeners = new Set<(e: TranscriptEvent) => void>();
  let ended = false;
  // Whether this session's program changed the lab link (release() then clears it).
  let linkChanged = false;
  // Indexes, so that no verb costs more as the program holds more objects (a lesson can hold
  // thousands of QPs): the live QPs and contexts by handle, QPs by number (qp-index.ts), each QP's last
  // ibv_query_qp, and the QPs with send WRs in flight (the only ones that move on their own).
  const liveQpEntries = new Map<number, Entry>();
  const liveContexts = new Map<number, Entry>();
  const qpIndex = createQpIndex();
  const known = new Map<number, QpAttr | null>();
  const busy = new Set<number>();

  // The QP transitions librdmacm makes inside a CM call, as they happen (recorded with the call).
  const cmMade: CmQpTransition[] = [];
  backend.cm?.onQpTransition?.((t) => cmMade.push(t));

  // The learner's variable for each object a line of theirs created (`const cq = await …`).
  const variables = new Map<number, string>();
  // Failed completions explained, a hanging destroy refused, silent mistakes noticed (lookout.ts).
  const lookout = createLookout(
    {
      entries: registry.all,
      handleOf: registry.handleOf,
      entry: registry.get,
      qpOfCompletion: (cq, n) => qpIndex.onCq(cq, n),
      variable: (h) => variables.get(h),
    },
    backend,
  );

  const header: TranscriptHeader = {
    kind: "header",
    schema: TRANSCRIPT_SCHEMA,
    version: TRANSCRIPT_VERSION,
    created: new Date().toISOString(),
    backend: backend.kind,
    ...(options.seed !== undefined && { seed: options.seed }),
    ...(options.program !== undefined && { program: options.program }),
  };
  sink?.append(JSON.stringify(header) + "\n");
  const writeLine = compactLineWriter();
  const keep = Math.max(1, options.keepEvents ?? KEEP_EVENTS);
  /** Events left only in the sink (the oldest first); `events` holds the ones after them. */
  let dropped = 0;
  const eventCount = () => dropped + events.length;

  function append(e: TranscriptEvent): void {
    events.push(e);
    sink?.append(writeLine(e));
    // Trimmed in batches, so each event is moved about once.
    if (sink?.read && events.length >= 2 * keep) {
      dropped += events.length - keep;
      events.splice(0, events.length - keep);
    }
    for (const l of listeners) l(e);
  }

  /** Every event so far: from memory, or read back from the sink once some were let go. */
  function allEvents(): TranscriptEvent[] {
    if (dropped === 0) return events.slice();
    return parseTranscript(sink!.read!()).events;
  }

  /** Registers an object the backend created; a new QP gets its model. */
  function register(obj: object, type: HandleType): Ref {
    const { entry, fresh } = registry.register(obj, type);
    if (fresh && type === "qp") {
      const qp = obj as Qp;
      entry.model = createActor(qpMachine, { input: { qp_type: qp.qp_type } }).start();
      entry.observed = queryQp(entry)?.qp_state ?? 0;
      liveQpEntries.set(entry.handle, entry);
      qpIndex.add(entry);
    }
    if (fresh && type === "context") liveContexts.set(entry.handle, entry);
    return entry.ref;
  }

  /**
   * Objects the CM hands out without a creating verb of their own: librdmacm's context and PD
   * behind an id (id.verbs, a QP's default PD), and the new id a CONNECT_REQUEST carries.
   */
  function adoptContext(ctx: Context): void {
    if (registry.handleOf(ctx) !== undefined) return;
    adopt(ctx, "context");
    watch.opened(ctx);
  }
  function adoptQp(qp: Qp): void {
    adoptContext(qp.pd.context);
    if (registry.handleOf(qp.pd) === undefined) adopt(qp.pd as Pd, "pd");
    if (registry.handleOf(qp) === undefined) adopt(qp, "qp");
  }
  function adoptId(id: CmId | undefined): void {
    if (!id) return;
    if (id.verbs) adoptContext(id.verbs);
    if (id.qp) adoptQp(id.qp);
    if (registry.handleOf(id) === undefined) adopt(id, "cmId");
  }
  /** What the current call adopted, with their props (the event's `adopted`: the UI learns a device's GIDs from them). */
  let adopted: Ref[] = [];
  function adopt(obj: object, type: HandleType): void {
    adopted.push(register(obj, type));
  }

  function safeQuery(qp: Qp): QpAttr | null {
    try {
      return qp.query().attr;
    } catch {
      return null;
    }
  }

  /** ibv_query_qp of a QP entry, remembered as its last known attributes. */
  function queryQp(e: Entry): QpAttr | null {
    const a = safeQuery(e.obj as Qp);
    known.set(e.handle, a);
    return a;
  }

  /** An object this call destroyed leaves the indexes. */
  function forget(e: Entry): void {
    liveQpEntries.delete(e.handle);
    liveContexts.delete(e.handle);
    busy.delete(e.handle);
    if (e.type === "qp") qpIndex.remove(e);
  }

  /**
   * The QPs a call can change, so the only ones queried around it: its own QP and the QP it
   * points at (a send can move the responder to ERR), and, for a call during which traffic moves
   * (a post, a poll, a sleep or pollWait that lets timers fire, an event wait), every QP with send
   * WRs in flight and its peer: only those can move without a modify (a retry timer, a NAK, an
   * error reply), and a poll reveals them whichever CQ they share. A QP with no sends of its own
   * in flight and no busy peer does not move, so a program with thousands of idle QPs pays for
   * the few it uses. On rxe a QP can also move between verbs; the model catches up (the move is
   * recorded) the next time the QP is queried.
   */
  /** A QP's dest_qp_num as last queried. */
  const destOf = (e: Entry) => known.get(e.handle)?.dest_qp_num;

  function qpsToWatch(entry: Entry, method: string): Entry[] {
    const out = new Map<number, Entry>();
    const withPeer = (e: Entry | undefined) => {
      if (!e || e.destroyed) return;
      out.set(e.handle, e);
      const peer = qpIndex.peerOf(e, destOf);
      if (peer && !peer.destroyed) out.set(peer.handle, peer);
    };
    if (entry.type === "qp") withPeer(entry);
    if (TRAFFIC.has(method)) for (const h of busy) withPeer(liveQpEntries.get(h));
    return [...out.values()].sort((x, y) => x.handle - y.handle);
  }

  // Microsecond precision is all a clock here means (and keeps float noise out of transcripts).
  const nowMs = () => Math.round(backend.now() * 1000) / 1000;

  const liveQps = () => [...liveQpEntries.values()];

  function predictionContext(qpEntry: Entry, attr: QpAttrInput): PredictContext {
    const qp = qpEntry.obj as Qp;
    const ctx: PredictContext = {
      qp_num: qp.qp_num,
      known_qpns: liveQps().map((e) => (e.obj as Qp).qp_num),
      peers: liveQps()
        .filter((e) => e !== qpEntry)
        // Each QP's last query: dest_qp_num changes only by a modify of that QP, which queries it.
        .map((e) => ({ qp_num: (e.obj as Qp).qp_num, dest_qp_num: known.get(e.handle)?.dest_qp_num ?? 0 })),
    };
    try {
      const context = qp.pd.context;
      const port = attr.ah_attr?.port_num || attr.port_num || safeQuery(qp)?.port_num || 1;
      const pa = context.queryPort(port);
      ctx.link_layer = pa.link_layer;
      ctx.active_mtu = pa.active_mtu;
      ctx.max_mtu = pa.max_mtu;
      ctx.gid_indices = context.queryGidTable().map((g) => g.gid_index);
    } catch {
      // Without port facts the model predicts from the mask alone.
    }
    return ctx;
  }

  function modelState(e: Entry): number {
    return snapshotQpState(e.model!.getSnapshot().value);
  }

  function predict(entry: Entry, method: string, args: unknown[]): Prediction | undefined {
    if (entry.type !== "qp") return undefined;
    const qp = entry.obj as Qp;
    const state = modelState(entry);
    if (method === "modify") {
      const [attr, mask] = args as [QpAttrInput, number];
      const p = predictModify(qp.qp_type, state, attr ?? {}, mask ?? 0, predictionContext(entry, attr ?? {}));
      return p.ok
        ? { qp: entry.handle, outcome: "ok", state: p.to, warnings: p.warnings }
        : {
            qp: entry.handle,
            outcome: p.code,
            state,
            reason: p.reason,
            ...(p.why && { why: p.why }),
            ...(p.attribute !== undefined && { attribute: p.attribute }),
            warnings: p.warnings,
          };
    }
    if (method === "postSend") {
      // rxe refuses a post_send before RTS (the kernel's req.state < READY) and accepts one in ERR (it flushes).
      if (state < IBV_QPS_RTS && state !== IBV_QPS_ERR)
        return {
          qp: entry.handle,
          outcome: "EINVAL",
          state,
          ...because({ kind: "send-needs-rts", state }),
          warnings: [],
        };
      const wrs = (Array.isArray(args[0]) ? args[0] : [args[0]]) as SendWr[];
      const me = safeQuery(qp);
      const peerEntry = me ? qpIndex.peerOf(entry, (o) => (o === entry ? me.dest_qp_num : destOf(o))) : undefined;
      const peer = peerEntry ? safeQuery(peerEntry.obj as Qp) : null;
      const warnings = predictPostSend(qp.qp_type, wrs, {
        ...(me && { max_rd_atomic: me.max_rd_atomic }),
        ...(peer && { peer: { max_dest_rd_atomic: peer.max_dest_rd_atomic, qp_access_flags: peer.qp_access_flags } }),
      });
      return { qp: entry.handle, outcome: "ok", state, warnings };
    }
    if (method === "postRecv" && state === 0) {
      return {
        qp: entry.handle,
        outcome: "EINVAL",
        state,
        ...because({ kind: "recv-needs-init" }),
        warnings: [],
      };
    }
    return undefined;
  }

  /**
   * The model reads arguments as the contract types them; junk (`postSend([null])`, a bigint
   * mask) it cannot read goes unpredicted to the backend, whose own checks answer it and the
   * call is recorded like any failed verb.
   */
  function safePredict(entry: Entry, method: string, args: unknown[]): Prediction | undefined {
    try {
      return predict(entry, method, args);
    } catch {
      return undefined;
    }
  }

  async function call(handle: number, method: string, args: unknown[], source?: SourceSite): Promise<unknown> {
    const entry = registry.get(handle);
    if (!entry) throw argError(TypeError, undefined, { kind: "no-handle", handle: String(handle) });
    const spec = verbSpec(entry.type, method);
    if (!spec) throw argError(TypeError, undefined, { kind: "no-method", type: entry.type, method: String(method) });
    const verb = spec.verb;
    if (!Array.isArray(args))
      throw argError(TypeError, undefined, { kind: "arg-type", field: "args", expected: "array", got: seen(args) });

    if (method === "log") {
      const message = args.map((a) => (typeof a === "string" ? a : JSON.stringify(encodeValue(a, toRef)))).join(" ");
      log(message, source);
      return null;
    }
    if (method === "now") return backend.now();
    if (ended) throw new SessionStoppedError();

    const seq = eventCount() + 1;
    const wireArgs = args.map((a) => encodeValue(a, toRef, EVENT_BYTES_MAX));
    // A zeroed buffer is recorded as its length (what regMr(n) registers), not as n bytes of hex.
    if (method === "regMr" && isZeroed(args[0]))
      wireArgs[0] = (args[0] as ArrayBufferLike | ArrayBufferView).byteLength;
    const targetRef = { $handle: handle, type: entry.type };
    const decoded = registry.decodeArgs(args);
    const prediction = safePredict(entry, method, decoded);

    if (!spec.ungated) {
      const pending: PendingCall = {
        seq,
        verb,
        target: targetRef,
        method,
        args: wireArgs,
        ...(prediction && { prediction }),
        ...(source && { source }),
      };
      await gate.enter(pending);
    }

    const snapshots = !spec.ungated;
    const qpsBefore = new Map<number, QpAttr | null>();
    const watched = snapshots ? qpsToWatch(entry, method) : [];
    for (const e of watched) qpsBefore.set(e.handle, queryQp(e));
    const clock = nowMs();
    const t0 = wall();
    cmMade.length = 0;
    const cmQpBefore = entry.type === "cmId" && method === "destroyQp" ? (entry.obj as CmId).qp : undefined;
    let result: unknown;
    let error: unknown;
    let failed = false;
    try {
      const refusal = lookout.refuse(entry.type, handle, method);
      if (refusal) throw refusal;
      result = await perform(entry, method, decoded);
    } catch (e) {
      failed = true;
      error = e;
    }
    const durationMs = Math.round((wall() - t0) * 1000) / 1000;
    const clockAdvance = Math.round((nowMs() - clock) * 1000) / 1000;

    const created: Ref[] = [];
    adopted = [];
    if (!failed && spec.creates === "cmEvent" && result) {
      adoptId((result as CmEvent).id);
      adoptId((result as CmEvent).listen_id);
    }
    if (!failed && spec.creates === "qp" && result) adoptContext((result as Qp).pd.context);
    if (!failed && spec.creates === "qp" && result && registry.handleOf((result as Qp).pd) === undefined)
      adopt((result as Qp).pd as Pd, "pd");
    // A destroyed id has nothing left to adopt (and on native its fields can no longer be read).
    if (entry.type === "cmId" && !(spec.destroys && !failed)) adoptId(entry.obj as CmId);
    if (!failed && spec.creates && result && typeof result === "object") {
      const ref = register(result, spec.creates);
      created.push(ref);
      if (source?.variable) variables.set(ref.$handle, source.variable);
      if (spec.creates === "context") watch.opened(result as Context);
    }
    if (!failed && spec.destroys) {
      entry.destroyed = true;
      forget(entry);
    }
    for (const t of cmMade) adoptQp(t.qp);
    const adoptedNow = adopted;
    adopted = [];
    if (!failed && cmQpBefore) {
      // rdma_destroy_qp destroyed the id's QP, not the id.
      const qpEntry = registry.get(registry.handleOf(cmQpBefore) ?? NaN);
      if (qpEntry) {
        qpEntry.destroyed = true;
        forget(qpEntry);
      }
    }
    const librdmacm = cmMade.map((t) => ({
      qp: registry.handleOf(t.qp)!,
      qp_num: t.qp.qp_num,
      by: t.by,
      during: t.during,
      from: t.from,
      to: t.to,
      attr: encodeValue(t.attr, toRef),
      mask: t.mask,
    }));
    const cmByQp = new Map<number, CmQpTransition[]>();
    for (const t of cmMade) {
      const h = registry.handleOf(t.qp)!;
      cmByQp.set(h, [...(cmByQp.get(h) ?? []), t]);
      const e = registry.get(h)!;
      if (!qpsBefore.has(h) && !created.some((r) => r.$handle === h)) {
        qpsBefore.set(h, known.get(h) ?? null);
        if (!watched.includes(e)) watched.push(e);
      }
    }
    cmMade.length = 0;
    const notices: SessionNotice[] = failed ? [] : lookout.after(entry.type, handle, method, decoded, result);

    const completions: NonNullable<VerbEvent["completions"]> = [];
    if (!failed && entry.type === "cq" && (method === "poll" || method === "pollWait"))
      for (const wc of result as Wc[]) {
        const why = lookout.explain(handle, wc);
        completions.push({ cq: handle, wc, ...(why && { why }) });
        lookout.completed(handle, wc);
      }
    // A QP is busy while send WRs it posted are in flight (retired by their completions, a reset, a destroy).
    if (!failed && entry.type === "qp" && method === "postSend" && !entry.destroyed) busy.add(handle);
    for (const h of busy) if (!lookout.sendsInFlight(h)) busy.delete(h);

    // Snapshots after, the model's view, and state moves without a modify.
    const { qps, moves } = snapshots
      ? observeQps({ handle, method, decoded, failed, created, qpsBefore, completions, watched, result, cmByQp })
      : { qps: [], moves: [] };

    const check = prediction
      ? checkPrediction(prediction, {
          method,
          from: qpsBefore.get(handle)?.qp_state ?? prediction.state,
          after: entry.destroyed
            ? undefined
            : (known.has(handle) ? known.get(handle) : safeQuery(entry.obj as Qp))?.qp_state,
          failed,
          error,
        })
      : undefined;

    const counters = TRAFFIC.has(method)
      ? watch.changes([...liveContexts.values()].map((e) => ({ handle: e.handle, ctx: e.obj as Context })))
      : [];

    const event: VerbEvent = {
      kind: "verb",
      seq,
      verb,
      target: targetRef,
      method,
      args: wireArgs,
      clock,
      clockAdvance,
      durationMs,
      ...(!failed && { result: encodeValue(result, toRef, EVENT_BYTES_MAX) }),
      ...(failed && { error: errorToData(error) }),
      ...(created.length && { created }),
      ...(adoptedNow.length && { adopted: adoptedNow }),
      ...(prediction && { prediction }),
      ...(check && { check }),
      ...(source && { source }),
      qps,
      ...(moves.length && { moves }),
      ...(librdmacm.length && { librdmacm }),
      ...(completions.length && { completions }),
      ...(notices.length && { notices }),
      ...(counters.length && { counters }),
    };
    append(event);
    if (failed) throw error;
    const out = registry.withProps(result, created);
    if (entry.type !== "cmId" || entry.destroyed) return out;
    return { $cmId: registry.withProps(entry.obj, []) as Ref, result: out } satisfies CmIdReply;
  }

  /**
   * After a call: each QP's query against its query before (the snapshot, with the fields
   * that changed), the QP model told what happened (the modify it saw, an error completion,
   * or else the state observed), and each state move the learner did not ask for.
   */
  function observeQps(c: {
    handle: number;
    method: string;
    decoded: unknown[];
    failed: boolean;
    created: Ref[];
    qpsBefore: Map<number, QpAttr | null>;
    completions: NonNullable<VerbEvent["completions"]>;
    /** The QPs queried before the call (qpsToWatch). */
    watched: Entry[];
    result: unknown;
    cmByQp: Map<number, CmQpTransition[]>;
  }): { qps: QpSnapshot[]; moves: StateMove[] } {
    const { handle, method, decoded, failed, created, qpsBefore, completions, watched, result, cmByQp } = c;
    const qps: QpSnapshot[] = [];
    const moves: StateMove[] = [];
    const createdQps = created.flatMap((r) => (r.type === "qp" ? [registry.get(r.$handle)!] : []));
    // An async event names its QP (a fatal error moves it to ERR): compared with its last query.
    const named =
      method === "getAsyncEvent" && !failed
        ? qpIndex.onDevice(
            ((registry.get(handle)?.obj ?? {}) as Partial<Context>).device?.name ?? "",
            (result as { qp_num?: number } | null)?.qp_num ?? -1,
          )
        : undefined;
    const eventQps = named && !qpsBefore.has(named.handle) && known.has(named.handle) ? [named] : [];
    for (const e of eventQps) qpsBefore.set(e.handle, known.get(e.handle)!);
    for (const e of [...watched, ...eventQps, ...createdQps]) {
      const had = qpsBefore.has(e.handle);
      const qp = e.obj as Qp;
      const before = had ? qpsBefore.get(e.handle)! : null;
      const after = e.destroyed ? null : queryQp(e);
      // A QP created or destroyed by this call has no field-by-field diff: its snapshot says it all.
      const changes = before && after ? diffFields(before, after) : [];
      if (changes.length || e.handle === handle || !before !== !after)
        qps.push({ qp: e.handle, qp_num: qp.qp_num, before, after, changes });
      if (!after || !e.model) continue;
      const modelBefore = modelState(e);
      const byCm = cmByQp.get(e.handle);
      if (byCm) {
        // librdmacm's own ibv_modify_qp calls: the model sees each, the move says who made it.
        for (const t of byCm) {
          try {
            e.model.send({ type: "MODIFY", attr: t.attr, mask: t.mask, context: predictionContext(e, t.attr) });
          } catch {
            // OBSERVED below syncs the model to the QP.
          }
        }
        const last = byCm[byCm.length - 1];
        moves.push({
          qp: e.handle,
          qp_num: qp.qp_num,
          from: byCm[0].from,
          to: last.to,
          cause: `made by librdmacm: ${[...new Set(byCm.map((t) => t.by))].join(", ")} in ${last.during}`,
        });
      } else if (e.handle === handle && method === "modify") {
        const [attr, mask] = decoded as [QpAttrInput, number];
        if (!failed) {
          try {
            e.model.send({
              type: "MODIFY",
              attr: attr ?? {},
              mask: mask ?? 0,
              context: predictionContext(e, attr ?? {}),
            });
          } catch {
            // The backend took attributes the model cannot read: OBSERVED below syncs it to the QP.
          }
        }
      } else if (after.qp_state !== modelBefore) {
        const bad = completions.find(
          (c) => c.wc.qp_num === qp.qp_num && c.wc.status !== IBV_WC_SUCCESS && c.wc.status !== IBV_WC_WR_FLUSH_ERR,
        );
        if (bad && after.qp_state === IBV_QPS_ERR) {
          e.model.send({ type: "COMPLETION_ERROR", status: bad.wc.status });
          moves.push({
            qp: e.handle,
            qp_num: qp.qp_num,
            from: modelBefore,
            to: after.qp_state,
            cause: `a completion with status ${bad.wc.status} (${wcStatusName(bad.wc.status)})`,
          });
        } else {
          moves.push({
            qp: e.handle,
            qp_num: qp.qp_num,
            from: modelBefore,
            to: after.qp_state,
            cause:
              after.qp_state === IBV_QPS_ERR
                ? "an error on the wire (its completions say which when polled)"
                : "unexplained: the backend moved the QP without a modify",
          });
        }
      }
      const modelNow = modelState(e);
      if (modelNow !== after.qp_state) e.model.send({ type: "OBSERVED", state: after.qp_state });
      e.observed = after.qp_state;
    }
    return { qps, moves };
  }

  async function perform(entry: Entry, method: string, args: unknown[]): Promise<unknown> {
    // Verbs on a destroyed object reach the backend, which answers as libibverbs would (EINVAL);
    // MR bytes are ours to guard.
    const obj = entry.obj as Record<string, (...a: unknown[]) => unknown>;
    if (entry.type === "mr" && (method === "read" || method === "write")) {
      if (entry.destroyed) throw argError(TypeError, undefined, { kind: "mr-deregistered", mr: `mr${entry.handle}` });
      return mrBytes(entry.obj as Mr, method, args);
    }
    if (entry.type === "pd" && method === "regMr") {
      // The learner's buffer is copied: over the bridge it could not be shared anyway, and
      // in-process it must behave the same (read and write through mr.read/mr.write).
      const [memory, access] = args;
      const mem = memory instanceof Uint8Array ? new Uint8Array(memory) : memory;
      return (entry.obj as { regMr: (m: unknown, a: unknown) => unknown }).regMr(mem, access);
    }
    if (entry.type === "verbs" && method === "sleep") return backend.sleep(args[0] as number);
    if (entry.type === "verbs" && (method === "setLink" || method === "clearLink" || method === "getLink")) {
      if (!backend.lab) throw new VerbsError(SET_LINK_VERB, errnos.EOPNOTSUPP, because({ kind: "link-unsupported" }));
      if (method === "getLink") return backend.lab.getLink();
      linkChanged = true;
      return method === "setLink" ? backend.lab.setLink(args[0] as LinkFaults) : backend.lab.clearLink();
    }
    const fn = obj[method];
    if (typeof fn !== "function") throw argError(TypeError, undefined, { kind: "no-method", type: entry.type, method });
    return await fn.apply(entry.obj, args);
  }

  /** mr.read/mr.write's offset and length: integers, else a RangeError naming the field (as these calls always threw). */
  function integerArg(field: string, v: unknown): void {
    if (!Number.isInteger(v))
      throw argError(RangeError, undefined, { kind: "arg-type", field, expected: "integer", got: seen(v) });
  }

  function mrBytes(mr: Mr, method: string, args: unknown[]): unknown {
    const offset = (args[0] as number | undefined) ?? 0;
    integerArg("offset", offset);
    if (offset < 0 || offset > mr.length)
      throw argError(RangeError, undefined, { kind: "mr-offset", offset, mrLength: mr.length });
    if (method === "read") {
      const len = (args[1] as number | undefined) ?? mr.length - offset;
      integerArg("length", len);
      if (len < 0 || offset + len > mr.length)
        throw argError(RangeError, undefined, {
          kind: "mr-past-end",
          op: "read",
          offset,
          length: len,
          mrLength: mr.length,
        });
      return mr.bytes.slice(offset, offset + len);
    }
    const data = args[1];
    const bytes =
      data instanceof Uint8Array ? data : Array.isArray(data) ? Uint8Array.from(data as number[]) : undefined;
    if (!bytes)
      throw argError(TypeError, "mr.write", { kind: "arg-type", field: "data", expected: "mr-data", got: seen(data) });
    if (offset + bytes.length > mr.length)
      throw argError(RangeError, undefined, {
        kind: "mr-past-end",
        op: "write",
        offset,
        length: bytes.length,
        mrLength: mr.length,
      });
    mr.bytes.set(bytes, offset);
    return null;
  }

  function log(message: string, source?: SourceSite): void {
    append({ kind: "log", seq: eventCount() + 1, clock: nowMs(), message, ...(source && { source }) });
    options.onLog?.(message);
  }

  function end(outcome: "ok" | "error" | "stopped", error?: unknown): void {
    if (ended) return;
    ended = true;
    append({
      kind: "end",
      seq: eventCount() + 1,
      clock: nowMs(),
      outcome,
      ...(error !== undefined && { error: errorToData(error) }),
    });
    sink?.close?.();
  }

  const session: Session = {
    backend,
    gate,
    header,
    call,
    verbs: undefined as never,
    events: allEvents,
    eventCount,
    transcript: () => ({ header, events: allEvents() }),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    qps(): QpModelView[] {
      return liveQpsAll().map((e) => ({
        qp: e.handle,
        qp_num: (e.obj as Qp).qp_num,
        qp_type: (e.obj as Qp).qp_type,
        state: modelState(e),
        observed: e.observed ?? 0,
        destroyed: e.destroyed,
      }));
    },
    mrBytes(max = 4096) {
      return registry
        .all()
        .filter((e) => e.type === "mr" && !e.destroyed)
        .map((e) => {
          const mr = e.obj as Mr;
          return { handle: e.handle, bytes: mr.bytes.slice(0, Math.min(max, mr.length)) };
        });
    },
    counters() {
      const out: { handle: number; device: string; counters: Record<string, number> }[] = [];
      for (const e of registry.all()) {
        if (e.type !== "context" || e.destroyed) continue;
        const ctx = e.obj as Context;
        try {
          out.push({ handle: e.handle, device: ctx.device.name, counters: { ...ctx.queryCounters() } });
        } catch {
          // Counters are optional (a device without hw_counters).
        }
      }
      return out;
    },
    release() {
      const live = (type: string) => registry.all().filter((e) => e.type === type && !e.destroyed);
      for (const e of live("cmEvent")) attempt(() => (e.obj as CmEvent).ack());
      for (const e of live("cmId").reverse()) attempt(() => (e.obj as CmId).destroy());
      for (const e of live("cmChannel").reverse()) attempt(() => (e.obj as CmEventChannel).destroy());
      // As a process's exit does: a QP left behind would go on sending (rxe retries for ever at
      // retry_cnt 7) into the next run on the same device, and into its counters.
      for (const e of live("qp").reverse()) attempt(() => (e.obj as Qp).destroy());
      // A backend serves many sessions (lessons:check replays, the app's runs): faults this
      // session set must not leak into the next one, even when its program was stopped early.
      if (linkChanged && backend.lab) attempt(() => backend.lab?.clearLink());
      linkChanged = false;
    },
    async run(program) {
      try {
        await program(session.verbs);
        end("ok");
        return { outcome: "ok" };
      } catch (e) {
        const stopped = e instanceof SessionStoppedError;
        end(stopped ? "stopped" : "error", stopped ? undefined : e);
        return stopped ? { outcome: "stopped" } : { outcome: "error", error: e };
      }
    },
    end,
    log,
  };
  const liveQpsAll = () => registry.all().filter((e) => e.type === "qp");
  (session as { verbs: unknown }).verbs = createVerbsFacade(session, backend.kind);
  return session;
}
