/** The step gate: holds each verb before it runs while stepping. See StepGate in session-types.ts. */
import {
  SessionStoppedError,
  type GateMode,
  type PendingCall,
  type RunToTarget,
  type StepGate,
} from "./session-types.js";

export class Gate implements StepGate {
  mode: GateMode;
  pending: PendingCall | null = null;
  stopped = false;
  private runToMethod: RunToTarget | null = null;
  private release: { resolve: () => void; reject: (e: Error) => void } | null = null;
  private listeners = new Set<(pending: PendingCall | null, mode: GateMode) => void>();

  constructor(step = false) {
    this.mode = step ? "step" : "run";
  }

  /** Resolves when the call may run; rejects with SessionStoppedError after stop(). */
  async enter(call: PendingCall): Promise<void> {
    if (this.stopped) throw new SessionStoppedError();
    if (this.mode === "run" && this.runToMethod !== null && matches(this.runToMethod, call.method)) {
      this.runToMethod = null;
      this.mode = "step";
    }
    if (this.mode === "run") return;
    this.pending = call;
    const wait = new Promise<void>((resolve, reject) => (this.release = { resolve, reject }));
    this.notify();
    await wait;
  }

  pause(): void {
    this.runToMethod = null;
    this.setMode("step");
  }

  step(): void {
    this.let((r) => r.resolve());
  }

  continue(): void {
    this.runToMethod = null;
    this.mode = "run";
    this.let((r) => r.resolve());
  }

  runTo(method: RunToTarget): void {
    this.runToMethod = method;
    this.mode = "run";
    this.let((r) => r.resolve());
  }

  stop(): void {
    this.stopped = true;
    this.let((r) => r.reject(new SessionStoppedError()));
  }

  /** Releases the waiting call (clearing `pending` at once, so listeners see the gate open) and notifies. */
  private let(how: (r: { resolve: () => void; reject: (e: Error) => void }) => void): void {
    const r = this.release;
    this.release = null;
    this.pending = null;
    if (r) how(r);
    this.notify();
  }

  subscribe(listener: (pending: PendingCall | null, mode: GateMode) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private setMode(mode: GateMode): void {
    if (this.mode === mode) return;
    this.mode = mode;
    this.notify();
  }

  private notify(): void {
    for (const l of this.listeners) l(this.pending, this.mode);
  }
}

/** "poll" also stops at pollWait, as a learner means "the next time I look at the CQ". */
function matches(target: RunToTarget, method: string): boolean {
  return method === target || (target === "poll" && method === "pollWait");
}
