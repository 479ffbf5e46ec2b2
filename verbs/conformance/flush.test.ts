/** sim/RXE-FACTS.md §5.2: moving a QP to ERR flushes every outstanding WR, in order, with zeroed CQEs. */
import { expect, it } from "vitest";
import { IBV_QPS_ERR, IBV_QPS_RTR, IBV_QPT_UD, IBV_WC_WR_FLUSH_ERR, IBV_WR_SEND } from "../constants.js";
import {
  LOOPBACK,
  endpoint,
  expectErrorWc,
  expectNoWc,
  pair,
  scope,
  suite,
  toInit,
  toRtr,
  toState,
  waitWc,
} from "./harness.js";

suite("Flush on ERR (§5.2)", () => {
  it("5 recvs posted, then RTS→ERR: 5 WR_FLUSH_ERR in order, opcode 0 (SEND even for recvs), byte_len 0, wc_flags 0, qp_num", async () => {
    const s = scope();
    const { b } = pair(s, LOOPBACK);
    for (let i = 0; i < 5; i++) b.qp.postRecv({ wr_id: 300 + i, sg_list: [b.mr.sge(64 * i, 64)] });
    toState(b.qp, IBV_QPS_ERR);
    const wcs = await waitWc(b.rcq, 5, 100);
    wcs.forEach((w, i) => expectErrorWc(w, IBV_WC_WR_FLUSH_ERR, b.qp, 300 + i));
    await expectNoWc(b.rcq, 20);
  });

  it("recvs posted in RTR are flushed by RTR→ERR", async () => {
    const s = scope();
    const a = endpoint(s, "rxe0", "ipv4");
    toInit(a.qp);
    a.qp.postRecv({ wr_id: 1, sg_list: [a.mr.sge(0, 64)] });
    toRtr(a.qp, { dest_qp_num: a.qp.qp_num, rq_psn: 0, dgid: a.gid.gid, sgid_index: a.gid.gid_index });
    a.qp.postRecv({ wr_id: 2, sg_list: [a.mr.sge(0, 64)] });
    expect(a.qp.query().attr.qp_state).toBe(IBV_QPS_RTR);
    toState(a.qp, IBV_QPS_ERR);
    const wcs = await waitWc(a.rcq, 2, 100);
    wcs.forEach((w, i) => expectErrorWc(w, IBV_WC_WR_FLUSH_ERR, a.qp, i + 1));
  });

  it("a UD QP's recvs are flushed the same way", async () => {
    const s = scope();
    const { b } = pair(s, LOOPBACK, { qp_type: IBV_QPT_UD });
    for (let i = 0; i < 3; i++) b.qp.postRecv({ wr_id: 10 + i, sg_list: [b.mr.sge(0, 200)] });
    toState(b.qp, IBV_QPS_ERR);
    const wcs = await waitWc(b.rcq, 3, 100);
    wcs.forEach((w, i) => expectErrorWc(w, IBV_WC_WR_FLUSH_ERR, b.qp, 10 + i));
  });

  it("3 SENDs stuck in an infinite RNR loop are all flushed by moving A to ERR, in post order", async () => {
    const s = scope();
    const { a } = pair(s, LOOPBACK, { a_rts: { rnr_retry: 7 }, b_rtr: { min_rnr_timer: 14 } });
    a.qp.postSend([1, 2, 3].map((i) => ({ wr_id: i, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 16)] })));
    await expectNoWc(a.scq, 50);
    toState(a.qp, IBV_QPS_ERR);
    const wcs = await waitWc(a.scq, 3, 100);
    wcs.forEach((w, i) => expectErrorWc(w, IBV_WC_WR_FLUSH_ERR, a.qp, i + 1));
  });

  it("flushed unsignaled sends still complete (error completions are always generated)", async () => {
    const s = scope();
    const { a } = pair(s, LOOPBACK, { sq_sig_all: 0, a_rts: { rnr_retry: 7 } });
    a.qp.postSend([1, 2].map((i) => ({ wr_id: i, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 16)] })));
    await expectNoWc(a.scq, 30);
    toState(a.qp, IBV_QPS_ERR);
    const wcs = await waitWc(a.scq, 2, 100);
    wcs.forEach((w, i) => expectErrorWc(w, IBV_WC_WR_FLUSH_ERR, a.qp, i + 1));
  });
});

// rxe_qp_destroy marks the QP invalid before its tasks run a last time, and the completer
// of an invalid QP flushes without posting CQEs (notify is false): nothing completes.
suite("A QP destroyed with WQEs outstanding (§5.2)", () => {
  it("sends stuck in an endless RNR loop and posted receives: destroy completes nothing on either CQ", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { a_rts: { rnr_retry: 7 }, b_rtr: { min_rnr_timer: 14 } });
    a.qp.postSend([1, 2].map((i) => ({ wr_id: i, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] })));
    await expectNoWc(a.scq, 30);
    a.qp.destroy();
    await expectNoWc(a.scq, 50);
    expect(a.rcq.poll(4)).toEqual([]);
    // The peer never heard of it: B's receive posted now waits for ever.
    b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 64)] });
    await expectNoWc(b.rcq, 50);
    const c = endpoint(s, "rxe0", "ipv4");
    toInit(c.qp);
    c.qp.postRecv([1, 2, 3].map((i) => ({ wr_id: i, sg_list: [c.mr.sge(0, 64)] })));
    c.qp.destroy();
    await expectNoWc(c.rcq, 50);
    a.scq.destroy(); // the CQs are free again
    c.rcq.destroy();
  });
});
