/**
 * The bridge contract: every request, response and event between the renderer and its host
 * (Electron main or the web server), in one file. The host validates every request against
 * the schemas below before acting on it (`parseRequest`); the typed clients in this folder
 * are the only code that touches raw IPC or the WebSocket.
 *
 * Messages are encoded with the transcript's codec (../session/wire.ts) on both transports, so
 * bigint, bytes and NaN survive and objects living in the backend process travel as `Ref`s.
 *
 * Learner code runs in a Web Worker in the renderer; each verb it calls becomes one
 * `verbs.call` request `{ handle, method, args }`, answered when the session has performed
 * the verb (which may be much later: the step gate can hold it until the learner steps).
 */
import type { Lesson, Text } from "../../lessons/schema.js";
import type { Verdict } from "../../lessons/checks.js";
import type { DeviceInfo, PortCounters } from "../../verbs/types.js";
import type { ErrorData } from "../../verbs/errors.js";
import type { BackendExit } from "../../verbs/verb-failure.js";
import type { PacketDrop } from "../../verbs/wc-reason.js";
import { WIRE_MODELS, type LinkFaults, type LinkState } from "../../verbs/lab.js";
import type { GateMode, PendingCall, QpModelView } from "../session/session-types.js";
import type { TranscriptEvent, TranscriptHeader } from "../session/transcript.js";
import type { Ref } from "../session/wire.js";
import type { Divergence } from "../session/replay.js";
import { BridgeValidationError, s, type Infer, type Schema } from "./schema.js";

export { BridgeValidationError };
export type {
  Divergence,
  ErrorData,
  GateMode,
  Lesson,
  PendingCall,
  QpModelView,
  Ref,
  Text,
  TranscriptEvent,
  TranscriptHeader,
  Verdict,
};

/** Bumped when a message changes shape incompatibly. */
export const BRIDGE_VERSION = 1;

export { IPC_EVENT_CHANNEL, IPC_REQUEST_CHANNEL, PRELOAD_GLOBAL, TOKEN_PARAM, WS_PATH } from "./channels.js";

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
  /** How the process last ended: `reason` is `backendExitText` of the rest (verbs/verb-failure.ts), for every language's wording. */
  lastExit?: BackendExit & { at: number; reason: string };
  /** The JSONL transcript file the session appends to (survives restarts). */
  transcriptPath?: string;
}

/** The step gate, as the session reports it. */
export interface GateState {
  /** "idle": no program is running; "run": verbs go through; "step": each verb waits at the gate. */
  mode: "idle" | GateMode;
  /** The verb waiting at the gate (with the seq its event will get), if any. */
  pending: PendingCall | null;
  /** The gate was stopped: the program's next verb fails with SessionStoppedError. */
  stopped: boolean;
}

/** Where "run to" can stop: before the next call of this method (`poll` also stops at pollWait). */
export const RUN_TO_TARGETS = ["postSend", "postRecv", "poll", "modify"] as const;
export type RunToTarget = (typeof RUN_TO_TARGETS)[number];

/**
 * One packet the simulator put on the wire (or dropped), for the packet timeline. Field
 * names follow the simulator's packet log (sim/packets.ts `PacketLogEntry`), trimmed to what
 * the timeline shows.
 */
export interface PacketRecord {
  /** Position in the simulator's packet log, from 0 per session: a gap means packets not sent (see PACKETS_PER_SNAPSHOT). */
  seq: number;
  /** The transcript event (its seq) during whose verb the packet went on the wire. */
  at: number;
  /** Virtual time in ms. */
  time: number;
  /** Devices: "rxe0" → "rxe1" ("?" when nothing could receive it). */
  src: string;
  dst: string;
  /** BTH opcode as rxe names it: "RC_RDMA_WRITE_FIRST", "RC_SEND_ONLY", "RC_ACKNOWLEDGE". */
  opcode: string;
  psn: number;
  src_qpn: number;
  dest_qpn: number;
  /** Payload bytes. */
  len: number;
  /** The AckReq bit: the requester asks for an ACK. */
  ack_req?: boolean;
  /** The requester WQE's wr_id (request packets). */
  wr_id?: number;
  /** ACK, NAK or RNR NAK: the syndrome, in words, and the MSN. */
  aeth?: { syndrome: number; text: string; msn: number };
  /** RDMA write/read header. */
  reth?: { va: number; rkey: number; len: number };
  imm_data?: number;
  /** Set when the packet was dropped: why, in English ("link down", "Q_Key mismatch", …). */
  dropped?: string;
  /** The same as data, which the UI words in the learner's language. */
  drop?: PacketDrop;
}

/** The packet log as the panes get it. */
export interface PacketLog {
  /** False on the native backend: a real NIC's packets cannot be observed from the verbs API. */
  observable: boolean;
  /** Oldest first, by `seq`. */
  records: PacketRecord[];
}

/** Most packets the renderer keeps (older ones fall off the front of the timeline). */
export const PACKET_WINDOW = 2000;
/**
 * Most packets one snapshot carries: a verb that sends more (a 1 MiB WRITE is over a thousand
 * packets) sends its first and last halves; the timeline shows the gap in `seq`.
 */
export const PACKETS_PER_SNAPSHOT = 400;
/** The first bytes of each MR a snapshot carries for the hex view. */
export const MR_WINDOW = 256;

/**
 * The largest message the web bridge carries (either way). The page refuses to send a larger
 * request (its promise rejects with a RangeError); the server closes a socket that sends one
 * anyway with 1009 (Message Too Big), and every other socket carries on.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** What the panes show beyond the transcript events (which carry QP snapshots and completions). */
export interface StateSnapshot {
  backend: BackendKind;
  /** Backend clock in ms (virtual on the simulator). */
  clock: number;
  /** Seq of the last transcript event included (0: none yet). */
  seq: number;
  /** The QP model of each QP, in creation order (the diagram's current state). */
  qps: QpModelView[];
  /**
   * On the wire, a "snapshot" event after a verb has `delta: true`: `mrBytes` and `counters`
   * then list only the MRs and devices that changed, and `packets` only the new packets,
   * since the previous "snapshot" event. The bridge client folds each delta into the whole
   * picture (./snapshot.ts), so listeners and `state.snapshot` always see complete values.
   */
  delta?: boolean;
  /** The first bytes (at most MR_WINDOW) of each registered MR, by handle, for the hex view. */
  mrBytes?: { handle: number; bytes: Uint8Array }[];
  /** hw_counters per open device, by context handle (deltas over each verb are in its event). */
  counters?: { handle: number; device: string; counters: PortCounters }[];
  /** The packets on the wire (the simulator's log; not observable on native). */
  packets?: PacketLog;
}

/** One lesson in the course list. */
export interface LessonSummary {
  id: string;
  folder: string;
  /** Position in the course. */
  order: number;
  title: Text;
  level: Lesson["level"];
  prerequisites: string[];
  /** How many steps it has. */
  steps: number;
}

export type ExportFormat = "md" | "html" | "json" | "c" | "pcap";

/** The lab link as the Network panel shows it (verbs/lab.ts). */
export interface LabLinkInfo {
  backend: BackendKind;
  /** The link now, or null when this backend cannot inject faults. */
  link: LinkState | null;
  /**
   * The faults set with `lab.set`, as one object: every new session (each run starts one) begins
   * with them, as a recorded verbslab_set_link, until `lab.clear` or a backend switch.
   */
  faults: LinkFaults | null;
}

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
const exportFormat = s.literal("md", "html", "json", "c", "pcap");
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
    /** Name of the program or lesson, for the transcript header. */
    program: s.optional(s.string({ max: 200 })),
  }),
  /** End the session: destroys every object it created; the transcript is closed, not deleted. */
  "session.stop": empty,
  /** Stop and start again on the same backend and seed (a new transcript). */
  "session.reset": empty,
  /**
   * A learner program starts (in the renderer's worker). The session records it until
   * `run.end`; `stepping` pauses before the first verb.
   */
  "run.start": s.object({
    stepping: s.boolean(),
    /** A label for the transcript ("main.ts", "first-message step 2"). */
    program: s.optional(s.string({ max: 200 })),
  }),
  /** The learner program ended: normally, or with the error it threw (its name, message, code, …). */
  "run.end": s.object({
    runId: id,
    ok: s.boolean(),
    error: s.optional(s.unknown()),
  }),
  /**
   * One verb from learner code: `session.call(handle, method, args)`. Handle 0 is the root
   * facade, −1 its connection manager (`verbs.cm`). Args are plain data; `Ref`s inside them name backend objects.
   */
  "verbs.call": s.object({
    handle: s.number({ integer: true, min: -1 }),
    method: s.string({ min: 1, max: 100 }),
    args: s.array(s.unknown(), { max: 64 }),
    /** The line of main.ts that made the call (the runner reads it off the call's stack). */
    source: s.optional(
      s.object({
        line: s.number({ integer: true, min: 1 }),
        column: s.number({ integer: true, min: 1 }),
        variable: s.optional(s.string({ min: 1, max: 100 })),
      }),
    ),
  }),
  /** Step gate: let the waiting verb through and pause before the next. */
  "gate.step": empty,
  /** Step gate: run freely. */
  "gate.continue": empty,
  /** Step gate: run freely until just before the next call of `method`. */
  "gate.runTo": s.object({ method: s.literal(...RUN_TO_TARGETS) }),
  /** Step gate: pause before the next verb. */
  "gate.pause": empty,
  /** Step gate: stop the program (its next verb fails with SessionStoppedError). */
  "gate.stop": empty,
  /** The current gate state (also sent as a "gate" event whenever it changes). */
  "gate.state": empty,
  /** What the panes show beyond the events (also sent as a "snapshot" event after each verb). */
  "state.snapshot": empty,
  "lessons.list": empty,
  "lessons.load": s.object({ id }),
  /**
   * Judge a step's goal checks (or a break-it variation's) against the last finished run
   * of this session.
   */
  "lessons.check": s.object({
    lessonId: id,
    step: s.number({ integer: true, min: 1 }),
    breakIt: s.optional(id),
  }),
  /**
   * The learner profile's saved place: lesson-flow snapshots (state-machines/lesson-progress.ts)
   * by lesson id, the lesson last open, and the code per step (lessons/progress-file.ts).
   */
  "lessons.progress.get": empty,
  /** Save one lesson's flow snapshot (kept in the profile's progress.json by the host). */
  "lessons.progress.save": s.object({ lessonId: id, snapshot: s.unknown() }),
  /** Remember the lesson the learner has open. */
  "lessons.place.save": s.object({ lessonId: id }),
  /** Keep the editor's code for one step: key `<lesson id>/<step>[/break-<id>]`, or "free". */
  "lessons.code.save": s.object({ key: s.string({ min: 1, max: 300 }), code: s.string({ max: 1_000_000 }) }),
  /** The transcript so far (after a reload or a backend restart). `sinceSeq` returns only later events. */
  "transcript.get": s.object({ sinceSeq: s.optional(s.number({ integer: true, min: 0 })) }),
  /**
   * The transcript exported: Markdown, self-contained HTML, JSON, a standalone C program, or its
   * packets as a pcap (replayed on the simulator; binary, so `content` is base64).
   */
  "transcript.export": s.object({ format: exportFormat }),
  /** Load a transcript (JSON or JSONL text, as exported) to show and replay it. */
  "transcript.import": s.object({
    content: s.string({ max: 50_000_000 }),
    filename: s.optional(s.string({ max: 500 })),
  }),
  /** Replay the imported transcript's calls in a fresh session; `stepping` pauses before each. */
  "transcript.replay": s.object({ stepping: s.optional(s.boolean()) }),
  /** The lab link now (getLink), not recorded. */
  "lab.get": empty,
  /**
   * Faults on the lab link between rxe0 and rxe1 (the Network panel), recorded as verbslab_set_link
   * and kept for the runs after it. Only while no program runs. Values are checked by verbs/lab.ts
   * (EINVAL naming the field); native refuses off the lab VM (EPERM, saying why).
   */
  "lab.set": s.object({
    faults: s.object({
      loss: s.optional(s.number()),
      delay: s.optional(s.number()),
      reorder: s.optional(s.number()),
      mtu: s.optional(s.object({ rxe0: s.optional(s.number()), rxe1: s.optional(s.number()) })),
      blockRoceUdp: s.optional(s.boolean()),
      wire: s.optional(s.literal(...WIRE_MODELS)),
    }),
  }),
  /** Every fault removed (verbslab_clear_link, recorded), and none kept for later runs. */
  "lab.clear": empty,
} satisfies Record<string, Schema<unknown>>;

export type RequestMethod = keyof typeof requestSchemas;
export type RequestParams<M extends RequestMethod> = Infer<(typeof requestSchemas)[M]>;

/** What each request resolves to. */
export interface RequestResults {
  "host.info": HostInfo;
  "backend.status": BackendStatus;
  "backend.list": { current: BackendKind | null; backends: BackendChoice[] };
  "backend.choose": SessionInfo;
  "session.start": SessionInfo;
  "session.stop": { stopped: boolean };
  "session.reset": SessionInfo;
  "run.start": { runId: string };
  "run.end": { outcome: "ok" | "error" | "stopped" };
  /** The verb's return value: plain data, with a `Ref` for each object it created. */
  "verbs.call": { value: unknown };
  "gate.step": GateState;
  "gate.continue": GateState;
  "gate.runTo": GateState;
  "gate.pause": GateState;
  "gate.stop": GateState;
  "gate.state": GateState;
  "state.snapshot": StateSnapshot | null;
  "lessons.list": { lessons: LessonSummary[]; problems: string[] };
  "lessons.load": { lesson: Lesson };
  "lessons.check": Verdict;
  "lessons.progress.get": { snapshots: Record<string, unknown>; lessonId: string | null; code: Record<string, string> };
  "lessons.progress.save": { saved: true };
  "lessons.place.save": { saved: true };
  "lessons.code.save": { saved: true };
  "transcript.get": { header: TranscriptHeader | null; events: TranscriptEvent[] };
  /** `encoding` "base64": `content` is the file's bytes in base64 (the pcap). */
  "transcript.export": { filename: string; mime: string; content: string; encoding?: "base64" };
  "transcript.import": { header: TranscriptHeader; events: TranscriptEvent[] };
  /** Events replayed, and where the replay's outcome differed from the recording. */
  "transcript.replay": { events: number; divergences: Divergence[] };
  "lab.get": LabLinkInfo;
  "lab.set": LabLinkInfo;
  "lab.clear": LabLinkInfo;
}

/** The session a start, reset or backend switch produced. */
export interface SessionInfo {
  sessionId: string;
  backend: BackendKind;
  devices: DeviceInfo[];
  seed?: number;
  transcriptPath?: string;
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

const int = (min = 0) => s.number({ integer: true, min });
const opt = s.optional;
const packetRecordSchema: Schema<PacketRecord> = s.object({
  seq: int(),
  at: int(),
  time: s.number({ min: 0 }),
  src: s.string({ max: 64 }),
  dst: s.string({ max: 64 }),
  opcode: s.string({ min: 1, max: 64 }),
  psn: int(),
  src_qpn: int(),
  dest_qpn: int(),
  len: int(),
  ack_req: opt(s.boolean()),
  wr_id: opt(s.number()),
  aeth: opt(s.object({ syndrome: int(), text: s.string({ max: 200 }), msn: int() })),
  reth: opt(s.object({ va: s.number(), rkey: int(), len: int() })),
  imm_data: opt(int()),
  dropped: opt(s.string({ max: 500 })),
  // Data the UI words (i18n.ts dropReason); a shape it does not know shows `dropped` instead.
  drop: opt(s.unknown() as Schema<PacketDrop>),
});

/**
 * The "snapshot" event (and the `state.snapshot` result), checked by the bridge client
 * before any pane sees it: a malformed snapshot is refused rather than drawn.
 */
export const stateSnapshotSchema: Schema<StateSnapshot> = s.object({
  backend: backendKind,
  clock: s.number(),
  seq: int(),
  qps: s.array(
    s.object({
      qp: int(),
      qp_num: int(),
      qp_type: int(),
      state: int(),
      observed: int(),
      destroyed: s.boolean(),
    }),
  ),
  delta: opt(s.boolean()),
  mrBytes: opt(s.array(s.object({ handle: int(), bytes: s.bytes({ max: MR_WINDOW }) }))),
  counters: opt(
    s.array(
      s.object({
        handle: int(),
        device: s.string({ max: 64 }),
        counters: s.record(s.number()),
      }),
    ),
  ),
  packets: opt(
    s.object({
      observable: s.boolean(),
      records: s.array(packetRecordSchema, { max: PACKET_WINDOW }),
    }),
  ),
});

export interface BridgeEvents {
  /** One new transcript event (as appended to the JSONL file). */
  transcript: TranscriptEvent;
  /** A new session began (start, reset, backend switch, or re-opened after a restart). */
  session: SessionInfo & { header: TranscriptHeader; resumed: boolean };
  /** The panes' state after a verb. */
  snapshot: StateSnapshot;
  /** The step gate changed (paused at a verb, resumed, idle). */
  gate: GateState;
  /** The backend process started, died, or was restarted (the app says so). */
  backend: BackendStatus & { event: "started" | "died" | "restarted" | "stopped" };
  /** Progress of anything that takes more than a second (sweeps, replays). */
  progress: { id: string; label: string; done: number; total?: number; finished?: boolean };
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

/** host → renderer: the answer to one request. Errors travel as ErrorData (verbs/errors.ts) so every field survives. */
export type ResponseFrame = { type: "response"; id: number } & Envelope<unknown>;

/** host → renderer: an event. */
export interface EventFrame {
  type: "event";
  event: EventName;
  payload: unknown;
}

/** What a host handler answers (and what Electron's invoke resolves to). */
export type Envelope<T> = { ok: true; result: T } | { ok: false; error: ErrorData };
