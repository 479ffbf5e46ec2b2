/**
 * The session's public shape: what the shell (bridge), the renderer, the CLI and lesson
 * checks program against. Browser-safe types only.
 */
import type { VerbsBackend } from "../../verbs/backend.js";
import type { Prediction, SourceSite, Transcript, TranscriptEvent, TranscriptHeader } from "./transcript.js";
import type { Verbs } from "./verbs-api.js";
import type { CallSurface, HandleType, WireValue } from "./wire.js";

/** Where transcript lines go as they are written (the file appender in transcript-file.ts, or a test array). */
export interface TranscriptSink {
  /** Called with one complete JSON line (ending in "\n") per header/event, synchronously, in order. */
  append(line: string): void;
  /**
   * Everything appended so far (header first), when the sink keeps it (a file). With it the
   * session keeps only its recent events in memory (`keepEvents`) and reads the rest back here.
   */
  read?(): string;
  /** The session ended (its end event is written): let go of the file; a later append reopens it. */
  close?(): void;
}

export interface SessionOptions {
  backend: VerbsBackend;
  /** Receives every transcript line as it is written (e.g. `appendFileSink("out.jsonl")`). */
  sink?: TranscriptSink;
  /** Start paused before the first verb (step mode). Default: run freely. */
  step?: boolean;
  /** Header fields: the simulator seed, the program's name. */
  seed?: number;
  program?: string;
  /** Wall clock for durations (default performance.now / Date.now). */
  wallClock?: () => number;
  /** Events kept in memory when the sink can `read` its lines back (default KEEP_EVENTS, 2,000). */
  keepEvents?: number;
  /** Called for `verbs.log(...)` lines in addition to the transcript (the CLI prints them). */
  onLog?: (message: string) => void;
}

/** A call waiting at the step gate. */
export interface PendingCall {
  /** The seq the event will get. */
  seq: number;
  verb: string;
  target: { $handle: number; type: HandleType };
  method: string;
  args: WireValue[];
  /**
   * The model's word on the call, made before the gate with the facts the session has (the
   * port, its GID table, the other QPs): the same prediction the call's event will carry.
   */
  prediction?: Prediction;
  /** The line of the learner's program that made the call. */
  source?: SourceSite;
}

export type GateMode = "run" | "step";

/** Where "run to" stops: before the next call of one of these methods. */
export type RunToTarget = "postSend" | "postRecv" | "poll" | "modify" | string;

/**
 * The step gate. In "run" mode calls pass freely; in "step" mode each verb waits at the gate
 * (`pending`) until step/continue/runTo. `stop()` fails the waiting call and every later one
 * with a SessionStoppedError, which ends the program.
 */
export interface StepGate {
  readonly mode: GateMode;
  readonly pending: PendingCall | null;
  readonly stopped: boolean;
  /** Pause before every verb from now on. */
  pause(): void;
  /** Let the waiting call through and pause before the next one. */
  step(): void;
  /** Run freely. */
  continue(): void;
  /** Run freely until just before the next call of `method` (e.g. "postSend", "poll"). `poll` also stops at pollWait. */
  runTo(method: RunToTarget): void;
  stop(): void;
  /** Called whenever `pending` or `mode` changes. Returns an unsubscribe function. */
  subscribe(listener: (pending: PendingCall | null, mode: GateMode) => void): () => void;
}

/** The model's view of one QP, for the UI's diagram. */
export interface QpModelView {
  qp: number;
  qp_num: number;
  qp_type: number;
  /** The model's state (IBV_QPS_*). */
  state: number;
  /** The last state ibv_query_qp reported. */
  observed: number;
  destroyed: boolean;
}

export interface Session extends CallSurface {
  /**
   * Performs one call: `target` is a handle (null or 0: the backend root; string ids such
   * as "qp3" are accepted), args plain data with Refs for objects. Resolves with the result
   * (Refs for created objects); rejects with the VerbsError (or TypeError) the verb threw.
   */
  call(target: number, method: string, args: unknown[], source?: SourceSite): Promise<unknown>;
  readonly backend: VerbsBackend;
  /** The learner facade over this session, in-process (CLI, lesson checks, tests). */
  readonly verbs: Verbs;
  readonly gate: StepGate;
  readonly header: TranscriptHeader;
  /** The events so far (a copy; read back from the sink when older ones left memory: O(transcript)). */
  events(): TranscriptEvent[];
  /** How many events there are so far (O(1): the seq of the last one). */
  eventCount(): number;
  transcript(): Transcript;
  /** Every appended event, as it is appended. Returns an unsubscribe function. */
  subscribe(listener: (event: TranscriptEvent) => void): () => void;
  /** The QP models, in creation order. */
  qps(): QpModelView[];
  /** The first `max` bytes (default 4 KiB) of each registered MR, by handle: the Memory view. */
  mrBytes(max?: number): { handle: number; bytes: Uint8Array }[];
  /** hw_counters of each open device, by context handle: the Counters view (none where the backend has none). */
  counters(): { handle: number; device: string; counters: Record<string, number> }[];
  /**
   * Runs a learner program (`main(verbs)`) and appends the "end" event. Resolves with the
   * outcome; the program's own error is in the end event (and returned), never thrown.
   */
  run(program: (verbs: Verbs) => unknown): Promise<{ outcome: "ok" | "error" | "stopped"; error?: unknown }>;
  /** Appends the "end" event for a program run elsewhere (the renderer's worker). */
  end(outcome: "ok" | "error" | "stopped", error?: unknown): void;
  /** Appends a "log" event (what `verbs.log` does). */
  log(message: string): void;
  /**
   * Lets go of the rdma_cm objects the program left open, when the session ends: on a real
   * device an id keeps its port bound until destroyed, so the next run's `rdma_bind_addr` on
   * the same port would fail with EADDRINUSE. Unacknowledged events are acknowledged first
   * (librdmacm would otherwise wait for ever). Verbs objects are left to their finalizers.
   * Not recorded: the program did not do it.
   */
  release(): void;
}

/** Thrown into learner code when the step gate is stopped. */
export class SessionStoppedError extends Error {
  constructor() {
    super("the session was stopped");
    this.name = "SessionStoppedError";
  }
}
