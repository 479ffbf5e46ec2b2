/**
 * sim/RXE-FACTS.md §5 and §5.1: RNR NAKs and rnr_retry (7 = forever), the local ACK timeout and
 * retry_cnt (7 = forever on rxe), PSN mismatches. Timings are on the backend's clock and
 * asserted with tolerances: exact on the simulator, jittery on real rxe in a slow VM.
 */
import { expect, it } from "vitest";
import {
  IBV_QPS_ERR,
  IBV_QPS_RTS,
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_WC_RECV,
  IBV_WC_RETRY_EXC_ERR,
  IBV_WC_RNR_RETRY_EXC_ERR,
  IBV_WC_SUCCESS,
  IBV_WR_RDMA_READ,
  IBV_WR_RDMA_WRITE,
  IBV_WR_SEND,
} from "../constants.js";
import type { SendWr } from "../types.js";
import {
  B,
  type Endpoint,
  LOOPBACK,
  RNR_USEC,
  SLACK_MS,
  type Scope,
  endpoint,
  ackTimeoutMs,
  expectBetween,
  expectErrorWc,
  expectNoWc,
  expectState,
  pair,
  recordMeasured,
  stopwatch,
  expectAtLeastJiffies,
  type Lap,
  LAB_JIFFY_MS,
  scope,
  suite,
  waitWc,
} from "./harness.js";

/** A QPN that no QP on rxe0 has: QPNs are not reused after destroy. */
function deadQpn(s: Scope): number {
  const e = endpoint(s, "rxe0", "ipv4");
  const n = e.qp.qp_num;
  e.qp.destroy();
  return n;
}

/** rxe's qp_timeout_jiffies: nsecs_to_jiffies(4096 << timeout), rounded down, at least 1. */
function ackTimeoutJiffies(timeout: number): number {
  return Math.max(1, Math.floor((4096 * 2 ** timeout) / (LAB_JIFFY_MS * 1e6)));
}
/** rxe's rnrnak_jiffies: usecs_to_jiffies(rnrnak_usec[timer]), rounded up, at least 1. */
function rnrJiffies(timer: number): number {
  return Math.max(1, Math.ceil(RNR_USEC[timer] / (LAB_JIFFY_MS * 1000)));
}

/**
 * Time to RETRY_EXC_ERR: (retry_cnt + 1) attempts, each a timer of qp_timeout_jiffies that
 * cannot fire early (checked in jiffies), ≈ T + a tick each; at most 3× that plus slack.
 */
function expectRetryTiming(lap: Lap, timeout: number, retry_cnt: number) {
  expectAtLeastJiffies(lap, (retry_cnt + 1) * ackTimeoutJiffies(timeout));
  expectBetween(lap.ms, 0, 3 * (retry_cnt + 1) * (ackTimeoutMs(timeout) + 8) + SLACK_MS);
}

/** Time to RNR_RETRY_EXC_ERR: rnr_retry waits of the responder's timer in jiffies (at least 1 each). */
function expectRnrTiming(lap: Lap, rnr_retry: number, responderTimer: number) {
  expectAtLeastJiffies(lap, rnr_retry * rnrJiffies(responderTimer));
  const d = RNR_USEC[responderTimer] / 1000;
  expectBetween(lap.ms, 0, 3 * rnr_retry * (Math.max(d, 4) + 8) + SLACK_MS);
}

const send = (a: Endpoint): SendWr => ({ wr_id: 77, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 32)] });

suite("RNR: SEND with no recv posted (§5, §5.1)", () => {
  it("rnr_retry=0: RNR_RETRY_EXC_ERR within a few ms; A ERR, B RTS and sees nothing", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { a_rts: { rnr_retry: 0 } });
    const t0 = B().now();
    a.qp.postSend(send(a));
    const [wc] = await waitWc(a.scq, 1, 300);
    expectErrorWc(wc, IBV_WC_RNR_RETRY_EXC_ERR, a.qp, 77);
    expect(B().now() - t0).toBeLessThan(100 + SLACK_MS);
    expectState(a.qp, IBV_QPS_ERR);
    expectState(b.qp, IBV_QPS_RTS);
    await expectNoWc(b.rcq, 20);
  });

  it("rnr_retry=2 with the responder's min_rnr_timer 24 (40.96 ms): RNR_RETRY_EXC_ERR after ≈ 2 × 40.96 ms", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { a_rts: { rnr_retry: 2 }, b_rtr: { min_rnr_timer: 24 } });
    const lap = stopwatch();
    a.qp.postSend(send(a));
    const [wc] = await waitWc(a.scq, 1, 600);
    expectErrorWc(wc, IBV_WC_RNR_RETRY_EXC_ERR, a.qp, 77);
    const t = lap();
    recordMeasured("rnr_retry 2, responder min_rnr_timer 24: to RNR_RETRY_EXC_ERR", t);
    expectRnrTiming(t, 2, 24);
    expectState(a.qp, IBV_QPS_ERR);
    expectState(b.qp, IBV_QPS_RTS);
  });

  // usecs_to_jiffies(655360) is 164 jiffies; the wheel rounds a timer that far out up to a
  // multiple of 8 jiffies: 165 to 172, so never before 656 ms (measured 668 ms).
  it("rnr_retry=1 with the responder's min_rnr_timer 0 (655.36 ms): one wait of 164 jiffies rounded up to the wheel's 8, never before 656 ms", async () => {
    const s = scope();
    const { a } = pair(s, LOOPBACK, { a_rts: { rnr_retry: 1 }, b_rtr: { min_rnr_timer: 0 } });
    const lap = stopwatch();
    a.qp.postSend(send(a));
    const [wc] = await waitWc(a.scq, 1, 3000);
    expectErrorWc(wc, IBV_WC_RNR_RETRY_EXC_ERR, a.qp, 77);
    const t = lap();
    recordMeasured("rnr_retry 1, responder min_rnr_timer 0: to RNR_RETRY_EXC_ERR", t);
    expectAtLeastJiffies(t, 164);
    expectBetween(t.ms, 0, 3 * 700 + SLACK_MS);
  });

  it("the NAK carries the responder's timer: requester min_rnr_timer 31 is ignored, responder 1 makes it fast", async () => {
    const s = scope();
    const { a } = pair(s, LOOPBACK, {
      a_rts: { rnr_retry: 3 },
      a_rtr: { min_rnr_timer: 31 },
      b_rtr: { min_rnr_timer: 1 },
    });
    const t0 = B().now();
    a.qp.postSend(send(a));
    const [wc] = await waitWc(a.scq, 1, 600);
    expectErrorWc(wc, IBV_WC_RNR_RETRY_EXC_ERR, a.qp, 77);
    const elapsed = B().now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(0);
    // With the requester's own timer (3 × 491.52 ms) it would take at least 1.3 s.
    expect(elapsed).toBeLessThan(0.9 * 3 * (RNR_USEC[31] / 1000));
  });

  it("rnr_retry=7 retries forever: the SEND succeeds once B posts a recv 150 ms later; both stay RTS", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { a_rts: { rnr_retry: 7 }, b_rtr: { min_rnr_timer: 14 } });
    const t0 = B().now();
    a.qp.postSend(send(a));
    await expectNoWc(a.scq, 150);
    b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 64)] });
    const [wc] = await waitWc(a.scq, 1, 300);
    expect(wc).toMatchObject({ status: IBV_WC_SUCCESS, wr_id: 77 });
    expect(B().now() - t0).toBeGreaterThanOrEqual(150);
    expect((await waitWc(b.rcq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, opcode: IBV_WC_RECV, wr_id: 5 });
    expectState(a.qp, IBV_QPS_RTS);
    expectState(b.qp, IBV_QPS_RTS);
  });
});

suite("Retry: the local ACK timeout and retry_cnt (§5, §5.1)", () => {
  it("a non-existent dest_qp_num: RETRY_EXC_ERR after ≈ (retry_cnt+1) × T (timeout 14, retry_cnt 0 ≈ 69 ms); A ERR", async () => {
    const s = scope();
    const { a } = pair(s, LOOPBACK, { a_dest_qp_num: deadQpn(s), a_rts: { timeout: 14, retry_cnt: 0 } });
    const lap = stopwatch();
    a.qp.postSend({
      wr_id: 77,
      opcode: IBV_WR_RDMA_WRITE,
      sg_list: [a.mr.sge(0, 8)],
      rdma: { remote_addr: 0, rkey: 0 },
    });
    const [wc] = await waitWc(a.scq, 1, 600);
    expectErrorWc(wc, IBV_WC_RETRY_EXC_ERR, a.qp, 77);
    expectRetryTiming(lap(), 14, 0);
    expectState(a.qp, IBV_QPS_ERR);
  });

  it("timeout 10 (4.2 ms), retry_cnt 3: RETRY_EXC_ERR after ≈ 4 attempts (measured 31.5 ms)", async () => {
    const s = scope();
    const { a: a2 } = pair(s, LOOPBACK, { a_dest_qp_num: deadQpn(s), a_rts: { timeout: 10, retry_cnt: 3 } });
    const lap = stopwatch();
    a2.qp.postSend(send(a2));
    const [wc] = await waitWc(a2.scq, 1, 600);
    expectErrorWc(wc, IBV_WC_RETRY_EXC_ERR, a2.qp, 77);
    expectRetryTiming(lap(), 10, 3);
  });

  it("timeout 1 (8 µs) is floored to one jiffy: retry_cnt 3 still takes ≈ 4 × 8 ms (measured 31.4 ms)", async () => {
    const s = scope();
    const { a } = pair(s, LOOPBACK, { a_dest_qp_num: deadQpn(s), a_rts: { timeout: 1, retry_cnt: 3 } });
    const t0 = B().now();
    a.qp.postSend(send(a));
    const [wc] = await waitWc(a.scq, 1, 600);
    expectErrorWc(wc, IBV_WC_RETRY_EXC_ERR, a.qp, 77);
    // One 4 ms jiffy per attempt at least (HZ=250), so never the 33 µs the IB formula gives.
    expectBetween(B().now() - t0, 4 * 4, 3 * 4 * 12 + SLACK_MS);
  });

  // The kernel's timer wheel (kernel/time/timer.c calc_index) fires a timer whose expiry is 63
  // or more jiffies away only at a multiple of 8 jiffies after it, never before: at timeout 17
  // (134 jiffies) each attempt takes 135 to 142 jiffies, the first one by the phase of the
  // jiffies counter and the next ones 136 (the wheel's 8 minus 134 mod 8, added to 134).
  it("timeout 17 (537 ms), retry_cnt 2: RETRY_EXC_ERR after 3 attempts of 134 jiffies rounded up to the wheel's 8 (measured 1651 ms), never before 1624 ms", async () => {
    const s = scope();
    const { a } = pair(s, LOOPBACK, { a_dest_qp_num: deadQpn(s), a_rts: { timeout: 17, retry_cnt: 2 } });
    const lap = stopwatch();
    a.qp.postSend(send(a));
    const [wc] = await waitWc(a.scq, 1, 3000);
    expectErrorWc(wc, IBV_WC_RETRY_EXC_ERR, a.qp, 77);
    const t = lap();
    recordMeasured("timeout 17, retry_cnt 2: to RETRY_EXC_ERR", t);
    // 134 + 136 + 136 jiffies at the least; the IB formula alone (3 × 536.9 ms) would be 403.
    expectAtLeastJiffies(t, 406);
    expectBetween(t.ms, 0, 3 * 3 * 550 + SLACK_MS);
  });

  it("retry_cnt 7 is infinite on rxe: no WC in 300 ms toward a dead QPN, A stays RTS", async () => {
    const s = scope();
    const { a: a2 } = pair(s, LOOPBACK, { a_dest_qp_num: deadQpn(s), a_rts: { timeout: 10, retry_cnt: 7 } });
    a2.qp.postSend(send(a2));
    await expectNoWc(a2.scq, 300);
    expectState(a2.qp, IBV_QPS_RTS);
  });

  it("timeout 0 means no retransmit timer: no WC in 300 ms toward a dead QPN, A stays RTS", async () => {
    const s = scope();
    const { a: a2 } = pair(s, LOOPBACK, { a_dest_qp_num: deadQpn(s), a_rts: { timeout: 0, retry_cnt: 1 } });
    a2.qp.postSend(send(a2));
    await expectNoWc(a2.scq, 300);
    expectState(a2.qp, IBV_QPS_RTS);
  });
});

suite("PSN mismatches end in RETRY_EXC_ERR (§5, §8.11)", () => {
  it("A ahead (sq_psn 300, B expects 200): RETRY_EXC_ERR after ≈ (retry_cnt+1) × T; B stays RTS, rq_psn unchanged", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { a_psn: 300, b_rq_psn: 200, a_rts: { timeout: 14, retry_cnt: 1 } });
    b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 64)] });
    const lap = stopwatch();
    a.qp.postSend(send(a));
    const [wc] = await waitWc(a.scq, 1, 800);
    expectErrorWc(wc, IBV_WC_RETRY_EXC_ERR, a.qp, 77);
    expectRetryTiming(lap(), 14, 1);
    expectState(a.qp, IBV_QPS_ERR);
    expectState(b.qp, IBV_QPS_RTS);
    expect(b.qp.query(IBV_QP_RQ_PSN).attr.rq_psn).toBe(200);
    await expectNoWc(b.rcq, 20);
  });

  it.each([
    ["SEND", IBV_WR_SEND],
    ["RDMA_WRITE", IBV_WR_RDMA_WRITE],
    ["RDMA_READ", IBV_WR_RDMA_READ],
  ])(
    "A behind (sq_psn 100, B expects 200), %s: treated as a duplicate, RETRY_EXC_ERR, data not written, B RTS",
    async (_n, opcode) => {
      const s = scope();
      const { a, b } = pair(s, LOOPBACK, { a_psn: 100, b_rq_psn: 200, a_rts: { timeout: 12, retry_cnt: 1 } });
      b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 64)] });
      a.mr.bytes.fill(0xaa, 0, 64);
      b.mr.bytes.fill(0x11, 0, 64);
      const lap = stopwatch();
      a.qp.postSend({
        wr_id: 77,
        opcode,
        sg_list: [a.mr.sge(0, 64)],
        rdma: { remote_addr: b.mr.addr, rkey: b.mr.rkey },
      });
      const [wc] = await waitWc(a.scq, 1, 800);
      expectErrorWc(wc, IBV_WC_RETRY_EXC_ERR, a.qp, 77);
      expectRetryTiming(lap(), 12, 1);
      expect([...b.mr.bytes.slice(0, 64)].every((x) => x === 0x11)).toBe(true);
      if (opcode === IBV_WR_RDMA_READ) expect([...a.mr.bytes.slice(0, 64)].every((x) => x === 0xaa)).toBe(true);
      expectState(b.qp, IBV_QPS_RTS);
      await expectNoWc(b.rcq, 20);
    },
  );

  // psn_compare is a 24-bit signed difference: 0xffffff is one before 0, not 2^24 - 1 after it.
  it("one PSN ahead across the 24-bit wrap (sq_psn 0, B expects 0xffffff): a sequence error, RETRY_EXC_ERR; B RTS, rq_psn unchanged", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { a_psn: 0, b_rq_psn: 0xffffff, a_rts: { timeout: 12, retry_cnt: 1 } });
    b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 64)] });
    a.qp.postSend(send(a));
    const [wc] = await waitWc(a.scq, 1, 800);
    expectErrorWc(wc, IBV_WC_RETRY_EXC_ERR, a.qp, 77);
    expectState(a.qp, IBV_QPS_ERR);
    expectState(b.qp, IBV_QPS_RTS);
    expect(b.qp.query(IBV_QP_RQ_PSN).attr.rq_psn).toBe(0xffffff);
    await expectNoWc(b.rcq, 20);
  });

  // B takes PSN 0xffffff for a duplicate and ACKs again "the last PSN it acknowledged",
  // resp.ack_psn - 1. A responder that has executed nothing has ack_psn 0 (it is set only by
  // execute, not by RTR), so that ACK names 0xffffff: exactly A's packet, which completes.
  it("one PSN behind across the wrap (sq_psn 0xffffff, B expects 0, B fresh): B's duplicate ACK names 0xffffff, so A's SEND succeeds though nothing arrived", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { a_psn: 0xffffff, b_rq_psn: 0, a_rts: { timeout: 12, retry_cnt: 1 } });
    b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 64)] });
    a.qp.postSend(send(a));
    const [wc] = await waitWc(a.scq, 1, 800);
    recordMeasured("one PSN behind across the wrap: A's status", wc.status);
    expect(wc).toMatchObject({ status: IBV_WC_SUCCESS, wr_id: 77 });
    expectState(a.qp, IBV_QPS_RTS);
    expectState(b.qp, IBV_QPS_RTS);
    expect(b.qp.query(IBV_QP_RQ_PSN).attr.rq_psn).toBe(0);
    expect(a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn).toBe(0);
    await expectNoWc(b.rcq, 20);
  });
});
