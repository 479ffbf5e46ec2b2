/**
 * The transcript: one JSON object a line, append-only. Line 1 is the header (schema name
 * and version); every following line is one event, numbered from 1. All exports are pure
 * functions of this log. Browser-safe: reading and writing files is in transcript-file.ts.
 *
 * Versioning: `version` is bumped when a field changes meaning or goes away; new optional
 * fields may be added within a version (readers ignore what they do not know). Version 2 lets a
 * line leave out a QP snapshot's `before` (it is the QP's previous snapshot's `after` earlier in
 * the file) and `after` (it is `before` with its `changes` applied), so a verb costs its changes,
 * not two full ibv_query_qp results; a file of either version reads back to the same full events.
 */
import type { ErrorData } from "../../verbs/errors.js";
import type { VerbFailure } from "../../verbs/verb-failure.js";
import type { Pitfall } from "../../state-machines/qp.js";
import type { QpAttr, Wc } from "../../verbs/types.js";
import { MAX_DEPTH, nestingDepth, type HandleType, type Ref, type WireValue } from "./wire.js";
import type { WcWhy } from "./explain-wc.js";

export const TRANSCRIPT_SCHEMA = "verbslab.transcript";
export const TRANSCRIPT_VERSION = 2;
/** The versions this VerbsLab reads (version 1 files are version 2 without any snapshot left out). */
export const TRANSCRIPT_VERSIONS_READ: readonly number[] = [1, 2];

export interface TranscriptHeader {
  kind: "header";
  schema: typeof TRANSCRIPT_SCHEMA;
  version: 1 | typeof TRANSCRIPT_VERSION;
  /** ISO time the session started. */
  created: string;
  backend: "sim" | "native";
  /** The simulator's seed, so a replay on the simulator gives the same keys and QPNs. */
  seed?: number;
  /** The learner program's file name or lesson id, if known. */
  program?: string;
}

/** One field of ibv_query_qp that differs between before and after ("ah_attr.grh.dgid"). */
export interface FieldChange {
  field: string;
  before: WireValue;
  after: WireValue;
}

/** ibv_query_qp of one QP around a call. `before`/`after` null: the QP did not exist (yet / any more). */
export interface QpSnapshot {
  qp: number;
  qp_num: number;
  before: QpAttr | null;
  after: QpAttr | null;
  changes: FieldChange[];
}

/** What the model said before the call. */
export interface Prediction {
  /** The QP (handle) the prediction is about. */
  qp: number;
  /** "ok": the call succeeds and the QP ends in `state`; otherwise the errno name predicted. */
  outcome: "ok" | string;
  /** IBV_QPS_* value the QP should be in after the call. */
  state: number;
  reason?: string;
  /** Why the call is predicted to fail, as data (verbs/verb-failure.ts): `reason` in any language. */
  why?: VerbFailure;
  attribute?: string;
  warnings: Pitfall[];
}

/**
 * Where in the learner's program a call was made: 1-based line and column of main.ts (the
 * TypeScript the learner wrote, not the JavaScript it compiled to), and the variable the
 * call's result was assigned to, when the line says (`const a = await pd.createQp(…)` → "a").
 */
export interface SourceSite {
  line: number;
  column: number;
  variable?: string;
}

/**
 * One side of a check as data: what the model expected of a call, or what the device did.
 * `moved`: a modify that succeeded, from one state to another (the same one: it stays);
 * `accepted`: any other call that succeeded (a post is judged only by whether it is accepted);
 * `failed`: the call threw, with its errno name (or the class of a non-verbs error), the
 * reason in English as the error or the model gave it, and why as data when there is one.
 */
export type CheckOutcome =
  | { kind: "moved"; from: number; to: number }
  | { kind: "accepted" }
  | { kind: "failed"; code: string; reason?: string; why?: VerbFailure };

/** How prediction and reality compared. Disagreements are kept and shown, never hidden. */
export interface Check {
  agree: boolean;
  /** What the model expected, in words ("INIT → RTR"; "EINVAL: RTR needs …"): `outcomes.expected` in English. */
  expected: string;
  /** What happened ("INIT → RTR"; "EINVAL"): `outcomes.actual` in English. */
  actual: string;
  /** On a disagreement, which way the model was wrong, in English (prediction-check.ts `checkNoteText`). */
  note?: string;
  /**
   * Both sides as data, on a disagreement only, for the UI to word in the learner's language (prediction-check.ts words
   * the English above from it). Absent in transcripts written before it was recorded: those show
   * their English.
   */
  outcomes?: { expected: CheckOutcome; actual: CheckOutcome };
}

/** A QP that changed state without a modify (an error completion, a flush, a fatal event). */
export interface StateMove {
  qp: number;
  qp_num: number;
  from: number;
  to: number;
  /** Why the model thinks it moved ("a completion with status 12 (IBV_WC_RETRY_EXC_ERR)"), or "unexplained". */
  cause: string;
}

/**
 * A beginner mistake the session saw pass silently (the call succeeded): shown to the learner.
 * `cq_rounded_up`: more WRs can complete into a CQ than its requested cqe, and no more than the
 * cqe rxe rounded it up to (the rounding hides the mistake); `read_before_poll`: an MR read of bytes an RDMA
 * READ/WRITE, an atomic or a posted RECV in flight changes, before its completion was polled;
 * `cq_overflow`: more completions on their way into a CQ than it holds; `late_rearm`: see LateRearm.
 */
export type SessionNotice = CqRoundedUp | ReadBeforePoll | LateRearm | CqOverflow;

/**
 * The data of a `cq_overflow` notice: more completions are on their way into a CQ than it
 * holds, with no poll in between to make room. A full CQ drops the next completion and raises
 * IBV_EVENT_CQ_ERR (rxe_cq_post), so a completion the program waits for never comes.
 */
export interface CqOverflow {
  id: "cq_overflow";
  text: string;
  /** The CQ ("cq0"), the cqe the device gave it, and the completions posted work will put into it. */
  cq: string;
  cqe: number;
  pending: number;
}

/** The data of a `cq_rounded_up` notice; `text` is its English (notice-text.ts), as exports print it. */
export interface CqRoundedUp {
  id: "cq_rounded_up";
  text: string;
  /** The cqe asked for, and the cqe the device returned. */
  asked: number;
  actual: number;
  device: string;
  /** How many WRs can complete into the CQ, and from which QPs (sends and receives; the learner's variable where known). */
  wrs: number;
  users: { qpn: number; variable?: string; send: number; recv: number }[];
}

/**
 * The data of a `late_rearm` notice: a CQ re-armed (ibv_req_notify_cq) after the program drained
 * it following an event, so a completion that arrived between the last poll and the arm raises no
 * event, and a program that then sleeps on the channel may sleep for ever with work in the CQ.
 */
export interface LateRearm {
  id: "late_rearm";
  text: string;
  /** The CQ ("cq0"), and how many completions the poll that emptied it returned (fewer than it asked for). */
  cq: string;
  lastPoll: number;
}

/** The data of a `read_before_poll` notice. */
export interface ReadBeforePoll {
  id: "read_before_poll";
  text: string;
  /** The MR read ("mr1") and the bytes read. */
  mr: string;
  offset: number;
  length: number;
  /**
   * The WR in flight that changes them: a send WR's opcode (IBV_WR_*), or `recv` for a posted
   * receive an incoming SEND lands in; its wr_id, QP and whether it is signaled.
   */
  opcode?: number;
  recv?: true;
  wr_id: number;
  qpn: number;
  /** The learner's variable for that QP, where the line that created it says (the panes' name). */
  variable?: string;
  signaled: boolean;
}

/** One QP transition librdmacm made for the program (verbs/cm.ts CmQpTransition, as recorded). */
export interface LibrdmacmTransition {
  /** The QP's handle and number. */
  qp: number;
  qp_num: number;
  /** The librdmacm function that made it ("ucma_modify_qp_rtr") and the call it ran in ("rdma_accept"). */
  by: string;
  during: string;
  /** IBV_QPS_* before and after. */
  from: number;
  to: number;
  /** The attributes and mask of its ibv_modify_qp. */
  attr: WireValue;
  mask: number;
}

export interface VerbEvent {
  kind: "verb";
  seq: number;
  /** The C function (`ibv_modify_qp`), or `verbslab_*` for what has none (sleep, mr read/write). */
  verb: string;
  /** The object called and the method, as on the call surface. */
  target: { $handle: number; type: HandleType };
  method: string;
  args: WireValue[];
  /** The backend's clock when the call started, and how far it moved during the call (ms). */
  clock: number;
  clockAdvance: number;
  /** Wall time the call took, in ms. Not reproducible: see WALL_TIME_FIELDS. */
  durationMs: number;
  result?: WireValue;
  error?: ErrorData;
  /** Objects the call created (their handles), so replays and exports can name them. */
  created?: Ref[];
  /**
   * Objects librdmacm made or handed out during the call without a verb of their own (an id's
   * context and PD, a CONNECT_REQUEST's new id), with their props: what the UI knows them by.
   */
  adopted?: Ref[];
  prediction?: Prediction;
  check?: Check;
  /** The line of the learner's program that made the call, when the runner could tell. */
  source?: SourceSite;
  qps: QpSnapshot[];
  moves?: StateMove[];
  /**
   * The ibv_modify_qp calls librdmacm made inside this CM call (rdma_create_qp, rdma_accept,
   * rdma_disconnect, or rdma_get_cm_event handing out CONNECT_RESPONSE or REJECTED), in order:
   * made by librdmacm, not by the program.
   */
  librdmacm?: LibrdmacmTransition[];
  /**
   * Completions the call returned (poll, pollWait), with the CQ they came from; a failed one with
   * why, when the app knows (the simulator's exact reason, or one inferred from both sides' objects).
   */
  completions?: { cq: number; wc: Wc; why?: WcWhy }[];
  /** Beginner mistakes this call passed silently. */
  notices?: SessionNotice[];
  /** Hardware counter deltas over the call, per context, only the non-zero ones. */
  counters?: { context: number; delta: Record<string, number> }[];
}

export interface LogEvent {
  kind: "log";
  seq: number;
  clock: number;
  message: string;
  /** The `verbs.log(…)` line of the learner's program, when the runner could tell. */
  source?: SourceSite;
}

/** The program ended: normally, with an error, or stopped from the step gate. */
export interface EndEvent {
  kind: "end";
  seq: number;
  clock: number;
  outcome: "ok" | "error" | "stopped";
  error?: ErrorData;
}

export type TranscriptEvent = VerbEvent | LogEvent | EndEvent;
export type TranscriptLine = TranscriptHeader | TranscriptEvent;

export interface Transcript {
  header: TranscriptHeader;
  events: TranscriptEvent[];
}

/** A transcript that failed validation: names the line (1-based) and field. */
export class TranscriptError extends Error {
  readonly line: number;
  readonly field?: string;
  constructor(line: number, message: string, field?: string) {
    super(`transcript line ${line}${field ? `, field "${field}"` : ""}: ${message}`);
    this.name = "TranscriptError";
    this.line = line;
    if (field !== undefined) this.field = field;
  }
}

/**
 * The only fields of a transcript that hold wall time: when it was recorded (`header.created`)
 * and how long each call took (`durationMs` of a verb event). Everything else is a function of
 * the seed and the calls; replays and comparisons leave these out (`reproducibleJsonLines`).
 */
export const WALL_TIME_FIELDS = { header: ["created"], verb: ["durationMs"] } as const;

/**
 * The transcript as JSON lines without its wall time (WALL_TIME_FIELDS): byte for byte the
 * same for the same seed and the same calls, so two runs can be compared as text.
 */
export function reproducibleJsonLines(t: Transcript): string {
  const drop = (line: object, fields: readonly string[]) => {
    const out: Record<string, unknown> = { ...line };
    for (const f of fields) delete out[f];
    return out;
  };
  return [
    drop(t.header, WALL_TIME_FIELDS.header),
    ...t.events.map((e) => (e.kind === "verb" ? drop(e, WALL_TIME_FIELDS.verb) : e)),
  ]
    .map((l) => JSON.stringify(l) + "\n")
    .join("");
}

/**
 * Writes events as compact JSON lines (version 2): a QP snapshot leaves out `before` when it
 * equals that QP's last `after` already written, and `after` when it is `before` with `changes` applied. Stateful: one
 * writer per file, fed every event in order. `expandSnapshots` undoes it on import.
 */
export function compactLineWriter(): (e: TranscriptEvent) => string {
  const last = new Map<number, QpAttr | null>();
  return (e) => {
    if (e.kind !== "verb" || e.qps.length === 0) return JSON.stringify(e) + "\n";
    const qps = e.qps.map((q) => {
      const prev = last.get(q.qp);
      last.set(q.qp, q.after);
      const out: Partial<QpSnapshot> = { qp: q.qp, qp_num: q.qp_num };
      if (!(q.before && prev && sameJson(prev, q.before))) out.before = q.before;
      // Left out only when the reader rebuilds it exactly (checked here, not assumed).
      if (!(q.before && q.after && sameJson(withChanges(q.before, q.changes), q.after))) out.after = q.after;
      out.changes = q.changes;
      return out;
    });
    return JSON.stringify({ ...e, qps }) + "\n";
  };
}

/** `before` with each change's `after` set at its dotted path: a snapshot's `after`, rebuilt. */
function withChanges(before: QpAttr, changes: FieldChange[]): QpAttr {
  if (changes.length === 0) return before;
  const out = structuredClone(before) as unknown as Json;
  for (const c of changes) {
    const path = c.field.split(".");
    let o = out;
    for (const k of path.slice(0, -1)) {
      if (typeof o[k] !== "object" || o[k] === null) o[k] = {};
      o = o[k] as Json;
    }
    o[path.at(-1)!] = c.after;
  }
  return out as unknown as QpAttr;
}

/** Field-by-field equality of two query results (JSON data: numbers, strings, nested objects). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => sameJson((a as Json)[k], (b as Json)[k]));
}

/**
 * Fills in the snapshot halves a compact (version 2) file left out, in file order; a full
 * snapshot passes unchanged. Throws a TranscriptError naming the line when a `before` is left
 * out for a QP no earlier line snapshotted.
 */
export function expandSnapshots(events: TranscriptEvent[]): TranscriptEvent[] {
  const last = new Map<number, QpAttr | null>();
  events.forEach((e, i) => {
    if (e.kind !== "verb") return;
    e.qps.forEach((q, k) => {
      if (q.before === undefined) {
        if (!last.has(q.qp))
          throw new TranscriptError(
            i + 2,
            `left out, but no earlier line has a snapshot of QP handle ${q.qp}`,
            `qps[${k}].before`,
          );
        q.before = last.get(q.qp)!;
      }
      if (q.after === undefined) q.after = q.before && withChanges(q.before, q.changes);
      last.set(q.qp, q.after);
    });
  });
  return events;
}

/** The transcript as compact JSON lines (header first, version 2), each line ending in "\n". */
export function toJsonLines(t: Transcript): string {
  const write = compactLineWriter();
  return [JSON.stringify({ ...t.header, version: TRANSCRIPT_VERSION }) + "\n", ...t.events.map(write)].join("");
}

type Json = Record<string, unknown>;

function need(line: number, o: Json, field: string, type: "string" | "number" | "object" | "boolean"): void {
  const v = o[field];
  if (v === undefined) throw new TranscriptError(line, `missing (expected a ${type})`, field);
  if (type === "object" ? typeof v !== "object" || v === null : typeof v !== type)
    throw new TranscriptError(line, `expected a ${type}, got ${JSON.stringify(v)?.slice(0, 40)}`, field);
}

/** Checks one parsed line; returns it typed or throws a TranscriptError naming the line and field. */
export function validateLine(o: unknown, line: number): TranscriptLine {
  if (typeof o !== "object" || o === null || Array.isArray(o))
    throw new TranscriptError(line, "expected a JSON object");
  const j = o as Json;
  if (line === 1 && j.kind === undefined)
    throw new TranscriptError(line, 'not a VerbsLab transcript (no header: expected a "kind": "header" entry)', "kind");
  need(line, j, "kind", "string");
  if (line === 1 || j.kind === "header") {
    if (j.kind !== "header")
      throw new TranscriptError(line, `the first line must be the header, got "${j.kind}"`, "kind");
    if (line !== 1) throw new TranscriptError(line, "a header may only be the first line", "kind");
    if (j.schema !== TRANSCRIPT_SCHEMA)
      throw new TranscriptError(line, `not a VerbsLab transcript (schema ${JSON.stringify(j.schema)})`, "schema");
    need(line, j, "version", "number");
    if (!TRANSCRIPT_VERSIONS_READ.includes(j.version as number))
      throw new TranscriptError(
        line,
        `version ${j.version} is not supported (this VerbsLab reads versions ${TRANSCRIPT_VERSIONS_READ.join(" and ")})`,
        "version",
      );
    need(line, j, "created", "string");
    if (j.backend !== "sim" && j.backend !== "native")
      throw new TranscriptError(line, `expected "sim" or "native", got ${JSON.stringify(j.backend)}`, "backend");
    return j as unknown as TranscriptHeader;
  }
  need(line, j, "seq", "number");
  if (j.seq !== line - 1)
    throw new TranscriptError(line, `events are numbered in order: expected ${line - 1}, got ${j.seq}`, "seq");
  need(line, j, "clock", "number");
  switch (j.kind) {
    case "verb": {
      need(line, j, "verb", "string");
      need(line, j, "method", "string");
      need(line, j, "target", "object");
      const t = j.target as Json;
      if (typeof t.$handle !== "number") throw new TranscriptError(line, "expected a handle number", "target.$handle");
      if (!Array.isArray(j.args)) throw new TranscriptError(line, "expected an array", "args");
      // No event nests deeply (values are capped at MAX_DEPTH when recorded); a file that does
      // would overflow the stacks of the exporters and the replay.
      if (nestingDepth(j, MAX_DEPTH + 4) > MAX_DEPTH + 4)
        throw new TranscriptError(line, `nested more than ${MAX_DEPTH} deep`, "args");
      need(line, j, "clockAdvance", "number");
      need(line, j, "durationMs", "number");
      if (!Array.isArray(j.qps)) throw new TranscriptError(line, "expected an array", "qps");
      (j.qps as Json[]).forEach((q, i) => {
        if (typeof q?.qp !== "number") throw new TranscriptError(line, "expected a handle number", `qps[${i}].qp`);
        if (!Array.isArray(q.changes)) throw new TranscriptError(line, "expected an array", `qps[${i}].changes`);
      });
      if (j.error !== undefined) {
        const e = j.error as Json;
        if (typeof e?.name !== "string" || typeof e.message !== "string")
          throw new TranscriptError(line, "expected { name, message, … }", "error");
      }
      for (const k of ["created", "adopted"] as const)
        if (j[k] !== undefined && !Array.isArray(j[k])) throw new TranscriptError(line, "expected an array of refs", k);
      return j as unknown as VerbEvent;
    }
    case "log":
      need(line, j, "message", "string");
      return j as unknown as LogEvent;
    case "end":
      if (j.outcome !== "ok" && j.outcome !== "error" && j.outcome !== "stopped")
        throw new TranscriptError(line, `expected "ok", "error" or "stopped"`, "outcome");
      return j as unknown as EndEvent;
    default:
      throw new TranscriptError(line, `unknown event kind "${j.kind}" (expected verb, log or end)`, "kind");
  }
}

/** Parses JSON lines (blank lines ignored, a torn last line from a crash reported as such). */
export function parseTranscript(text: string): Transcript {
  const lines = text.split("\n");
  const parsed: TranscriptLine[] = [];
  let n = 0;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === "") continue;
    n++;
    let o: unknown;
    try {
      o = JSON.parse(raw);
    } catch (e) {
      const last = lines.slice(i + 1).every((l) => l.trim() === "");
      // Only a line after the header can be one torn by a crash; a first line that is not JSON is another file.
      throw new TranscriptError(
        n,
        n === 1
          ? `not a VerbsLab transcript (it starts with a JSON header line; this is not JSON: ${(e as Error).message})`
          : last
            ? `not valid JSON (the line is cut short: was the program killed while writing? delete the line to keep the rest)`
            : `not valid JSON: ${(e as Error).message}`,
      );
    }
    parsed.push(validateLine(o, n));
  }
  if (parsed.length === 0) throw new TranscriptError(1, "the transcript is empty (expected a header line)");
  const [header, ...events] = parsed;
  return { header: header as TranscriptHeader, events: expandSnapshots(events as TranscriptEvent[]) };
}

/** Parses a whole-transcript JSON export ({ header, events }) or JSON lines, validating every entry. */
export function importTranscript(text: string): Transcript {
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{") && !trimmed.includes("\n{")) {
    let o: unknown;
    try {
      o = JSON.parse(trimmed);
    } catch (e) {
      throw new TranscriptError(1, `not valid JSON: ${(e as Error).message}`);
    }
    const j = o as Json;
    if (j && typeof j === "object" && "header" in j) {
      if (!Array.isArray(j.events)) throw new TranscriptError(1, "expected an array", "events");
      const header = validateLine(j.header, 1) as TranscriptHeader;
      const events = (j.events as unknown[]).map((e, i) => validateLine(e, i + 2) as TranscriptEvent);
      return { header, events: expandSnapshots(events) };
    }
  }
  return parseTranscript(text);
}
