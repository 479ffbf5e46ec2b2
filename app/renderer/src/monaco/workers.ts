/**
 * Stands in for monaco-editor's `internal/common/workers.js` (vite.config.ts aliases it here).
 * Monaco's own copy exports the same `createWebWorker`, but first imports every editor
 * contribution (inline completions, folding, sticky scroll, rename, code lens, the quick-access
 * pickers, …: ~600 kB) so that its language packages bring a full editor along. The TypeScript
 * language's worker manager is its only importer here, and the contributions this app uses are
 * imported on purpose in setup.ts.
 */
import { editor } from "monaco-editor/editor/editor.api";

interface WorkerOptions {
  label?: string;
  moduleId: string;
  createWorker?: () => Worker;
  createData: unknown;
  host?: Record<string, (...args: unknown[]) => unknown>;
  keepIdleModels?: boolean;
}

function getWorker(label: string, createWorker?: () => Worker): Worker | Promise<Worker> {
  const env = self.MonacoEnvironment;
  if (env?.getWorker) return env.getWorker("workerMain.js", label);
  if (createWorker) return createWorker();
  throw new Error("MonacoEnvironment.getWorker is not set (app/renderer/src/monaco/setup.ts sets it)");
}

export function createWebWorker<T extends object>(opts: WorkerOptions): editor.MonacoWebWorker<T> {
  const worker = Promise.resolve(getWorker(opts.label ?? "monaco-editor-worker", opts.createWorker)).then((w) => {
    // The same two messages as Monaco's: the first is dropped by the worker's loader, the second
    // carries the language's createData.
    w.postMessage("ignore");
    w.postMessage(opts.createData);
    return w;
  });
  return editor.createWebWorker<T>({
    worker,
    ...(opts.host && { host: opts.host }),
    ...(opts.keepIdleModels !== undefined && { keepIdleModels: opts.keepIdleModels }),
  });
}
