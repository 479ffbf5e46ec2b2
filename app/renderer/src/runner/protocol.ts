/** Messages between the renderer's main thread and the learner-code worker. */
import type { WireValue } from "../../../session/wire.js";
import type { ErrorData } from "../../../bridge/contract.js";
import type { SourceSite } from "../../../session/transcript.js";

export type ToWorker =
  /** `map`: the source map of `js` back to `source` (main.ts as the learner wrote it). */
  | { type: "run"; js: string; kind: "sim" | "native"; map?: string; source: string }
  | { type: "result"; id: number; ok: true; value: WireValue }
  | { type: "result"; id: number; ok: false; error: ErrorData };

export type FromWorker =
  | { type: "call"; id: number; handle: number; method: string; args: WireValue[]; source?: SourceSite }
  | { type: "done"; ok: true }
  | { type: "done"; ok: false; error: ErrorData };

/** The editor's program, compiled: the JavaScript, its source map, and main.ts as written. */
export interface CompiledProgram {
  js: string;
  /** TypeScript's source map of `js` (version 3), to map stack frames back to main.ts. */
  map?: string;
  source: string;
  /** TypeScript's errors in main.ts, where each is: the runner asks before running with any. */
  typeErrors: TypeProblem[];
}

/** One of TypeScript's errors in main.ts: its line and column (1-based) and the compiler's words. */
export interface TypeProblem {
  line: number;
  column: number;
  message: string;
}
