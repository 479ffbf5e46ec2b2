/** sim/RXE-FACTS.md §3.1 (CQ rounding and capacity) and §6.3 (CQ and channel destroy ordering). */
import { expect, it } from "vitest";
import { IBV_QPT_RC, IBV_SEND_SIGNALED, IBV_WC_SUCCESS, IBV_WR_SEND } from "../constants.js";
import { B, LOOPBACK, expectVerbsError, pair, scope, suite, waitWc } from "./harness.js";

suite("CQ: ibv_create_cq rounds cqe to 2^k - 1 and returns the rounded value", () => {
  it.each([
    [1, 1],
    [2, 3],
    [3, 3],
    [4, 7],
    [7, 7],
    [8, 15],
    [10, 15],
    [16, 31],
    [100, 127],
    [32767, 32767],
  ])("cqe %i gives cq.cqe %i", (req, got) => {
    const s = scope();
    expect(s.cq(s.open(), req).cqe).toBe(got);
  });

  it.each([0, -1, 32768])("cqe %i fails with EINVAL", (req) => {
    const ctx = scope().open();
    expectVerbsError(() => ctx.createCq(req), "EINVAL");
  });

  it("cq_context is kept as given", () => {
    const s = scope();
    const token = { lesson: 3 };
    expect(s.cq(s.open(), 4, { cq_context: token }).cq_context).toBe(token);
  });
});

suite("CQ: polling", () => {
  it("ibv_poll_cq on an empty CQ returns nothing and never waits", () => {
    const s = scope();
    const cq = s.cq(s.open());
    const t0 = B().now();
    expect(cq.poll(4)).toEqual([]);
    expect(B().now() - t0).toBeLessThan(50);
  });

  it("pollWait returns what arrived when its timeout passes on the backend clock", async () => {
    const s = scope();
    const cq = s.cq(s.open());
    const t0 = B().now();
    expect(await cq.pollWait(1, 30)).toEqual([]);
    expect(B().now() - t0).toBeGreaterThanOrEqual(29);
  });

  it("a CQ of cqe=1 holds exactly one completion", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { cqe: 1 });
    b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(0, 64)] });
    a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 16)] });
    const [wc] = await waitWc(a.scq, 1);
    expect(wc.status).toBe(IBV_WC_SUCCESS);
    expect(a.scq.cqe).toBe(1);
    const [rwc] = await waitWc(b.rcq, 1);
    expect(rwc.wr_id).toBe(1);
  });

  it("poll(n) returns at most n completions, oldest first", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK);
    for (let i = 0; i < 3; i++) b.qp.postRecv({ wr_id: 10 + i, sg_list: [b.mr.sge(64 * i, 64)] });
    for (let i = 0; i < 3; i++) a.qp.postSend({ wr_id: 20 + i, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] });
    // RC: the responder completes a recv before it ACKs, so after A's 3 WCs B has all 3.
    await waitWc(a.scq, 3);
    const first = b.rcq.poll(2);
    const rest = b.rcq.poll(2);
    expect(first.map((w) => w.wr_id)).toEqual([10, 11]);
    expect(rest.map((w) => w.wr_id)).toEqual([12]);
  });
});

suite("CQ: destroy ordering (§6.3)", () => {
  it("ibv_destroy_cq while a QP uses it fails with EBUSY; after ibv_destroy_qp it succeeds", () => {
    const s = scope();
    const ctx = s.open();
    const pd = s.pd(ctx);
    const cq = ctx.createCq(4);
    const qp = pd.createQp({
      send_cq: cq,
      recv_cq: cq,
      qp_type: IBV_QPT_RC,
      cap: { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
    });
    expectVerbsError(() => cq.destroy(), "EBUSY");
    qp.destroy();
    cq.destroy();
  });

  it("ibv_destroy_comp_channel with a CQ attached fails with EBUSY", () => {
    const s = scope();
    const ctx = s.open();
    const ch = ctx.createCompChannel();
    const cq = ctx.createCq(4, { channel: ch });
    expectVerbsError(() => ch.destroy(), "EBUSY");
    cq.destroy();
    ch.destroy();
  });

  it("ibv_destroy_cq twice: the second call fails with EINVAL", () => {
    const cq = scope().open().createCq(4);
    cq.destroy();
    expectVerbsError(() => cq.destroy(), "EINVAL");
  });
});
