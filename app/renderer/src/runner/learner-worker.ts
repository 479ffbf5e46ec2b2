/**
 * The Web Worker learner code runs in: no Node, no files, no network. It builds the learner's
 * `verbs` facade (app/session's browser-safe builder) over a call surface that posts each
 * verb to the main thread, which forwards it to the host through the bridge. Each call, and
 * the error a program ends with, carries its line in main.ts (read off the stack, mapped back
 * through the source map), so the editor can point at it.
 */
import * as verbslab from "../../../session/learner.js";
import { createVerbsFacade } from "../../../session/facade.js";
import type { WireValue } from "../../../session/wire.js";
import type { SourceSite } from "../../../session/transcript.js";
import { argError, errorFromData, errorToData, type ErrorData } from "../../../../verbs/errors.js";
import type { FromWorker, ToWorker } from "./protocol.js";
import { VERBSLAB_GLOBAL } from "./transform.js";
import { SourceMap } from "./source-map.js";
import { CallSites } from "./call-site.js";

const scope = self as unknown as {
  postMessage(m: FromWorker): void;
  onmessage: ((e: MessageEvent<ToWorker>) => void) | null;
  addEventListener(type: "unhandledrejection", l: (e: PromiseRejectionEvent) => void): void;
};
interface InFlight {
  resolve: (v: WireValue) => void;
  reject: (e: Error) => void;
  method: string;
  source?: SourceSite;
}
const waiting = new Map<number, InFlight>();
let nextId = 1;
let sites: CallSites | undefined;
let finished = false;

/** Verbs whose result the learner names (`const qp = await pd.createQp(…)`): the name rides along. */
const CREATES = /^(open|alloc|create|reg)[A-Z]/;
/** Where a call's error came from, for an unawaited verb's rejection. */
const CALL_SITE = Symbol("verbslab.callSite");

const at = (s: SourceSite) => `main.ts line ${s.line}, column ${s.column}`;

const surface = {
  call(handle: number, method: string, args: WireValue[]): Promise<WireValue> {
    const id = nextId++;
    const source = sites?.site(new Error().stack, CREATES.test(method));
    return new Promise<WireValue>((resolve, reject) => {
      waiting.set(id, { resolve, reject, method, ...(source && { source }) });
      scope.postMessage({ type: "call", id, handle, method, args, ...(source && { source }) });
    });
  },
};

/** Take away what learner code has no business with (it reaches the device only through `verbs`). */
function lockDown() {
  for (const name of ["fetch", "XMLHttpRequest", "WebSocket", "EventSource", "importScripts", "indexedDB", "caches"]) {
    try {
      Object.defineProperty(self, name, { value: undefined, configurable: false, writable: false });
    } catch {
      // Some globals are not configurable in some engines; the page's CSP still stands.
    }
  }
}

/** The program's error with its main.ts line: a verb's from the call, anything else from its stack. */
function located(err: unknown, unawaited = false): ErrorData {
  const data = { ...errorToData(err), ...(unawaited && { unawaited }) };
  const site = (err as { [CALL_SITE]?: SourceSite } | null)?.[CALL_SITE] ?? sites?.site((err as Error)?.stack);
  if (!site) return data;
  const note = unawaited ? "; the call was not awaited" : "";
  return { ...data, line: site.line, column: site.column, message: `${data.message} (${at(site)}${note})` };
}

function finish(m: FromWorker) {
  if (finished) return;
  finished = true;
  scope.postMessage(m);
}

async function run(js: string, kind: "sim" | "native", map: string | undefined, source: string) {
  (globalThis as Record<string, unknown>)[VERBSLAB_GLOBAL] = Object.freeze({ ...verbslab });
  const url = URL.createObjectURL(new Blob([js], { type: "text/javascript" }));
  try {
    sites = new CallSites(url, map ? new SourceMap(map) : undefined, source);
    lockDown();
    const mod = (await import(/* @vite-ignore */ url)) as { default?: unknown };
    if (typeof mod.default !== "function")
      throw argError(TypeError, undefined, { kind: "runner", runner: { kind: "no-default-export" } });
    await (mod.default as (v: unknown) => unknown)(createVerbsFacade(surface, kind));
    // An unawaited verb that failed is reported (unhandledrejection) in a task of its own: let it come first.
    await new Promise((r) => setTimeout(r, 0));
    // A verb still in flight when main returned was called without `await`.
    const [first] = waiting.values();
    if (first) {
      const e = argError(TypeError, undefined, {
        kind: "runner",
        runner: { kind: "not-awaited", method: first.method },
      });
      if (first.source) Object.assign(e, { [CALL_SITE]: first.source });
      throw e;
    }
    finish({ type: "done", ok: true });
  } catch (err) {
    finish({ type: "done", ok: false, error: located(err) });
  } finally {
    URL.revokeObjectURL(url);
  }
}

// A verb called without `await` that fails: nothing catches it, so the program ends with it, at its line.
scope.addEventListener("unhandledrejection", (e) => {
  e.preventDefault();
  const err = e.reason as Error;
  finish({ type: "done", ok: false, error: located(err, !!err && typeof err === "object" && CALL_SITE in err) });
});

scope.onmessage = (e) => {
  const m = e.data;
  if (m.type === "run") void run(m.js, m.kind, m.map, m.source);
  else if (m.type === "result") {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.ok) w.resolve(m.value);
    else {
      const err = errorFromData(m.error);
      if (w.source) Object.defineProperty(err, CALL_SITE, { value: w.source });
      w.reject(err);
    }
  }
};
