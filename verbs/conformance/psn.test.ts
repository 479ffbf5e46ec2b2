/** sim/RXE-FACTS.md §4.3: sq_psn advances once per packet, rq_psn tracks it, PSNs wrap at 2^24. */
import { expect, it } from "vitest";
import {
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_WC_SUCCESS,
  IBV_WR_ATOMIC_FETCH_AND_ADD,
  IBV_WR_RDMA_READ,
  IBV_WR_RDMA_WRITE,
  IBV_WR_SEND,
} from "../constants.js";
import type { SendWr } from "../types.js";
import { CROSS, type Endpoint, LOOPBACK, pair, psnDelta, scope, suite, waitWc } from "./harness.js";

const sqPsn = (e: Endpoint) => e.qp.query(IBV_QP_SQ_PSN).attr.sq_psn;
const rqPsn = (e: Endpoint) => e.qp.query(IBV_QP_RQ_PSN).attr.rq_psn;

type Make = (a: Endpoint, b: Endpoint) => SendWr;
const send =
  (n: number): Make =>
  (a) => ({ wr_id: n, opcode: IBV_WR_SEND, sg_list: n ? [a.mr.sge(0, n)] : [] });
const write =
  (n: number): Make =>
  (a, b) => ({
    wr_id: n,
    opcode: IBV_WR_RDMA_WRITE,
    sg_list: n ? [a.mr.sge(0, n)] : [],
    rdma: { remote_addr: b.mr.addr, rkey: b.mr.rkey },
  });

suite("PSN accounting at MTU 1024 (§4.3)", () => {
  it.each([
    ["SEND 5000 bytes", send(5000), 5, true],
    ["SEND 2500 bytes", send(2500), 3, true],
    ["SEND 0 bytes", send(0), 1, true],
    ["RDMA_WRITE 5000 bytes", write(5000), 5, false],
    ["RDMA_WRITE 0 bytes", write(0), 1, false],
  ] as [string, Make, number, boolean][])(
    "%s advances A's sq_psn and B's rq_psn by %i",
    async (_n, make, packets, needsRecv) => {
      const s = scope();
      const { a, b } = pair(s, LOOPBACK, { mrSize: 8192 });
      const sq0 = sqPsn(a);
      const rq0 = rqPsn(b);
      if (needsRecv) b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge()] });
      a.qp.postSend(make(a, b));
      expect((await waitWc(a.scq))[0].status).toBe(IBV_WC_SUCCESS);
      expect(psnDelta(sq0, sqPsn(a))).toBe(packets);
      expect(psnDelta(rq0, rqPsn(b))).toBe(packets);
    },
  );

  it("RDMA_READ of 3000 bytes advances sq_psn by 3 (one PSN per response packet)", async () => {
    const s = scope();
    const { a, b } = pair(s, CROSS);
    const sq0 = sqPsn(a);
    const rq0 = rqPsn(b);
    a.qp.postSend({
      wr_id: 1,
      opcode: IBV_WR_RDMA_READ,
      sg_list: [a.mr.sge(0, 3000)],
      rdma: { remote_addr: b.mr.addr, rkey: b.mr.rkey },
    });
    expect((await waitWc(a.scq))[0].status).toBe(IBV_WC_SUCCESS);
    expect(psnDelta(sq0, sqPsn(a))).toBe(3);
    expect(psnDelta(rq0, rqPsn(b))).toBe(3);
  });

  it("an atomic advances sq_psn by 1", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK);
    const sq0 = sqPsn(a);
    a.qp.postSend({
      wr_id: 1,
      opcode: IBV_WR_ATOMIC_FETCH_AND_ADD,
      sg_list: [a.mr.sge(0, 8)],
      atomic: { remote_addr: b.mr.addr, rkey: b.mr.rkey, compare_add: 1n },
    });
    expect((await waitWc(a.scq))[0].status).toBe(IBV_WC_SUCCESS);
    expect(psnDelta(sq0, sqPsn(a))).toBe(1);
  });

  it("PSNs wrap at 2^24: 0xfffffd plus 7 packets is 0x000004 on both sides", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { a_psn: 0xfffffd });
    b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge()] });
    b.qp.postRecv({ wr_id: 2, sg_list: [b.mr.sge()] });
    a.qp.postSend([send(5000)(a, b), { ...send(0)(a, b), wr_id: 2 }, write(10)(a, b)]);
    const wcs = await waitWc(a.scq, 3);
    expect(wcs.map((w) => w.status)).toEqual([0, 0, 0]);
    expect(sqPsn(a)).toBe(0x000004);
    expect(rqPsn(b)).toBe(0x000004);
  });

  it("a whole ping-pong keeps both directions' PSNs in step", async () => {
    const s = scope();
    const { a, b } = pair(s, CROSS, { a_psn: 0x10, b_psn: 0x500 });
    for (let i = 0; i < 3; i++) {
      b.qp.postRecv({ wr_id: i, sg_list: [b.mr.sge(0, 64)] });
      a.qp.postSend(send(8)(a, b));
      await waitWc(b.rcq);
      a.qp.postRecv({ wr_id: i, sg_list: [a.mr.sge(0, 64)] });
      b.qp.postSend(send(8)(b, a));
      await waitWc(a.rcq);
    }
    await waitWc(a.scq, 3);
    await waitWc(b.scq, 3);
    expect([sqPsn(a), rqPsn(b), sqPsn(b), rqPsn(a)]).toEqual([0x13, 0x13, 0x503, 0x503]);
  });
});
