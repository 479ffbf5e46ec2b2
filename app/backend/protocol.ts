/**
 * Messages between a host (Electron main or the web server) and the backend process it
 * supervises. Requests arrive here already validated by the host (bridge/contract.ts);
 * params, results and event payloads are wire-encoded (session/wire.ts `encodeValue`) exactly as they
 * go on to the renderer, so the host relays them without re-encoding.
 */
import type { ErrorData } from "../../verbs/errors.js";
import type { BackendExit } from "../../verbs/verb-failure.js";
import type { BackendKind, EventName } from "../bridge/contract.js";
import type { WireValue } from "../session/wire.js";

/** How the host asks the backend process to begin. */
export interface BackendInit {
  /** Which backend to start on; null: native when a device exists, else the simulator. */
  backend: BackendKind | null;
  seed?: number;
  /** Where transcripts (one JSONL file per session) and learner profiles (lessons/progress-file.ts) are written. */
  dataDir: string;
  /** The learner profile whose progress and code are kept (default: "default"). */
  profile?: string;
  /**
   * Set after a crash: the transcript the dead process was writing. The new process
   * re-opens it (never rewrites it), records that the backend died if the run had not
   * ended, and serves it until the learner starts again.
   */
  /** `reason` is `backendExitText(exit)` (verbs/verb-failure.ts); `exit` the data, absent from an older host. */
  resume?: { transcriptPath: string; backend: BackendKind; seed?: number; reason: string; exit?: BackendExit };
}

export type HostToBackend =
  | { type: "init"; init: BackendInit }
  | { type: "request"; id: number; method: string; params: WireValue }
  /** The supervisor's liveness check: the process answers "pong" at once, whatever it is doing. */
  | { type: "ping"; id: number };

export type BackendToHost =
  | { type: "ready"; kind: BackendKind; pid: number; transcriptPath?: string }
  | { type: "pong"; id: number }
  | ({ type: "response"; id: number } & ({ ok: true; result: WireValue } | { ok: false; error: ErrorData }))
  | { type: "event"; event: EventName; payload: WireValue }
  /** The session the process now writes (the supervisor re-opens it after a crash). */
  | { type: "session"; transcriptPath: string; backend: BackendKind; seed?: number }
  /** The backend process could not start at all. */
  | { type: "fatal"; error: ErrorData }
  /**
   * Everything the process sent in one turn of its event loop (e.g. a step's gate event,
   * the verb's transcript and snapshot events and both responses), in order, as one message:
   * the host relays them to the renderer together, which then renders once, not four times.
   */
  | { type: "batch"; messages: BackendToHost[] };
