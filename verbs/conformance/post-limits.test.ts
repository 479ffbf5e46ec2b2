/** sim/RXE-FACTS.md §3.1 and §6.3: queue depths, SGE counts, inline sizes, and bad_wr in WR lists. */
import { expect, it } from "vitest";
import {
  IBV_QPS_ERR,
  IBV_QPS_RTS,
  IBV_SEND_INLINE,
  IBV_WC_SUCCESS,
  IBV_WC_WR_FLUSH_ERR,
  IBV_WR_RDMA_WRITE,
  IBV_WR_SEND,
} from "../constants.js";
import type { SendWr } from "../types.js";
import {
  LOOPBACK,
  endpoint,
  expectErrorWc,
  expectNoWc,
  expectState,
  expectVerbsError,
  pair,
  scope,
  suite,
  toInit,
  toState,
  waitWc,
} from "./harness.js";

suite("post_send / post_recv limits (§6.3)", () => {
  it("max_send_wr 4 holds 7 WRs (rounded): a list of 8 fails with ENOMEM, bad_wr 7; the 7 were queued", async () => {
    const s = scope();
    // SENDs stuck in an infinite RNR loop keep the SQ full.
    const { a } = pair(s, LOOPBACK, { cap: { max_send_wr: 4 }, a_rts: { rnr_retry: 7 } });
    const wrs: SendWr[] = Array.from({ length: 8 }, (_, i) => ({
      wr_id: i,
      opcode: IBV_WR_SEND,
      sg_list: [a.mr.sge(0, 8)],
    }));
    const err = expectVerbsError(() => a.qp.postSend(wrs), "ENOMEM");
    expect(err.badWrIndex).toBe(7);
    toState(a.qp, IBV_QPS_ERR);
    const wcs = await waitWc(a.scq, 7, 200);
    expect(wcs.map((w) => w.wr_id)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    wcs.forEach((w) => expectErrorWc(w, IBV_WC_WR_FLUSH_ERR, a.qp));
  });

  it("max_recv_wr 4 holds 7 recvs: the 8th post_recv fails with ENOMEM", () => {
    const s = scope();
    const a = endpoint(s, "rxe0", "ipv4", { cap: { max_recv_wr: 4 } });
    toInit(a.qp);
    for (let i = 0; i < 7; i++) a.qp.postRecv({ wr_id: i, sg_list: [a.mr.sge(0, 8)] });
    const err = expectVerbsError(() => a.qp.postRecv({ wr_id: 7, sg_list: [a.mr.sge(0, 8)] }), "ENOMEM");
    expect(err.badWrIndex ?? 0).toBe(0);
  });

  it("a chain of 3 whose 2nd WR has too many SGEs: EINVAL, bad_wr 1; wr[0] was posted and executed, wr[2] was not", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { cap: { max_send_sge: 1 } });
    const sges = a.qp.query().attr.cap.max_send_sge;
    const rdma = { remote_addr: b.mr.addr, rkey: b.mr.rkey };
    const err = expectVerbsError(
      () =>
        a.qp.postSend([
          { wr_id: 0, opcode: IBV_WR_RDMA_WRITE, sg_list: [a.mr.sge(0, 8)], rdma },
          {
            wr_id: 1,
            opcode: IBV_WR_RDMA_WRITE,
            sg_list: Array.from({ length: sges + 1 }, (_, i) => a.mr.sge(i * 8, 8)),
            rdma,
          },
          { wr_id: 2, opcode: IBV_WR_RDMA_WRITE, sg_list: [a.mr.sge(0, 8)], rdma },
        ]),
      "EINVAL",
    );
    expect(err.badWrIndex).toBe(1);
    expect((await waitWc(a.scq))[0]).toMatchObject({ wr_id: 0, status: IBV_WC_SUCCESS });
    await expectNoWc(a.scq, 30);
    expectState(a.qp, IBV_QPS_RTS);
  });

  it("post_recv with more SGEs than max_recv_sge fails with EINVAL", () => {
    const s = scope();
    const a = endpoint(s, "rxe0", "ipv4", { cap: { max_recv_sge: 2 } });
    toInit(a.qp);
    expectVerbsError(() => a.qp.postRecv({ wr_id: 1, sg_list: [0, 1, 2].map((i) => a.mr.sge(i * 8, 8)) }), "EINVAL");
  });

  it("inline data up to max_inline_data is accepted; one byte more fails with EINVAL", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { cap: { max_inline_data: 64 } });
    const max = a.qp.query().attr.cap.max_inline_data;
    b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(0, 1024)] });
    a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_INLINE, sg_list: [a.mr.sge(0, max)] });
    expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, byte_len: max });
    expectVerbsError(
      () =>
        a.qp.postSend({
          wr_id: 2,
          opcode: IBV_WR_SEND,
          send_flags: IBV_SEND_INLINE,
          sg_list: [a.mr.sge(0, max + 1)],
        }),
      "EINVAL",
    );
  });

  it("post_send with an empty WR list fails with EINVAL (C's NULL wr)", () => {
    const s = scope();
    const { a } = pair(s, LOOPBACK);
    expectVerbsError(() => a.qp.postSend([]), "EINVAL");
  });
});
