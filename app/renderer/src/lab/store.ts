/**
 * The renderer's one store of what the host told it: transcript events, the latest state
 * snapshot, the step gate, the backend process status. Fed by bridge events; re-synced from
 * `transcript.get` after a reload or a backend restart, so the panes always show the whole
 * transcript. Panes read it through `useLabStore` (useSyncExternalStore).
 */
import type { Bridge } from "../../../bridge/client.js";
import type {
  BackendStatus,
  BridgeEvents,
  GateState,
  SessionInfo,
  StateSnapshot,
  TranscriptEvent,
  TranscriptHeader,
} from "../../../bridge/contract.js";

export interface Notice {
  id: number;
  level: "info" | "warn" | "error";
  text: string;
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

  constructor(readonly bridge: Bridge) {}

  get = (): LabState => this.state;

  subscribe = (l: () => void): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };

  /**
   * Updates the state and tells the panes at once. (Deferring to the next animation frame to
   * merge a verb's three events measured slower under load: bench:ui p50 26 → 322 ms.)
   */
  private set(patch: Partial<LabState>) {
    this.state = { ...this.state, ...patch };
    for (const l of this.listeners) l();
  }

  notice(level: Notice["level"], text: string) {
    const n = { id: this.nextNotice++, level, text };
    this.set({ notices: [...this.state.notices.slice(-4), n] });
    return n.id;
  }

  dismiss(id: number) {
    this.set({ notices: this.state.notices.filter((n) => n.id !== id) });
  }

  /** Appends events not seen yet (by seq), keeping order. */
  private addEvents(events: TranscriptEvent[]) {
    const last = this.state.events[this.state.events.length - 1]?.seq ?? 0;
    const fresh = events.filter((e) => e.seq > last);
    if (fresh.length) this.set({ events: [...this.state.events, ...fresh] });
  }

  /** Connects to the host: listens to every event, then loads (or starts) the session. */
  async start(options: { backend?: "sim" | "native"; seed?: number } = {}) {
    const b = this.bridge;
    this.unsubscribe.push(
      b.on("transcript", (e) => this.addEvents([e])),
      b.on("snapshot", (s) => this.set({ previousSnapshot: this.state.snapshot, snapshot: s })),
      b.on("gate", (g) => this.set({ gate: g })),
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
        if (event === "died")
          this.notice(
            "error",
            `The backend process stopped (${status.lastExit?.reason ?? "unknown reason"}). Restarting it…`,
          );
        if (event === "restarted" || (event === "started" && status.restarts > 0)) {
          this.notice("info", "The backend is back. Your transcript so far is intact.");
          void this.resync();
        }
      }),
      b.onClose((reason) => {
        this.set({ connected: false });
        this.notice("error", `Lost the connection to VerbsLab's host: ${reason}`);
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
      this.notice("warn", `Could not re-read the transcript yet: ${(err as Error).message}`);
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
    for (const u of this.unsubscribe.splice(0)) u();
  }
}
