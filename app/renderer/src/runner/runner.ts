/**
 * Runs a learner program: compiled JS → the worker; each verb the worker posts → one
 * `verbs.call` over the bridge; the answer (or the VerbsError) back to the worker. The run
 * is announced to the session (`run.start` / `run.end`) so the transcript records it.
 */
import type { Bridge } from "../../../bridge/client.js";
import { errorToData, type ErrorData } from "../../../../verbs/errors.js";
import type { CompiledProgram, FromWorker, ToWorker } from "./protocol.js";
import { rewriteImports } from "./transform.js";
import LearnerWorker from "./learner-worker.ts?worker";

export interface RunOptions {
  bridge: Bridge;
  program: CompiledProgram;
  stepping: boolean;
  kind: "sim" | "native";
  /** A label for the transcript ("main.ts", "first-message step 2"). */
  label?: string;
}

export interface RunHandle {
  /** Settles when the program ended (never rejects: the outcome says how). */
  done: Promise<{ ok: boolean; error?: ErrorData }>;
  /** Ends the program now: the gate fails its next verb, and the worker is terminated. */
  stop(): Promise<void>;
}

export function startRun({ bridge, program, stepping, kind, label }: RunOptions): RunHandle {
  const worker = new LearnerWorker();
  const post = (m: ToWorker) => worker.postMessage(m);
  let finish!: (r: { ok: boolean; error?: ErrorData }) => void;
  const done = new Promise<{ ok: boolean; error?: ErrorData }>((r) => (finish = r));
  let runId: string | undefined;
  let ended = false;

  const end = async (ok: boolean, error?: ErrorData) => {
    if (ended) return;
    ended = true;
    worker.terminate();
    try {
      if (runId) await bridge.request("run.end", { runId, ok, ...(error && { error }) });
    } catch {
      // The host may be restarting; the transcript already has every verb.
    }
    finish({ ok, ...(error && { error }) });
  };

  worker.onmessage = async (e: MessageEvent<FromWorker>) => {
    const m = e.data;
    if (m.type === "done") {
      await end(m.ok, m.ok ? undefined : m.error);
      return;
    }
    try {
      const { value } = await bridge.request("verbs.call", {
        handle: m.handle,
        method: m.method,
        args: m.args,
        ...(m.source && { source: m.source }),
      });
      post({ type: "result", id: m.id, ok: true, value: value as never });
    } catch (err) {
      post({ type: "result", id: m.id, ok: false, error: errorToData(err) });
    }
  };
  worker.onerror = (e) => void end(false, { name: "Error", message: e.message || "the program's worker failed" });

  void (async () => {
    try {
      const code = rewriteImports(program.js);
      runId = (await bridge.request("run.start", { stepping, ...(label && { program: label }) })).runId;
      post({ type: "run", js: code, kind, source: program.source, ...(program.map && { map: program.map }) });
    } catch (err) {
      await end(false, errorToData(err));
    }
  })();

  return {
    done,
    async stop() {
      try {
        await bridge.request("gate.stop", {});
      } catch {
        // Nothing to stop on the host side; the worker still goes.
      }
      await end(false, { name: "SessionStoppedError", message: "stopped by the learner" });
    },
  };
}
