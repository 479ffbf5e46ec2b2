/**
 * The renderer's one store of what the host told it: transcript events, the latest state
 * snapshot, the step gate, the backend process status. Fed by bridge events; re-synced from
 * `transcript.get` after a reload or a backend restart, so the panes always show the whole
 * transcript. Panes read it through `useLabStore` (useSyncExternalStore).
 */
import type { Bridge } from "../../../bridge/client.js";
import type { Strings } from "../i18n.js";
import type {
  BackendStatus,
  BridgeEvents,
  GateState,
  SessionInfo,
  StateSnapshot,
  TranscriptEvent,
  TranscriptHeader,
} from "../../../bridge/contract.js";

/** The longest a step's events wait for the gate to hold the next verb before the panes show them. */
export const STEP_HOLD_MS = 50;

export interface Notice {
  id: number;
  level: "info" | "warn" | "error";
  /** The text, or how to word it (i18n.ts): worded when shown, in the language chosen then. */
  text: string | ((t: Strings) => string);
}

export interface LabState {
  header: TranscriptHeader | null;
  session: SessionInfo | null;
  events: TranscriptEvent[];
  snapshot: StateSnapshot | null;
  previousSnapshot: StateSnapshot | null;
  gate: GateState | null;
  backend: BackendStatus | null;
  progress: BridgeEvents["progress"] | null;
  notices: Notice[];
  /** False while the connection to the host is lost. */
  connected: boolean;
}

export class LabStore {
  private state: LabState = {
    header: null,
    session: null,
    events: [],
    snapshot: null,
    previousSnapshot: null,
    gate: null,
    backend: null,
    progress: null,
    notices: [],
    connected: true,
  };
  private listeners = new Set<() => void>();
  private nextNotice = 1;
  private unsubscribe: (() => void)[] = [];

  constructor(readonly bridge: Bridge) {
    this.notifier.port1.onmessage = this.notify;
  }

  get = (): LabState => this.state;

  subscribe = (l: () => void): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };

  private notifyQueued = false;
  private readonly notifier = new MessageChannel();

  /**
   * Updates the state at once and tells the panes in a task of its own, right after this one
   * (a MessageChannel message: no timer clamp, no frame wait; deferring to the next animation
   * frame waits for frames, which come late under load). Why a task: React renders a
   * store change in a microtask, which runs before the verb's response can reach the learner's
   * worker, so the backend would wait on the page's render (~20–30 ms) for the next call; in
   * a task the render overlaps that round trip, and every change of one task is one render.
   * Only the per-step events (`later`) wait; what the learner did (dismiss a notice, reset,
   * import) shows at once.
   */
  private set(patch: Partial<LabState>, later = false) {
    this.state = { ...this.state, ...patch };
    if (!later) return this.notify();
    if (this.notifyQueued || this.holdTimer !== null) return;
    this.notifyQueued = true;
    this.notifier.port2.postMessage(null);
  }

  private notify = () => {
    this.notifyQueued = false;
    this.endHold(false);
    for (const l of this.listeners) l();
  };

  /**
   * One step, one render. Step lets one verb through the gate; its events (gate open, the verb's
   * transcript event and snapshot, an unstepped mr.write's) arrive a few ms before the gate
   * holds the next verb. Rendering in between would put a render and a frame (~20–40 ms of the
   * main thread) on the path of the worker's next call, which the page relays to the host, and
   * render twice per step. So after a step's release the per-step events wait until the gate
   * holds again, the run ends or `STEP_HOLD_MS` pass — then the panes show it all at once.
   */
  private holdTimer: ReturnType<typeof setTimeout> | null = null;

  private startHold() {
    if (this.holdTimer !== null) return;
    this.holdTimer = setTimeout(() => this.endHold(true), STEP_HOLD_MS);
  }

  private endHold(notify: boolean) {
    if (this.holdTimer === null) return;
    clearTimeout(this.holdTimer);
    this.holdTimer = null;
    if (notify && !this.notifyQueued) {
      this.notifyQueued = true;
      this.notifier.port2.postMessage(null);
    }
  }

  private onGate = (g: GateState) => {
    // Released by Step (still stepping, nothing pending): hold; any other gate state ends the hold.
    if (g.mode === "step" && !g.pending && !g.stopped) this.startHold();
    else this.endHold(false);
    this.set({ gate: g }, true);
  };

  notice(level: Notice["level"], text: Notice["text"]) {
    const n = { id: this.nextNotice++, level, text };
    this.set({ notices: [...this.state.notices.slice(-4), n] });
    return n.id;
  }

  dismiss(id: number) {
    this.set({ notices: this.state.notices.filter((n) => n.id !== id) });
  }

  /** Appends events not seen yet (by seq), keeping order. */
  private addEvents(events: TranscriptEvent[], later = false) {
    const last = this.state.events[this.state.events.length - 1]?.seq ?? 0;
    const fresh = events.filter((e) => e.seq > last);
    if (fresh.length) this.set({ events: [...this.state.events, ...fresh] }, later);
  }

  /** Connects to the host: listens to every event, then loads (or starts) the session. */
  async start(options: { backend?: "sim" | "native"; seed?: number } = {}) {
    const b = this.bridge;
    this.unsubscribe.push(
      b.on("transcript", (e) => this.addEvents([e], true)),
      b.on("snapshot", (s) => this.set({ previousSnapshot: this.state.snapshot, snapshot: s }, true)),
      b.on("gate", this.onGate),
      b.on("progress", (p) => this.set({ progress: p.finished ? null : p })),
      b.on("log", (l) => {
        if (l.level !== "info") this.notice(l.level, l.text);
      }),
      b.on("session", (s) => {
        const { header, resumed, ...info } = s;
        if (resumed) {
          this.set({ session: info, header });
          void this.resync();
        } else this.set({ session: info, header, events: [], snapshot: null, previousSnapshot: null });
      }),
      b.on("backend", (s) => {
        const { event, ...status } = s;
        this.set({ backend: status });
        if (event === "died") this.notice("error", (t) => t.backendDied(status.lastExit));
        if (event === "restarted" || (event === "started" && status.restarts > 0)) {
          this.notice("info", (t) => t.backendBack);
          void this.resync();
        }
      }),
      b.onClose((reason) => {
        this.set({ connected: false });
        this.notice("error", (t) => t.hostLost(reason));
      }),
    );
    const [info, got] = await Promise.all([b.request("host.info", {}), b.request("transcript.get", {})]);
    this.set({ backend: info.backend });
    if (got.header) {
      this.set({ header: got.header });
      this.addEvents(got.events);
    } else {
      const s = await b.request("session.start", {
        backend: options.backend ?? "sim",
        ...(options.seed !== undefined && { seed: options.seed }),
      });
      this.set({ session: s });
    }
    const [snapshot, gate] = await Promise.all([b.request("state.snapshot", {}), b.request("gate.state", {})]);
    this.set({ snapshot, gate });
  }

  /** Fetches what may have been missed (after a restart or a dropped event). */
  async resync() {
    try {
      const last = this.state.events[this.state.events.length - 1]?.seq ?? 0;
      const got = await this.bridge.request("transcript.get", { sinceSeq: last });
      if (got.header) this.set({ header: got.header });
      this.addEvents(got.events);
      const [snapshot, gate, backend] = await Promise.all([
        this.bridge.request("state.snapshot", {}),
        this.bridge.request("gate.state", {}),
        this.bridge.request("backend.status", {}),
      ]);
      this.set({ previousSnapshot: this.state.snapshot, snapshot, gate, backend });
    } catch (err) {
      const why = (err as Error).message;
      this.notice("warn", (t) => t.resyncFailed(why));
    }
  }

  /** A fresh session (Reset): the old transcript file stays on disk. */
  async reset() {
    const s = await this.bridge.request("session.reset", {});
    this.set({ session: s, events: [], snapshot: null, previousSnapshot: null, gate: null });
  }

  /** Loads an imported transcript's events into the panes. */
  showImported(header: TranscriptHeader, events: TranscriptEvent[]) {
    this.set({ header, events, snapshot: null, previousSnapshot: null });
  }

  close() {
    this.endHold(false);
    this.notifier.port1.close();
    for (const u of this.unsubscribe.splice(0)) u();
  }
}
