/** Messages between the renderer's main thread and the learner-code worker. */
import type { WireValue } from "../../../session/wire.js";
import type { ErrorData } from "../../../bridge/contract.js";

export type ToWorker =
  | { type: "run"; js: string; kind: "sim" | "native" }
  | { type: "result"; id: number; ok: true; value: WireValue }
  | { type: "result"; id: number; ok: false; error: ErrorData };

export type FromWorker =
  | { type: "call"; id: number; handle: number; method: string; args: WireValue[] }
  | { type: "done"; ok: true }
  | { type: "done"; ok: false; error: ErrorData };
