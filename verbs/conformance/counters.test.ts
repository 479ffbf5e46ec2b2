/**
 * rxe's per-port hw_counters (rxe_hw_counters.c; incremented in rxe_net.c, rxe_recv.c,
 * rxe_resp.c, rxe_comp.c — SOURCE, Linux 6.1). Devices persist on native, so every check
 * is a delta, and rxe0 ↔ rxe1 keeps the requester's and the responder's counters apart.
 */
import { expect, it } from "vitest";
import type { Context } from "../backend.js";
import { IBV_QPT_RC, IBV_WC_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR, IBV_WR_SEND } from "../constants.js";
import { RXE_COUNTER_NAMES } from "../types.js";
import { CROSS, type Scope, endpoint, pair, scope, suite, waitWc } from "./harness.js";

function snapshot(ctx: Context) {
  const before = ctx.queryCounters(1);
  return (name: string) => ctx.queryCounters(1)[name] - before[name];
}

function deadQpnOnRxe1(s: Scope): number {
  const e = endpoint(s, "rxe1", "linklocal", { qp_type: IBV_QPT_RC });
  const n = e.qp.qp_num;
  e.qp.destroy();
  return n;
}

suite("Port counters (rxe hw_counters)", () => {
  it("queryCounters lists every rxe counter by its sysfs name, as non-negative integers", () => {
    const c = scope().open("rxe0").queryCounters(1);
    for (const name of RXE_COUNTER_NAMES) {
      expect(Number.isInteger(c[name]), name).toBe(true);
      expect(c[name], name).toBeGreaterThanOrEqual(0);
    }
  });

  it("a 5000-byte SEND rxe0 → rxe1: rxe0 sent_pkts +≥5 and rcvd_pkts +≥1 (ACK); rxe1 rcvd_pkts +≥5, sent_pkts +≥1", async () => {
    const s = scope();
    const { a, b } = pair(s, CROSS);
    const a0 = snapshot(a.ctx);
    const b0 = snapshot(b.ctx);
    b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge()] });
    a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 5000)] });
    await waitWc(a.scq);
    expect(a0("sent_pkts")).toBeGreaterThanOrEqual(5);
    expect(b0("rcvd_pkts")).toBeGreaterThanOrEqual(5);
    expect(b0("sent_pkts")).toBeGreaterThanOrEqual(1);
    expect(a0("rcvd_pkts")).toBeGreaterThanOrEqual(1);
  });

  it("a read right after the last one sees the traffic in between: 20 SENDs rxe0 → rxe1, each counted by the read after its completions", async () => {
    // ib_core's sysfs copy of the counters is refreshed at most once per lifespan (10 ms):
    // read, a quick round trip, read again, and that copy still shows the first read's values.
    const s = scope();
    const { a, b } = pair(s, CROSS);
    const seen: { sent: number; rcvd: number }[] = [];
    for (let i = 0; i < 20; i++) {
      const a0 = snapshot(a.ctx);
      const b0 = snapshot(b.ctx);
      b.qp.postRecv({ wr_id: i, sg_list: [b.mr.sge(0, 8)] });
      a.qp.postSend({ wr_id: i, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] });
      await waitWc(a.scq);
      await waitWc(b.rcq);
      seen.push({ sent: a0("sent_pkts"), rcvd: b0("rcvd_pkts") });
    }
    expect(seen.filter((d) => d.sent < 1 || d.rcvd < 1)).toEqual([]);
  });

  it("RNR with rnr_retry 1: requester rcvd_rnr_err +2 and retry_rnr_exceeded_err +1; responder send_rnr_err +2", async () => {
    const s = scope();
    const { a, b } = pair(s, CROSS, { a_rts: { rnr_retry: 1 }, b_rtr: { min_rnr_timer: 1 } });
    const a0 = snapshot(a.ctx);
    const b0 = snapshot(b.ctx);
    a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] });
    expect((await waitWc(a.scq))[0].status).toBe(IBV_WC_RNR_RETRY_EXC_ERR);
    expect({
      rcvd_rnr_err: a0("rcvd_rnr_err"),
      retry_rnr_exceeded_err: a0("retry_rnr_exceeded_err"),
      send_rnr_err: b0("send_rnr_err"),
    }).toEqual({ rcvd_rnr_err: 2, retry_rnr_exceeded_err: 1, send_rnr_err: 2 });
  });

  it("retry exceeded with retry_cnt 2: completer_retry_err +2 and retry_exceeded_err +1 on the requester's port", async () => {
    const s = scope();
    const { a } = pair(s, CROSS, { a_dest_qp_num: deadQpnOnRxe1(s), a_rts: { timeout: 10, retry_cnt: 2 } });
    const a0 = snapshot(a.ctx);
    a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] });
    expect((await waitWc(a.scq))[0].status).toBe(IBV_WC_RETRY_EXC_ERR);
    expect({ completer_retry_err: a0("completer_retry_err"), retry_exceeded_err: a0("retry_exceeded_err") }).toEqual({
      completer_retry_err: 2,
      retry_exceeded_err: 1,
    });
  });

  it("A ahead of B's PSN: B's out_of_seq_request +1 (one NAK, then silent drops)", async () => {
    const s = scope();
    const { a, b } = pair(s, CROSS, { a_psn: 300, b_rq_psn: 200, a_rts: { timeout: 10, retry_cnt: 2 } });
    const b0 = snapshot(b.ctx);
    a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] });
    expect((await waitWc(a.scq))[0].status).toBe(IBV_WC_RETRY_EXC_ERR);
    expect(b0("out_of_seq_request")).toBe(1);
  });

  it("A behind B's PSN: B counts duplicate_request for every (re)transmission", async () => {
    const s = scope();
    const { a, b } = pair(s, CROSS, { a_psn: 100, b_rq_psn: 200, a_rts: { timeout: 10, retry_cnt: 2 } });
    const b0 = snapshot(b.ctx);
    a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] });
    expect((await waitWc(a.scq))[0].status).toBe(IBV_WC_RETRY_EXC_ERR);
    expect(b0("duplicate_request")).toBe(3);
  });
});
