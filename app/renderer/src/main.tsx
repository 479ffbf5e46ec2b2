/** Entry: connect to the host through the bridge, then render. */
import { createRoot } from "react-dom/client";
import { getBridge, type Bridge, type RequestMethod, type RequestParams } from "../../bridge/index.js";
import { App } from "./App.js";
import { LabStore } from "./lab/store.js";
import "./styles.css";

/**
 * The window's first reads — the lesson list, the learner's progress, then the first lesson —
 * leave now, while React has not rendered yet, instead of from the lesson flow's effects after
 * its first commit and after the render that follows the list (useLessonFlow): on a busy
 * machine each of those steps waited behind one of Monaco's long tasks, and the lesson came
 * last. The first request of each (same method and params) gets the answer already on its way;
 * any later one goes to the host as usual. Which lesson opens first is chosen as useLessonFlow
 * chooses it (`?lesson=`, else the lowest `order`); should the two ever differ, that lesson's
 * read is merely made twice.
 */
const EARLY = new Set<RequestMethod>(["lessons.list", "lessons.progress.get", "lessons.load"]);

function withEarlyReads(bridge: Bridge): Bridge {
  const early = new Map<string, Promise<unknown>>();
  const key = (method: string, params: unknown) => `${method} ${JSON.stringify(params)}`;
  const read = <M extends RequestMethod>(method: M, params: RequestParams<M>) => {
    const answer = bridge.request(method, params);
    answer.catch(() => {}); // the caller that takes it sees the error
    early.set(key(method, params), answer);
    return answer;
  };
  read("lessons.progress.get", {});
  read("lessons.list", {}).then(
    ({ lessons }) => {
      const fromUrl = new URLSearchParams(globalThis.location?.search ?? "").get("lesson");
      const first = lessons.find((l) => l.id === fromUrl) ?? [...lessons].sort((a, b) => a.order - b.order)[0];
      if (first) read("lessons.load", { id: first.id });
    },
    () => {},
  );
  return {
    host: bridge.host,
    request(method, params) {
      // Only the early reads' methods are looked up: other params need not be JSON (a verb's bigints).
      if (!EARLY.has(method)) return bridge.request(method, params);
      const k = key(method, params);
      const answer = early.get(k);
      if (!answer) return bridge.request(method, params);
      early.delete(k);
      return answer as ReturnType<typeof bridge.request<typeof method>>;
    },
    on: (event, listener) => bridge.on(event, listener),
    onClose: (listener) => bridge.onClose(listener),
    close: () => bridge.close(),
  };
}

const store = new LabStore(withEarlyReads(getBridge()));
const root = createRoot(document.getElementById("root")!);
root.render(<App store={store} />);
store.start().catch((err: Error) => store.notice("error", `Could not reach the VerbsLab host: ${err.message}`));
// The editor is lazy (App's Suspense) but nothing is usable without it: begin evaluating its
// chunk (preloaded by index.html) now, while the first bridge round trips are in flight.
void import("./panes/EditorPane.js");
