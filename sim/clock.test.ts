import { describe, expect, it } from "vitest";
import { IBV_SEND_SIGNALED, IBV_WC_RETRY_EXC_ERR, IBV_WC_SUCCESS, IBV_WR_SEND } from "../verbs/constants.js";
import { createSimBackend } from "./index.js";
import { ackTimeoutMs } from "./modify.js";
import { rnrDelayMs } from "./completer.js";
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

  it("local ACK timeout and RNR delays follow the jiffy formulas of RXE-FACTS.md §5.1", () => {
    expect(ackTimeoutMs(0)).toBe(0);
    expect(ackTimeoutMs(1)).toBe(8); // floor → 0, at least 1 jiffy, plus the measured extra tick
    expect(ackTimeoutMs(10)).toBe(8);
    expect(ackTimeoutMs(14)).toBe(68);
    expect(rnrDelayMs(0)).toBe(660);
    expect(rnrDelayMs(1)).toBe(8);
    expect(rnrDelayMs(28)).toBe(168);
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
