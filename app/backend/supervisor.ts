/**
 * The backend supervisor, used by both hosts: spawns the backend process (an Electron
 * utilityProcess in the app, a Node child process in web mode), relays requests and events,
 * notices when the process dies, says so, and starts a new one that re-opens the transcript
 * the dead one was writing. A fault in native code therefore never takes the UI with it
 * and never loses what the learner did.
 */
import type { ErrorData } from "../../verbs/errors.js";
import { backendExitText, because, hungText, type BackendExit } from "../../verbs/verb-failure.js";
import type { BackendStatus, EventName } from "../bridge/contract.js";
import { encodeValue, type WireValue } from "../session/wire.js";
import type { BackendInit, BackendToHost, HostToBackend } from "./protocol.js";

/** The process, as the supervisor needs it (a ChildProcess or an Electron UtilityProcess behind an adapter). */
export interface BackendProcess {
  readonly pid: number | undefined;
  send(message: HostToBackend): void;
  /** Ends the process; `force`: it is not answering, so no chance to clean up (SIGKILL where there is one). */
  kill(force?: boolean): void;
}

export interface SpawnHandlers {
  onMessage(message: unknown): void;
  /** Exactly once, however the process ended. */
  onExit(code: number | null, signal: string | null): void;
}

export type Spawn = (handlers: SpawnHandlers) => BackendProcess;

export interface SupervisorOptions {
  spawn: Spawn;
  init: Omit<BackendInit, "resume">;
  /** Wait before restart n (1-based) — the last value repeats. Default 0, 200, 1000, 3000 ms. */
  restartDelaysMs?: number[];
  /** Give up (stay "died") after this many deaths within `crashWindowMs`; a new request tries again. Default 5 in 60 s. */
  maxCrashes?: number;
  crashWindowMs?: number;
  /** How long a new process may take to say it is ready. Default 30 s. */
  readyTimeoutMs?: number;
  /** How often a running process is asked "ping". Default 2 s. */
  pingIntervalMs?: number;
  /**
   * A running process that leaves a ping, or a request to stop (`session.stop`, `gate.stop`),
   * unanswered this long is hung (a verb that never returns, a loop): it is killed and
   * restarted, and its transcript says so. Default 10 s.
   */
  unresponsiveMs?: number;
}

/** Requests that end a run: the learner pressed Stop, so an answer must come, or the process goes. */
const STOP_METHODS = new Set(["session.stop", "gate.stop", "run.end"]);

type Envelope = { ok: true; result: WireValue } | { ok: false; error: ErrorData };
type StatusEvent = "started" | "died" | "restarted" | "stopped";
type Listener = (event: EventName, payload: WireValue) => void;

export class BackendSupervisor {
  private readonly opts: Required<Omit<SupervisorOptions, "init" | "spawn">> &
    Pick<SupervisorOptions, "init" | "spawn">;
  private proc: BackendProcess | null = null;
  private state: BackendStatus["state"] = "stopped";
  private kind: BackendStatus["kind"] = null;
  private restarts = 0;
  private lastExit: BackendStatus["lastExit"];
  private session: { transcriptPath: string; backend: "sim" | "native"; seed?: number } | null = null;
  private readonly crashes: number[] = [];
  private nextId = 1;
  private readonly pending = new Map<number, (e: Envelope) => void>();
  private readonly queue: HostToBackend[] = [];
  private readonly listeners = new Set<Listener>();
  private ready: Promise<void> | null = null;
  private stopping = false;
  private restartTimer: ReturnType<typeof setTimeout> | null = null;
  private pingTimer: ReturnType<typeof setInterval> | null = null;
  /** The oldest ping not yet answered: its id and when it was sent. */
  private unanswered: { id: number; at: number } | null = null;
  /** Why the supervisor killed the process (it stopped answering), for the exit's reason. */
  private hung: BackendExit["hung"] | null = null;

  constructor(options: SupervisorOptions) {
    this.opts = {
      restartDelaysMs: [0, 200, 1000, 3000],
      maxCrashes: 5,
      crashWindowMs: 60_000,
      readyTimeoutMs: 30_000,
      pingIntervalMs: 2_000,
      unresponsiveMs: 10_000,
      ...options,
    };
  }

  /** Starts the backend process (resolves when it is ready). */
  start(): Promise<void> {
    this.stopping = false;
    if (this.ready && (this.state === "running" || this.state === "starting" || this.state === "restarting"))
      return this.ready;
    return this.launch(null);
  }

  status(): BackendStatus {
    return {
      state: this.state,
      kind: this.kind,
      ...(this.proc?.pid !== undefined && this.state === "running" && { pid: this.proc.pid }),
      restarts: this.restarts,
      ...(this.lastExit && { lastExit: this.lastExit }),
      ...(this.session && { transcriptPath: this.session.transcriptPath }),
    };
  }

  /** Listens to the backend's events (already wire-encoded) and the supervisor's own "backend" events. */
  onEvent(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sends a validated request (params wire-encoded); resolves with the envelope, never rejects. */
  request(method: string, params: WireValue): Promise<Envelope> {
    if (this.stopping) return Promise.resolve(failure("BackendStoppedError", "the backend is shutting down"));
    if (this.state === "died" || this.state === "stopped") void this.launch(null).catch(() => {});
    const id = this.nextId++;
    return new Promise<Envelope>((resolve) => {
      this.pending.set(id, resolve);
      this.post({ type: "request", id, method, params });
      if (STOP_METHODS.has(method)) {
        const proc = this.proc;
        const timer = setTimeout(() => {
          if (this.pending.has(id) && this.proc === proc && this.state === "running")
            this.unresponsive({ method, ms: this.opts.unresponsiveMs });
        }, this.opts.unresponsiveMs);
        timer.unref?.();
      }
    });
  }

  /** Kills a process that stopped answering; exited() then restarts it, re-opening its transcript. */
  private unresponsive(hung: NonNullable<BackendExit["hung"]>): void {
    const proc = this.proc;
    if (!proc || this.hung) return;
    this.hung = hung;
    this.emit("log", {
      level: "error",
      text: `The backend process is not responding: ${hungText(hung)}. Restarting it.`,
    });
    proc.kill(true);
  }

  private startPings(proc: BackendProcess): void {
    this.stopPings();
    this.pingTimer = setInterval(
      () => {
        if (this.proc !== proc || this.state !== "running") return;
        const now = Date.now();
        if (this.unanswered && now - this.unanswered.at >= this.opts.unresponsiveMs)
          return this.unresponsive({ ms: this.opts.unresponsiveMs });
        if (this.unanswered) return;
        const id = this.nextId++;
        this.unanswered = { id, at: now };
        proc.send({ type: "ping", id });
      },
      Math.min(this.opts.pingIntervalMs, this.opts.unresponsiveMs),
    );
    this.pingTimer.unref?.();
  }

  private stopPings(): void {
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
    this.unanswered = null;
  }

  /** Ends the backend process for good (the host is quitting). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopPings();
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const proc = this.proc;
    if (!proc) {
      this.setState("stopped");
      return;
    }
    await new Promise<void>((resolve) => {
      const off = this.onEvent((event, payload) => {
        if (event === "backend" && (payload as { event?: string }).event === "stopped") {
          off();
          resolve();
        }
      });
      proc.kill();
    });
  }

  private post(message: HostToBackend): void {
    if (this.state === "running" && this.proc) this.proc.send(message);
    else this.queue.push(message);
  }

  private emit(event: EventName, payload: WireValue): void {
    for (const l of [...this.listeners]) {
      try {
        l(event, payload);
      } catch (err) {
        console.error("backend supervisor: an event listener threw", err);
      }
    }
  }

  private setState(state: BackendStatus["state"], event?: StatusEvent): void {
    this.state = state;
    if (event) this.emit("backend", encodeValue({ ...this.status(), event }));
  }

  private launch(exit: BackendExit | null): Promise<void> {
    const resume = exit !== null && this.session ? { ...this.session, reason: backendExitText(exit), exit } : undefined;
    const init: BackendInit = { ...this.opts.init, ...(resume && { resume }) };
    if (resume) init.backend = resume.backend;
    this.setState(exit === null ? "starting" : "restarting");

    this.ready = new Promise<void>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        reject(new Error(`the backend process did not start within ${this.opts.readyTimeoutMs} ms`));
        proc.kill();
      }, this.opts.readyTimeoutMs);
      const handlers: SpawnHandlers = {
        onMessage: (raw) => {
          if (this.proc !== proc) return; // a late message from a process already replaced
          const msg = raw as BackendToHost;
          switch (msg?.type) {
            case "ready": {
              if (settled) return;
              settled = true;
              clearTimeout(timer);
              this.kind = msg.kind;
              if (msg.transcriptPath && this.session) this.session.transcriptPath = msg.transcriptPath;
              this.setState("running", exit === null ? "started" : "restarted");
              for (const m of this.queue.splice(0)) proc.send(m);
              this.startPings(proc);
              resolve();
              return;
            }
            case "pong":
              if (this.unanswered?.id === msg.id) this.unanswered = null;
              return;
            case "response": {
              const done = this.pending.get(msg.id);
              if (!done) return;
              this.pending.delete(msg.id);
              done(msg.ok ? { ok: true, result: msg.result } : { ok: false, error: msg.error });
              return;
            }
            case "event":
              this.emit(msg.event, msg.payload);
              return;
            case "batch":
              // One turn's messages (see entry.ts), handled in the order they were sent.
              for (const m of msg.messages) handlers.onMessage(m);
              return;
            case "session":
              this.session = {
                transcriptPath: msg.transcriptPath,
                backend: msg.backend,
                ...(msg.seed !== undefined && { seed: msg.seed }),
              };
              this.kind = msg.backend;
              return;
            case "fatal":
              if (!settled) {
                settled = true;
                clearTimeout(timer);
                reject(new Error(`the backend process could not start: ${msg.error.message}`));
              }
              return;
          }
        },
        onExit: (code, signal) => {
          clearTimeout(timer);
          if (this.proc !== proc) return;
          this.proc = null;
          this.exited(code, signal);
          if (!settled) {
            settled = true;
            reject(new Error(`the backend process ended before it was ready (${backendExitText({ code, signal })})`));
          }
        },
      };
      const proc = this.opts.spawn(handlers);
      this.proc = proc;
      proc.send({ type: "init", init });
    });
    // Callers that do not await still must not see an unhandled rejection.
    this.ready.catch(() => {});
    return this.ready;
  }

  private exited(code: number | null, signal: string | null): void {
    this.stopPings();
    const exit: BackendExit = { code, signal, ...(this.hung && { hung: this.hung }) };
    this.hung = null;
    this.lastExit = { ...exit, at: Date.now(), reason: backendExitText(exit) };
    // Requests in flight died with the process: answer them, so no caller waits forever.
    const died = because({ kind: "backend-died", exit, during: "request" });
    for (const done of this.pending.values())
      done({ ok: false, error: { name: "BackendDiedError", message: died.reason!, ...died } });
    this.pending.clear();
    this.queue.length = 0;

    if (this.stopping) {
      this.setState("stopped", "stopped");
      return;
    }
    this.setState("died", "died");
    const now = Date.now();
    this.crashes.push(now);
    while (this.crashes.length && now - this.crashes[0]! > this.opts.crashWindowMs) this.crashes.shift();
    if (this.crashes.length > this.opts.maxCrashes) {
      this.emit("log", {
        level: "error",
        text: `The backend process keeps dying (${this.crashes.length} times in a minute, last: ${this.lastExit.reason}). It will be started again on your next action.`,
      });
      return;
    }
    const delays = this.opts.restartDelaysMs;
    const delay = delays[Math.min(this.crashes.length - 1, delays.length - 1)] ?? 0;
    this.restarts++;
    this.state = "restarting";
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.stopping) return;
      this.launch(exit).catch((err: Error) => this.emit("log", { level: "error", text: err.message }));
    }, delay);
  }
}

function failure(name: string, message: string): Envelope {
  return { ok: false, error: { name, message } };
}
