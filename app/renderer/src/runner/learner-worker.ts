/**
 * The Web Worker learner code runs in: no Node, no files, no network. It builds the learner's
 * `verbs` facade (app/session's browser-safe builder) over a call surface that posts each
 * verb to the main thread, which forwards it to the host through the bridge.
 */
import * as verbslab from "../../../session/learner.js";
import { createVerbsFacade } from "../../../session/facade.js";
import type { WireValue } from "../../../session/wire.js";
import { errorFromData, errorToData } from "../../../../verbs/errors.js";
import type { FromWorker, ToWorker } from "./protocol.js";
import { VERBSLAB_GLOBAL } from "./transform.js";

const scope = self as unknown as {
  postMessage(m: FromWorker): void;
  onmessage: ((e: MessageEvent<ToWorker>) => void) | null;
};
const waiting = new Map<number, { resolve: (v: WireValue) => void; reject: (e: Error) => void }>();
let nextId = 1;

const surface = {
  call(handle: number, method: string, args: WireValue[]): Promise<WireValue> {
    const id = nextId++;
    return new Promise<WireValue>((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      scope.postMessage({ type: "call", id, handle, method, args });
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

async function run(js: string, kind: "sim" | "native") {
  (globalThis as Record<string, unknown>)[VERBSLAB_GLOBAL] = Object.freeze({ ...verbslab });
  const url = URL.createObjectURL(new Blob([js], { type: "text/javascript" }));
  try {
    lockDown();
    const mod = (await import(/* @vite-ignore */ url)) as { default?: unknown };
    if (typeof mod.default !== "function")
      throw new TypeError("the program must `export default async function main(verbs) { … }`");
    await (mod.default as (v: unknown) => unknown)(createVerbsFacade(surface, kind));
    scope.postMessage({ type: "done", ok: true });
  } catch (err) {
    scope.postMessage({ type: "done", ok: false, error: errorToData(err) });
  } finally {
    URL.revokeObjectURL(url);
  }
}

scope.onmessage = (e) => {
  const m = e.data;
  if (m.type === "run") void run(m.js, m.kind);
  else if (m.type === "result") {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.ok) w.resolve(m.value);
    else w.reject(errorFromData(m.error));
  }
};
