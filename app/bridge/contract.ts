/**
 * The bridge contract: every request, response and event between the renderer and its host
 * (Electron main or the web server), in one file. The host validates every request against
 * the schemas below before acting on it (`parseRequest`); the typed clients in this folder
 * are the only code that touches raw IPC or the WebSocket.
 *
 * Messages are wire-encoded (./wire.ts) on both transports, so bigint, bytes and NaN survive
 * and objects living in the backend process travel as HandleRefs.
 *
 * Learner code runs in a Web Worker in the renderer; each verb it calls becomes one
 * `verbs.call` request `{ handle, method, args }`, answered when the session has performed
 * the verb (which may be much later: the step gate can hold it until the learner steps).
 */
import type { DeviceInfo, PortCounters, QpAttr, QpCap, Wc } from "../../verbs/types.js";
import { s, type Infer, type Schema } from "./schema.js";
import type { HandleRef } from "./wire.js";

import { BridgeValidationError } from "./schema.js";
export { BridgeValidationError };
export type { HandleRef } from "./wire.js";

/** Bumped when a message changes shape incompatibly. */
export const BRIDGE_VERSION = 1;

/** Electron IPC channel names (the preload and main use exactly these). */
export const IPC_REQUEST_CHANNEL = "verbslab:request";
export const IPC_EVENT_CHANNEL = "verbslab:event";
/** The name under which the preload exposes the bridge on `window`. */
export const PRELOAD_GLOBAL = "verbslabBridge";
/** Web mode: the WebSocket path and the query parameter / header carrying the per-run token. */
export const WS_PATH = "/bridge";
export const TOKEN_PARAM = "token";

// ─── Shared data ──────────────────────────────────────────────────────────────────────────

export type BackendKind = "sim" | "native";

/** One backend the learner can choose. */
export interface BackendChoice {
  kind: BackendKind;
  available: boolean;
  /** Why it cannot be used and what to install (native without a device), when `available` is false. */
  unavailableReason?: string;
  /** ibv_get_device_list on that backend (empty when unavailable). */
  devices: DeviceInfo[];
}

/** The backend process, as the supervisor sees it. */
export interface BackendStatus {
  state: "starting" | "running" | "died" | "restarting" | "stopped";
  kind: BackendKind | null;
  /** OS process id of the backend process (the e2e test kills it to test recovery). */
  pid?: number;
  /** How many times the supervisor has restarted it since the host started. */
  restarts: number;
  /** How the previous process ended, if one did. */
  lastExit?: { code: number | null; signal: string | null; at: number; reason: string };
  /** The JSONL transcript file the session appends to (survives restarts). */
  transcriptPath?: string;
}

/** An error as the renderer receives it. A VerbsError keeps its fields (code, errno, verb, reason, attribute, badWrIndex). */
export interface BridgeErrorData {
  /** "VerbsError", "TypeError", "RangeError", "BridgeValidationError", "BackendDiedError", "Error", … */
  name: string;
  message: string;
  code?: string;
  errno?: number;
  verb?: string;
  reason?: string;
  attribute?: string;
  badWrIndex?: number;
  /** For BridgeValidationError: where in the request the value was wrong. */
  path?: string;
  /** Learner-code stack (line numbers into the editor), when known. */
  stack?: string;
}

/**
 * One transcript event as the session writes it (one JSON line each). The session
 * (app/session) owns the exact schema; this is the part every event shares plus the
 * fields the UI reads. Unknown fields pass through.
 */
export interface TranscriptEvent {
  /** 1, 2, 3, … within a transcript. */
  seq: number;
  /** Event kind, e.g. "call", "run-start", "run-end", "log", "backend-restart", "lesson-step". */
  kind: string;
  /** Backend clock (ms) when it happened. */
  t?: number;
  [field: string]: unknown;
}

/** The step gate: what the session is holding, if anything. */
export interface GateState {
  /** "run": verbs go through; "step": pause before each verb; "idle": no program running. */
  mode: "idle" | "run" | "step";
  paused: boolean;
  /** The verb waiting at the gate. */
  pending?: {
    handle: string | null;
    method: string;
    /** The C verb it is (`ibv_modify_qp`). */
    verb?: string;
    args: unknown[];
    /** What the QP model predicts the call will do (new state, or the error it expects). */
    prediction?: unknown;
  };
  /** Pausing again at the next verb of this kind ("continue" clears it). */
  runTo?: "postSend" | "poll";
}

/** A QP as the live query table shows it. */
export interface QpSnapshot {
  handle: string;
  qp_num: number;
  qp_type: number;
  pd: string;
  send_cq: string;
  recv_cq: string;
  cap: QpCap;
  /** ibv_query_qp with every attribute; absent after destroy. */
  attr?: QpAttr;
  /** Work requests posted and not yet completed, when the backend can tell. */
  sq_outstanding?: number;
  rq_outstanding?: number;
}

/** Everything the panes show, as of the last event. */
export interface StateSnapshot {
  backend: BackendKind;
  /** Backend clock in ms (virtual on the simulator). */
  clock: number;
  /** Seq of the last transcript event included. */
  seq: number;
  devices: DeviceInfo[];
  contexts: { handle: string; device: string; counters?: PortCounters }[];
  pds: { handle: string; context: string }[];
  mrs: {
    handle: string;
    pd: string;
    addr: number;
    length: number;
    lkey: number;
    rkey: number;
    access: number;
    /** The first bytes of the MR (at most 4 KiB) for the hex view. */
    bytes?: Uint8Array;
  }[];
  cqs: { handle: string; context: string; cqe: number; /** completions polled so far, newest last */ polled?: Wc[] }[];
  qps: QpSnapshot[];
  /** Anything else the session reports (packet timeline on the simulator, …). */
  extra?: Record<string, unknown>;
}

export interface LessonSummary {
  id: string;
  title: string;
  /** Position in the course (1-based). */
  order: number;
  summary?: string;
}

export interface LessonStep {
  id: string;
  title: string;
  /** Markdown. */
  text: string;
  hints: string[];
}

export interface LessonDetail extends LessonSummary {
  /** Markdown introduction. */
  text: string;
  steps: LessonStep[];
  /** The code that starts in the editor. */
  starterCode: string;
}

/** Per lesson: which steps' checks have passed. */
export type LessonProgress = Record<string, { passedSteps: string[]; completed: boolean }>;

export interface StepCheckResult {
  stepId: string;
  passed: boolean;
  /** Why not, in the learner's terms. */
  detail?: string;
}

export type ExportFormat = "md" | "html" | "json" | "c";

export interface HostInfo {
  host: "electron" | "web";
  bridgeVersion: number;
  appVersion: string;
  platform: string;
  backend: BackendStatus;
}

// ─── Requests (renderer → host) ───────────────────────────────────────────────────────────

const id = s.string({ min: 1, max: 200 });
const backendKind = s.literal("sim", "native");
const exportFormat = s.literal("md", "html", "json", "c");
const empty = s.object({});

/**
 * Every request: its params schema (checked by the host) and its result type. Add a request
 * here and both the host's handler table and the clients' `request()` know its types.
 */
export const requestSchemas = {
  /** Who is hosting, versions, and the backend process status. */
  "host.info": empty,
  /** The backend process status (pid, restarts, last exit). */
  "backend.status": empty,
  /** The backends that exist here, with devices, and why native is unavailable if it is. */
  "backend.list": empty,
  /** Switch backend: ends the current session and starts a new one on `kind`. */
  "backend.choose": s.object({ kind: backendKind, seed: s.optional(s.number({ integer: true, min: 0 })) }),
  /** Start a session (a fresh transcript). `seed` makes the simulator deterministic. */
  "session.start": s.object({
    backend: s.optional(backendKind),
    seed: s.optional(s.number({ integer: true, min: 0 })),
    lessonId: s.optional(id),
  }),
  /** End the session: destroys every object it created; the transcript is closed, not deleted. */
  "session.stop": empty,
  /** Stop and start again on the same backend (a new transcript). */
  "session.reset": empty,
  /** Tell the session a learner program starts (it records it; `stepping` arms the step gate). */
  "run.start": s.object({
    code: s.string({ max: 1_000_000 }),
    stepping: s.boolean(),
    lessonId: s.optional(id),
    /** A label for the transcript ("main.ts", "lesson 3 step 2"). */
    label: s.optional(s.string({ max: 200 })),
  }),
  /** Tell the session the learner program ended (normally or with an error). */
  "run.end": s.object({
    runId: id,
    ok: s.boolean(),
    error: s.optional(s.unknown()),
  }),
  /**
   * One verb from learner code. `handle` null means the root facade (`verbs.getDeviceList()`,
   * `verbs.openDevice("rxe0")`, `verbs.sleep(ms)`, `verbs.log(...)`); otherwise the object's
   * handle. Args are wire-decoded values; HandleRefs inside them name backend objects.
   */
  "verbs.call": s.object({
    runId: s.optional(id),
    handle: s.nullable(id),
    method: s.string({ min: 1, max: 100 }),
    args: s.array(s.unknown(), { max: 64 }),
  }),
  /** Step gate controls. */
  "gate.step": empty,
  "gate.continue": empty,
  "gate.runTo": s.object({ verb: s.literal("postSend", "poll") }),
  "gate.stop": empty,
  /** The current gate state (also sent as a "gate" event whenever it changes). */
  "gate.state": empty,
  /** The current state snapshot (also sent as a "snapshot" event after each verb). */
  "state.snapshot": empty,
  "lessons.list": empty,
  "lessons.load": s.object({ id }),
  "lessons.progress": empty,
  /** Evaluate the lesson's step checks against the session so far; passing steps are recorded in progress. */
  "lessons.check": s.object({ id }),
  /** The transcript so far (after a reload or a backend restart). `sinceSeq` returns only later events. */
  "transcript.events": s.object({ sinceSeq: s.optional(s.number({ integer: true, min: 0 })) }),
  "transcript.export": s.object({ format: exportFormat }),
  /** Load a transcript (JSON or JSONL text, as exported) to show it. */
  "transcript.import": s.object({
    content: s.string({ max: 50_000_000 }),
    filename: s.optional(s.string({ max: 500 })),
  }),
  /** Replay the imported transcript's calls against a fresh session; `stepping` pauses before each. */
  "transcript.replay": s.object({ stepping: s.optional(s.boolean()) }),
} satisfies Record<string, Schema<unknown>>;

export type RequestMethod = keyof typeof requestSchemas;
export type RequestParams<M extends RequestMethod> = Infer<(typeof requestSchemas)[M]>;

/** What each request resolves to. */
export interface RequestResults {
  "host.info": HostInfo;
  "backend.status": BackendStatus;
  "backend.list": { current: BackendKind | null; backends: BackendChoice[] };
  "backend.choose": { kind: BackendKind; devices: DeviceInfo[] };
  "session.start": { sessionId: string; backend: BackendKind; devices: DeviceInfo[]; transcriptPath?: string };
  "session.stop": { stopped: boolean };
  "session.reset": { sessionId: string; backend: BackendKind };
  "run.start": { runId: string };
  "run.end": { ok: true };
  /** The verb's return value: plain data, or a HandleRef for an object it created. */
  "verbs.call": { value: unknown };
  "gate.step": GateState;
  "gate.continue": GateState;
  "gate.runTo": GateState;
  "gate.stop": GateState;
  "gate.state": GateState;
  "state.snapshot": StateSnapshot | null;
  "lessons.list": { lessons: LessonSummary[] };
  "lessons.load": { lesson: LessonDetail };
  "lessons.progress": { progress: LessonProgress };
  "lessons.check": { steps: StepCheckResult[]; progress: LessonProgress };
  "transcript.events": { events: TranscriptEvent[] };
  "transcript.export": { filename: string; mime: string; content: string };
  "transcript.import": { events: TranscriptEvent[] };
  "transcript.replay": { events: number; divergences: number };
}

// Compile-time check that every request has a result type and vice versa.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const _allResults: Same<RequestMethod, keyof RequestResults> = true;
void _allResults;

export type RequestResult<M extends RequestMethod> = RequestResults[M];

/**
 * Checks an incoming request on the host. Returns the method and typed params, or throws
 * BridgeValidationError (unknown method, wrong or extra fields).
 */
export function parseRequest(method: unknown, params: unknown): { method: RequestMethod; params: unknown } {
  if (typeof method !== "string" || !Object.hasOwn(requestSchemas, method))
    throw new BridgeValidationError("method", "a bridge request name", method);
  const m = method as RequestMethod;
  return { method: m, params: requestSchemas[m].parse(params ?? {}, "params") };
}

// ─── Events (host → renderer) ─────────────────────────────────────────────────────────────

export interface BridgeEvents {
  /** One new transcript event (as appended to the JSONL file). */
  transcript: TranscriptEvent;
  /** The panes' state after an event. */
  snapshot: StateSnapshot;
  /** The step gate changed (paused at a verb, resumed, idle). */
  gate: GateState;
  /** The backend process started, died, or was restarted (the app says so). */
  backend: BackendStatus & { event: "started" | "died" | "restarted" | "stopped" };
  /** Progress of anything that takes more than a second (sweeps, replays). */
  progress: { id: string; label: string; done: number; total?: number; finished?: boolean };
  /** Lesson progress changed (a check passed). */
  lessonProgress: LessonProgress;
  /** A verbs.log line or a host notice. */
  log: { level: "info" | "warn" | "error"; text: string };
}

export type EventName = keyof BridgeEvents;

// ─── Framing ──────────────────────────────────────────────────────────────────────────────

/** renderer → host over the WebSocket (Electron uses ipcRenderer.invoke(channel, method, params)). */
export interface RequestFrame {
  type: "request";
  id: number;
  method: string;
  params: unknown;
}

/** host → renderer: the answer to one request. Errors travel as data so every field survives. */
export type ResponseFrame = { type: "response"; id: number } & Envelope<unknown>;

/** host → renderer: an event. */
export interface EventFrame {
  type: "event";
  event: EventName;
  payload: unknown;
}

/** What a host handler answers (and what Electron's invoke resolves to). */
export type Envelope<T> = { ok: true; result: T } | { ok: false; error: BridgeErrorData };

/** The errors the host puts into envelopes, from anything thrown. */
export function errorData(err: unknown): BridgeErrorData {
  if (err && typeof err === "object") {
    const e = err as Record<string, unknown>;
    const out: BridgeErrorData = {
      name: typeof e.name === "string" ? e.name : "Error",
      message: typeof e.message === "string" ? e.message : String(err),
    };
    for (const k of ["code", "verb", "reason", "attribute", "path", "stack"] as const)
      if (typeof e[k] === "string") out[k] = e[k] as string;
    for (const k of ["errno", "badWrIndex"] as const) if (typeof e[k] === "number") out[k] = e[k] as number;
    return out;
  }
  return { name: "Error", message: String(err) };
}

/** Narrowing helper for call results. */
export function asHandle(value: unknown): HandleRef | null {
  return typeof value === "object" && value !== null && typeof (value as HandleRef).$handle === "string"
    ? (value as HandleRef)
    : null;
}
