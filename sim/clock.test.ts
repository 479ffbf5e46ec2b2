import { describe, expect, it } from "vitest";
import { IBV_SEND_SIGNALED, IBV_WC_RETRY_EXC_ERR, IBV_WC_SUCCESS, IBV_WR_SEND } from "../verbs/constants.js";
import { VerbsError } from "../verbs/errors.js";
import { MAX_WAIT_MS } from "../verbs/waits.js";
import { Clock, MAX_CLOCK_MS, Timer, timerFireAt, waitFor } from "./clock.js";
import { createSimBackend } from "./index.js";
import { ackTimeoutJiffies } from "./modify.js";
import { rnrDelayJiffies } from "./completer.js";
import { connectRc, makeEnd } from "./testing.js";

describe("virtual clock", () => {
  it("sleep advances virtual time exactly and costs no real time", async () => {
    const b = createSimBackend();
    const wall = Date.now();
    await b.sleep(10_000);
    expect(b.now()).toBe(10_000);
    await b.sleep(0.5);
    expect(b.now()).toBe(10_000.5);
    expect(Date.now() - wall).toBeLessThan(2000);
  });

  it("a spinning poll's step fails, naming the bug, when a timer keeps re-arming itself for its own instant", () => {
    // Re-armed from inside its firing: one step would fire it for ever.
    const inner = new Clock();
    const self: Timer = new Timer(() => inner.arm(self, inner.now));
    inner.arm(self, 5);
    expect(() => inner.step()).toThrow(/simulator bug: more than 1000000 timer firings at virtual time 5 ms/);
    expect(inner.busy).toBe(false);
    // Re-armed after the instant's firings (as the world's afterFire could): every step finds it due again.
    const outer = new Clock();
    const t = new Timer(() => {});
    outer.afterFire = () => outer.arm(t, outer.now);
    outer.arm(t, 7);
    expect(() => {
      for (let i = 0; i < 2_000_000; i++) outer.step();
    }).toThrow(/at virtual time 7 ms without time passing/);
    // A clock whose timers move on is not stopped, however many it fires.
    const fine = new Clock();
    let n = 0;
    const tick: Timer = new Timer(() => {
      if (++n < 1_500_000) fine.arm(tick, fine.now + 1);
    });
    fine.arm(tick, 1);
    while (fine.step());
    expect(n).toBe(1_500_000);
  });

  it("concurrent waiters are all registered before time moves, and each wakes at its own instant", async () => {
    const b = createSimBackend();
    const woke: [string, number][] = [];
    await Promise.all([
      b.sleep(30).then(() => woke.push(["a", b.now()])),
      b.sleep(10).then(() => woke.push(["b", b.now()])),
      b.sleep(20).then(() => woke.push(["c", b.now()])),
    ]);
    expect(woke).toEqual([
      ["b", 10],
      ["c", 20],
      ["a", 30],
    ]);
  });

  it("a wait with no timeout and nothing scheduled stays pending (and does not block the event loop)", async () => {
    const b = createSimBackend();
    const ctx = b.openDevice("rxe0");
    let settled = false;
    void ctx.getAsyncEvent().then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(settled).toBe(false);
    expect(b.now()).toBe(0);
  });

  it("local ACK timeout and RNR delays in jiffies follow rxe's conversions (RXE-FACTS.md §5.1)", () => {
    expect(ackTimeoutJiffies(0)).toBe(0);
    expect(ackTimeoutJiffies(1)).toBe(1); // nsecs_to_jiffies rounds 8 µs down to 0; at least 1
    expect(ackTimeoutJiffies(10)).toBe(1);
    expect(ackTimeoutJiffies(14)).toBe(16); // 67.1 ms
    expect(ackTimeoutJiffies(17)).toBe(134); // 536.9 ms
    expect(rnrDelayJiffies(0)).toBe(164); // usecs_to_jiffies rounds 655.36 ms up
    expect(rnrDelayJiffies(1)).toBe(1);
    expect(rnrDelayJiffies(24)).toBe(11); // 40.96 ms
    expect(rnrDelayJiffies(28)).toBe(41);
  });

  it("timers fire as the kernel's wheel fires them: one tick late up to 62 jiffies, at the next multiple of 8 beyond", () => {
    // Level 0: expiry + 1 jiffy, from the tick the timer was armed in.
    expect(timerFireAt(0, 16)).toBe(68);
    expect(timerFireAt(2, 16)).toBe(68);
    expect(timerFireAt(4, 16)).toBe(72);
    expect(timerFireAt(0, 62)).toBe(63 * 4);
    // Level 1 (63..503 jiffies): rounded up past the expiry to a multiple of 8 jiffies.
    expect(timerFireAt(0, 63)).toBe(64 * 4);
    expect(timerFireAt(0, 134)).toBe(136 * 4);
    expect(timerFireAt(136 * 4, 134)).toBe(272 * 4); // each retry after the first: 136 jiffies
    expect(timerFireAt(2 * 4, 134)).toBe(144 * 4); // the first one waits 135..142 by phase
    expect(timerFireAt(0, 164)).toBe(168 * 4);
    expect(timerFireAt(5 * 4, 164)).toBe(176 * 4);
    // Level 2 (504..4031): multiples of 64.
    expect(timerFireAt(0, 504)).toBe(512 * 4);
    expect(timerFireAt(0, 512)).toBe(576 * 4);
  });

  it("pollWait resolves at the exact virtual instant the retry machinery gives up", async () => {
    const b = createSimBackend();
    const a = makeEnd(b.openDevice("rxe0"));
    const z = makeEnd(b.openDevice("rxe1"));
    connectRc(a, z, { timeout: 14, retry_cnt: 3 });
    connectRc(z, a);
    z.qp.destroy(); // packets now go to a QPN that no longer exists
    a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 8)] });
    const [wc] = await a.cq.pollWait(1, 10_000);
    expect(wc.status).toBe(IBV_WC_RETRY_EXC_ERR);
    expect(b.now()).toBe(4 * 68);
  });

  it("pollWait returns what arrived when the timeout passes first", async () => {
    const b = createSimBackend();
    const a = makeEnd(b.openDevice("rxe0"));
    const z = makeEnd(b.openDevice("rxe0"));
    connectRc(a, z);
    connectRc(z, a);
    z.qp.postRecv({ wr_id: 7, sg_list: [z.mr.sge(0, 64)] });
    a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 8)] });
    const wcs = await a.cq.pollWait(3, 25);
    expect(wcs.map((w) => w.status)).toEqual([IBV_WC_SUCCESS]);
    expect(b.now()).toBe(25);
  });
});

describe("the clock's bounds", () => {
  it("refuses a wait past what the clock represents (EINVAL naming the argument), and time stays put", async () => {
    const b = createSimBackend();
    const err = await Promise.resolve()
      .then(() => b.sleep(1e17))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VerbsError);
    expect(err).toMatchObject({ code: "EINVAL", attribute: "ms", verb: "verbslab_sleep" });
    expect(b.now()).toBe(0);
    const ctx = b.openDevice("rxe0");
    const cq = ctx.createCq(4);
    expect(() => cq.pollWait(1, MAX_WAIT_MS + 1)).toThrow(expect.objectContaining({ attribute: "timeoutMs" }));
    expect(() => ctx.getAsyncEvent(1e300)).toThrow(expect.objectContaining({ code: "EINVAL" }));
    // The longest wait works; many of them stop short of the clock's end.
    await b.sleep(MAX_WAIT_MS);
    expect(b.now()).toBe(MAX_WAIT_MS);
    // Infinity still means no deadline, not a jump to the end of time.
    expect(MAX_CLOCK_MS).toBeLessThan(2 ** 53);
  });

  it("a timer that re-arms at the instant it fires does not hold the event loop", async () => {
    const clock = new Clock();
    clock.now = 2 ** 56;
    // What a retransmit timer does where now + 8 === now: it re-arms at the very same instant.
    const t: Timer = new Timer(() => clock.arm(t, clock.now + 8));
    clock.arm(t, clock.now);
    let ticked = false;
    const w = waitFor(
      clock,
      () => (ticked ? true : undefined),
      undefined,
      () => false,
    );
    await new Promise((r) => setTimeout(r, 20));
    // The event loop ran the timeout above: the clock yielded. A later check ends the wait.
    ticked = true;
    clock.poke();
    expect(await w).toBe(true);
    clock.cancel(t);
  });
});
