/**
 * Run / Step / Continue / Stop for the editor's program. Step with nothing running starts the
 * program paused before its first verb; Step while paused lets one verb through.
 */
import { useCallback, useMemo, useRef, useState } from "react";
import type { ErrorData, GateState } from "../../../bridge/contract.js";
import type { LabStore } from "./store.js";
import { startRun, type RunHandle } from "../runner/runner.js";
import type { CompiledProgram, TypeProblem } from "../runner/protocol.js";

export interface RunnerOptions {
  store: LabStore;
  compile: (() => Promise<CompiledProgram>) | null;
  gate: GateState | null;
  kind: "sim" | "native";
  program: string;
  /** Called after every run with how it ended (the lesson checks it then). */
  onFinished: (result: { ok: boolean; error?: ErrorData }) => void | Promise<void>;
}

export function useRunner({ store, compile, gate, kind, program, onFinished }: RunnerOptions) {
  const run = useRef<RunHandle | null>(null);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<ErrorData | undefined>();
  /** A compiled program with type errors, waiting for the learner's "run anyway". */
  const [typeErrors, setTypeErrors] = useState<{ errors: TypeProblem[]; go: () => void; cancel: () => void } | null>(
    null,
  );
  /** Runs finished (and checked), so tests and benchmarks can wait for "the next one" without racing. */
  const [finished, setFinished] = useState(0);
  const bridge = store.bridge;

  const start = useCallback(
    async (compiled: CompiledProgram, stepping: boolean) => {
      const handle = startRun({ bridge, program: compiled, stepping, kind, label: program });
      run.current = handle;
      setRunning(true);
      const result = await handle.done;
      run.current = null;
      setRunning(false);
      if (!result.ok) setError(result.error);
      await onFinished(result);
      setFinished((n) => n + 1);
    },
    [bridge, kind, program, onFinished],
  );

  const launch = useCallback(
    async (stepping: boolean) => {
      if (!compile || run.current) return;
      setError(undefined);
      setTypeErrors(null);
      let compiled: CompiledProgram;
      try {
        compiled = await compile();
      } catch (err) {
        setError({ name: "CompileError", message: (err as Error).message });
        setFinished((n) => n + 1);
        return;
      }
      // Type errors: the learner decides (the verb's own error may teach more than the compiler's).
      if (compiled.typeErrors.length) {
        setTypeErrors({
          errors: compiled.typeErrors,
          go: () => {
            setTypeErrors(null);
            void start(compiled, stepping);
          },
          cancel: () => setTypeErrors(null),
        });
        return;
      }
      await start(compiled, stepping);
    },
    [compile, start],
  );

  const paused = !!gate?.pending;
  // The buttons' handlers stay the same functions across renders (memoised panes keep
  // skipping); they read the latest launch and gate through this ref.
  const latest = useRef({ launch, paused });
  latest.current = { launch, paused };
  const actions = useMemo(
    () => ({
      run: () => void latest.current.launch(false),
      step: () => {
        if (!run.current) void latest.current.launch(true);
        else if (latest.current.paused) void bridge.request("gate.step", {});
        else void bridge.request("gate.pause", {});
      },
      // Continue releases a paused program; while one runs there is nothing to continue.
      continue: () => void (run.current && latest.current.paused && bridge.request("gate.continue", {})),
      stop: () => void run.current?.stop(),
      reset: async () => {
        setError(undefined);
        await store.reset();
      },
    }),
    [bridge, store],
  );
  return { running, paused, finished, error, typeErrors, ...actions };
}
