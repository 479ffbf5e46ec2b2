/**
 * The simulator's virtual clock. Virtual milliseconds pass only while the program awaits
 * (`sleep`, `pollWait`, `getCqEvent`, `getAsyncEvent`): each wait registers a Waiter, and a
 * macrotask (setImmediate) then jumps straight to the next timer, fires every timer due at
 * that instant, and stops as soon as some waiter has been satisfied so that its
 * continuation runs at that very instant. Nothing is stepped: time jumps.
 */

import { VerbsError, errnos } from "../verbs/errors.js";
import { checkWaitMs } from "../verbs/waits.js";
import { because } from "../verbs/verb-failure.js";

/**
 * The clock never passes 2^40 ms (34.8 years). Up to there a double still tells apart
 * instants 0.25 µs apart, finer than rxe's shortest timer (the 8 µs ACK timeout of
 * timeout 1); near 2^56 ms `now + 8 === now`, and a retransmit timer would re-arm at the
 * very instant it fires, for ever.
 */
export const MAX_CLOCK_MS = 2 ** 40;

/**
 * Refuses a wait the clock cannot represent: a finite `ms` over MAX_WAIT_MS (verbs/waits.ts),
 * or one whose deadline passes MAX_CLOCK_MS (EINVAL naming the argument). Infinity means "no deadline".
 */
export function checkWait(clock: Clock, verb: string, arg: string, ms: number | undefined): void {
  if (ms === undefined || !Number.isFinite(ms) || ms <= 0) return;
  checkWaitMs(verb, arg, ms);
  if (clock.now + ms > MAX_CLOCK_MS)
    throw new VerbsError(
      verb,
      errnos.EINVAL,
      because({ kind: "clock-limit", arg, ms, max: MAX_CLOCK_MS }, { attribute: arg }),
    );
}

/** HZ=250 in the measured kernel (Debian's 6.1 in the lab VM): one jiffy is 4 ms. */
export const JIFFY_MS = 4;

/** The timer wheel's shape (kernel/time/timer.c): 9 levels of 64 buckets, each 8× coarser. */
const LVL_CLK_SHIFT = 3;
const LVL_SIZE = 64;
const LVL_DEPTH = 9;
/** Jiffies ahead from which a timer goes to level `n` (LVL_START). */
const lvlStart = (n: number): number => (LVL_SIZE - 1) * 2 ** ((n - 1) * LVL_CLK_SHIFT);
/** lvlStart(n) and level n's granularity (jiffies), by level: timerFireAt runs at every ACK. */
const LVL_STARTS = Array.from({ length: LVL_DEPTH }, (_, n) => lvlStart(n));
const LVL_GRANS = Array.from({ length: LVL_DEPTH }, (_, n) => 2 ** (n * LVL_CLK_SHIFT));

/**
 * The virtual time at which Linux fires a timer armed at `now` (ms) with
 * `mod_timer(t, jiffies + delta)`. jiffies counts whole 4 ms ticks since the simulator's
 * time 0. calc_wheel_index puts the timer on the level whose range holds `delta` and
 * calc_index rounds its expiry up to that level's granularity, strictly past it:
 * `((expires >> shift) + 1) << shift`. So a timer up to 62 jiffies out fires one tick after
 * its expiry (the "extra tick" measured on every short rxe wait), and one 63 to 503 jiffies
 * out at the next multiple of 8 jiffies after its expiry: timeout 17's 134 jiffies take 135
 * to 142, RNR 655.36 ms's 164 take 165 to 172 (RXE-FACTS.md §5.1).
 */
export function timerFireAt(now: number, delta: number): number {
  const jnow = Math.floor(now / JIFFY_MS);
  let lvl = 0;
  while (lvl < LVL_DEPTH - 1 && delta >= LVL_STARTS[lvl + 1]) lvl++;
  const gran = LVL_GRANS[lvl];
  const expires = jnow + delta;
  return (Math.floor(expires / gran) + 1) * gran * JIFFY_MS;
}

/** A timer on the heap. Owners keep their Timer objects and re-arm them (no allocation per arm). */
export class Timer {
  at = 0;
  seq = 0;
  /** Position in the heap, or -1 when not armed. */
  heapIndex = -1;
  /** What its firing can touch: one device of the world's (set by its owner), or null for anything. */
  scope: unknown = null;
  constructor(readonly fire: () => void) {}
  get armed(): boolean {
    return this.heapIndex >= 0;
  }
}

/** Something awaiting the clock: it resolves when `check()` says so or when its deadline passes. */
export interface Waiter {
  /** Returns true when the wait is over (and settles its promise). */
  check(): boolean;
  /** The deadline passed. */
  expire(): void;
  deadline: Timer | null;
  done: boolean;
}

/** Timer firings per macrotask before yielding to the event loop, so an endless retry loop cannot block it. */
const FIRINGS_PER_TURN = 20_000;

/**
 * A spinning poll steps the clock synchronously (step), where the turn's budget does not apply:
 * a timer that keeps re-arming itself for the instant it fires would hang the backend inside
 * the poll. No real run comes near this many firings at one instant, so past it the simulator
 * has a bug, and says so instead of hanging.
 */
const MAX_FIRINGS_AT_ONE_INSTANT = 1_000_000;

function stuckAt(at: number): Error {
  return new Error(
    `simulator bug: more than ${MAX_FIRINGS_AT_ONE_INSTANT} timer firings at virtual time ${at} ms without time passing (a timer re-arms itself for the instant it fires)`,
  );
}

export class Clock {
  now = 0;
  private heap: Timer[] = [];
  private seq = 0;
  private waiters = new Set<Waiter>();
  private scheduled = false;
  /** Counts settled waits, so a turn stops at the instant any wait ends. */
  settled = 0;
  /** Called after timers fire, to let the world process what they started. */
  afterFire: () => void = () => {};
  /** Called at each instant before its timers fire (the world catches its wire up to it). */
  beforeFire: (at: number) => void = () => {};

  /** Arms (or re-arms) `t` to fire at virtual time `at`. */
  arm(t: Timer, at: number): void {
    if (t.heapIndex >= 0) {
      if (t.at === at) return;
      // Moved in place: the heap orders by (at, seq) alone, so firing order is as if re-added.
      const later = at > t.at;
      t.at = at;
      t.seq = this.seq++;
      if (later) this.down(t.heapIndex);
      else this.up(t.heapIndex);
      return;
    }
    t.at = at;
    t.seq = this.seq++;
    t.heapIndex = this.heap.length;
    this.heap.push(t);
    this.up(t.heapIndex);
  }

  cancel(t: Timer): void {
    if (t.heapIndex >= 0) this.remove(t);
  }

  /** Registers a waiter; virtual time starts moving on the next macrotask. */
  addWaiter(w: Waiter): void {
    this.waiters.add(w);
    this.schedule();
  }

  removeWaiter(w: Waiter): void {
    this.waiters.delete(w);
    if (w.deadline) this.cancel(w.deadline);
  }

  /** Re-checks every waiter (after something happened that may satisfy one). */
  checkWaiters(): boolean {
    // No waiter: nothing to check (and no Set iterator made, at every clock step of a poll).
    if (this.waiters.size === 0) return false;
    let any = false;
    for (const w of this.waiters) {
      if (w.check()) {
        w.done = true;
        this.settled++;
        this.removeWaiter(w);
        any = true;
      }
    }
    return any;
  }

  get pendingWaiters(): number {
    return this.waiters.size;
  }

  /** Makes sure a turn will run (something happened that may satisfy a waiter). */
  poke(): void {
    if (this.waiters.size) this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.turn());
  }

  private turn(): void {
    this.scheduled = false;
    if (this.waiters.size === 0) return;
    if (this.checkWaiters()) {
      if (this.waiters.size) this.schedule();
      return;
    }
    for (let n = 0; n < FIRINGS_PER_TURN; n++) {
      const before = this.settled;
      const next = this.heap[0];
      if (!next) return; // nothing scheduled: waits without a deadline stay pending
      const at = next.at;
      if (at > this.now) this.now = at;
      // Fire everything due at this instant, in arming order. Each firing counts toward the
      // turn's budget: a timer that re-arms at the instant it fires must not hold the loop.
      this.busy = true;
      try {
        this.beforeFire(at);
        while (this.heap.length && this.heap[0].at <= at && n < FIRINGS_PER_TURN) {
          const t = this.heap[0];
          this.remove(t);
          t.fire();
          n++;
        }
        this.afterFire();
      } finally {
        this.busy = false;
      }
      this.checkWaiters();
      if (this.settled !== before || this.waiters.size === 0) {
        if (this.waiters.size) this.schedule();
        return;
      }
    }
    this.schedule();
  }

  /** The timer that fires next, if any. */
  get next(): Timer | undefined {
    return this.heap[0];
  }

  /**
   * The scope (Timer.scope) the timers other than `except` due by `at` share: null when one of
   * them may touch anything or two differ; undefined when none is due.
   */
  scopeBy(at: number, except: Timer): unknown {
    let scope: unknown = undefined;
    const h = this.heap;
    // A depth-first walk of the heap's entries due by `at`, on a stack kept between calls
    // (its top index `top`: resetting an array's length costs more than the walk here).
    const stack = this.scan;
    let top = 0;
    if (h.length) stack[top++] = 0;
    while (top > 0) {
      const i = stack[--top];
      const t = h[i];
      if (t.at > at) continue;
      if (t !== except) {
        if (t.scope === null || (scope !== undefined && scope !== t.scope)) return null;
        scope = t.scope;
      }
      if (2 * i + 1 < h.length) stack[top++] = 2 * i + 1;
      if (2 * i + 2 < h.length) stack[top++] = 2 * i + 2;
    }
    return scope;
  }
  private scan: number[] = [];

  /**
   * When the next timer other than `t` fires (ms; Infinity if none). The heap's second
   * smallest is one of the root's children, so this is O(1).
   */
  nextAtExcept(t: Timer): number {
    const h = this.heap;
    if (h.length === 0) return Infinity;
    if (h[0] !== t) return h[0].at;
    const a = h.length > 1 ? h[1].at : Infinity;
    const b = h.length > 2 ? h[2].at : Infinity;
    return a < b ? a : b;
  }

  /** Steps in a row that found the clock already at their instant (see MAX_FIRINGS_AT_ONE_INSTANT). */
  private stepsAtNow = 0;

  /** True while timers are firing (turn or step): a poll then must not let time run again. */
  busy = false;

  /**
   * Jumps to the next armed timer's instant, fires everything due then (as a turn does) and
   * settles the waiters that are done. For a program that polls in a loop (SimCq.poll): its
   * time passes as the wire's does. False when nothing is armed.
   */
  step(): boolean {
    const next = this.heap[0];
    if (!next || this.busy) return false;
    this.busy = true;
    try {
      const at = next.at;
      if (at > this.now) {
        this.now = at;
        this.stepsAtNow = 0;
      } else if (++this.stepsAtNow > MAX_FIRINGS_AT_ONE_INSTANT) throw stuckAt(at);
      this.beforeFire(at);
      let fired = 0;
      while (this.heap.length && this.heap[0].at <= at) {
        const t = this.heap[0];
        this.remove(t);
        t.fire();
        if (++fired > MAX_FIRINGS_AT_ONE_INSTANT) throw stuckAt(at);
      }
      this.afterFire();
    } finally {
      this.busy = false;
    }
    this.checkWaiters();
    return true;
  }

  private less(a: Timer, b: Timer): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private remove(t: Timer): void {
    const i = t.heapIndex;
    const last = this.heap.pop()!;
    t.heapIndex = -1;
    if (last !== t) {
      this.heap[i] = last;
      last.heapIndex = i;
      this.down(i);
      this.up(last.heapIndex);
    }
  }

  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i], h[p])) break;
      this.swap(i, p);
      i = p;
    }
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l], h[m])) m = l;
      if (r < h.length && this.less(h[r], h[m])) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }

  private swap(i: number, j: number): void {
    const h = this.heap;
    const a = h[i];
    const b = h[j];
    h[i] = b;
    h[j] = a;
    a.heapIndex = j;
    b.heapIndex = i;
  }
}

/**
 * Waits on `clock` until `ready()` returns a value other than undefined, or `timeoutMs`
 * passes (then `onTimeout()` supplies the result). No timeout: waits as long as it takes.
 */
export function waitFor<T>(
  clock: Clock,
  ready: () => T | undefined,
  timeoutMs: number | undefined,
  onTimeout: () => T,
): Promise<T> {
  const first = ready();
  if (first !== undefined) return Promise.resolve(first);
  if (timeoutMs !== undefined && timeoutMs <= 0) return Promise.resolve(onTimeout());
  return new Promise<T>((resolve) => {
    let result: T | undefined;
    const w: Waiter = {
      done: false,
      deadline: null,
      check() {
        result = ready();
        if (result === undefined) return false;
        resolve(result);
        return true;
      },
      expire() {
        if (w.done) return;
        w.done = true;
        clock.settled++;
        clock.removeWaiter(w);
        resolve(onTimeout());
      },
    };
    // An infinite timeout is no deadline at all (the clock must never jump to Infinity).
    if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) {
      w.deadline = new Timer(() => w.expire());
      clock.arm(w.deadline, clock.now + Math.max(0, timeoutMs));
    }
    clock.addWaiter(w);
  });
}
