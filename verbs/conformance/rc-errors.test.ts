/**
 * sim/RXE-FACTS.md §5 (RC rows) and §8: each error case with both WC statuses, both QP states,
 * the flushes, and rxe's zeroed error CQEs. A requests, B responds, loopback on rxe0.
 */
import { describe, expect, it } from "vitest";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_ATOMIC,
  IBV_ACCESS_REMOTE_READ,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_QPS_ERR,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_SEND_SIGNALED,
  IBV_WC_LOC_PROT_ERR,
  IBV_WC_LOC_QP_OP_ERR,
  IBV_WC_REM_ACCESS_ERR,
  IBV_WC_REM_INV_REQ_ERR,
  IBV_WC_REM_OP_ERR,
  IBV_WC_SUCCESS,
  IBV_WC_WR_FLUSH_ERR,
  IBV_WR_ATOMIC_CMP_AND_SWP,
  IBV_WR_ATOMIC_FETCH_AND_ADD,
  IBV_WR_RDMA_READ,
  IBV_WR_RDMA_WRITE,
  IBV_WR_SEND,
} from "../constants.js";
import type { Mr } from "../backend.js";
import type { SendWr } from "../types.js";
import {
  ALL_REMOTE,
  type ConnectOpts,
  type Endpoint,
  type EndpointOpts,
  CROSS,
  LOOPBACK,
  type Pairing,
  type Scope,
  endpoint,
  expectBetween,
  expectErrorWc,
  expectNoWc,
  expectState,
  expectVerbsError,
  pair,
  psnDelta,
  recordMeasured,
  scope,
  suite,
  connect,
  toInit,
  toRtr,
  toRts,
  toState,
  waitWc,
} from "./harness.js";

const LW = IBV_ACCESS_LOCAL_WRITE;
const RW = IBV_ACCESS_REMOTE_WRITE;
const RR = IBV_ACCESS_REMOTE_READ;
const RA = IBV_ACCESS_REMOTE_ATOMIC;

type Op = "WRITE" | "READ" | "atomic";
/** A one-sided WR of `op` against (addr, rkey). */
function oneSided(op: Op, a: Endpoint, remote_addr: number, rkey: number, length = 64): SendWr {
  if (op === "atomic") {
    return {
      wr_id: 77,
      opcode: IBV_WR_ATOMIC_FETCH_AND_ADD,
      sg_list: [a.mr.sge(0, 8)],
      atomic: { remote_addr, rkey, compare_add: 1n },
    };
  }
  return {
    wr_id: 77,
    opcode: op === "WRITE" ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
    sg_list: [a.mr.sge(0, length)],
    rdma: { remote_addr, rkey },
  };
}

/** A connected loopback pair where B has two recvs posted (to watch them being flushed). */
function errPair(o: EndpointOpts & ConnectOpts = {}) {
  const s = scope();
  const { a, b } = pair(s, LOOPBACK, { ...o, a_rts: { retry_cnt: 2, rnr_retry: 2, ...o.a_rts } });
  b.qp.postRecv([
    { wr_id: 501, sg_list: [b.mr.sge(0, 256)] },
    { wr_id: 502, sg_list: [b.mr.sge(256, 256)] },
  ]);
  return { s, a, b };
}

/** A got `status`, B's two recvs were flushed, both QPs are in ERR. */
async function expectBothErr(a: Endpoint, b: Endpoint, status: number) {
  const [wc] = await waitWc(a.scq);
  expectErrorWc(wc, status, a.qp, 77);
  const flushed = await waitWc(b.rcq, 2);
  flushed.forEach((w, i) => expectErrorWc(w, IBV_WC_WR_FLUSH_ERR, b.qp, 501 + i));
  expectState(a.qp, IBV_QPS_ERR);
  expectState(b.qp, IBV_QPS_ERR);
}

/** A got `status`, B saw nothing and stays RTS. */
async function expectOnlyAErr(a: Endpoint, b: Endpoint, status: number) {
  const [wc] = await waitWc(a.scq);
  expectErrorWc(wc, status, a.qp, 77);
  expectState(a.qp, IBV_QPS_ERR);
  expectState(b.qp, IBV_QPS_RTS);
  await expectNoWc(b.rcq, 20);
}

suite("RC errors: posting in the wrong state (§5)", () => {
  it.each([
    ["RESET", IBV_QPS_RESET],
    ["INIT", IBV_QPS_INIT],
    ["RTR", IBV_QPS_RTR],
  ])("post_send in %s fails with EINVAL, no WC, state unchanged", async (_n, st) => {
    const s = scope();
    const a = endpoint(s, "rxe0", "ipv4");
    if (st >= IBV_QPS_INIT) toInit(a.qp);
    if (st >= IBV_QPS_RTR)
      toRtr(a.qp, { dest_qp_num: a.qp.qp_num, rq_psn: 0, dgid: a.gid.gid, sgid_index: a.gid.gid_index });
    const err = expectVerbsError(
      () => a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] }),
      "EINVAL",
    );
    expect(err.badWrIndex ?? 0).toBe(0);
    expectState(a.qp, st);
    await expectNoWc(a.scq, 20);
  });

  // rdma-core 44's rxe provider writes the WQE into the shared ring and only then rings the
  // kernel doorbell, which refuses below RTS: the WR stays in the ring and goes out with the
  // next doorbell that succeeds. A RESET clears the ring.
  it.each([
    ["RESET", IBV_QPS_RESET],
    ["INIT", IBV_QPS_INIT],
    ["RTR", IBV_QPS_RTR],
  ])(
    "a send refused with EINVAL in %s stays queued: after RTS it runs with the next successful post, first",
    async (_n, st) => {
      const s = scope();
      const a = endpoint(s, "rxe0", "ipv4");
      const b = endpoint(s, "rxe0", "ipv4");
      if (st === IBV_QPS_RESET) {
        expectVerbsError(() => a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] }), "EINVAL");
      }
      toInit(a.qp);
      if (st === IBV_QPS_INIT) {
        expectVerbsError(() => a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] }), "EINVAL");
      }
      toInit(b.qp);
      toRtr(a.qp, { dest_qp_num: b.qp.qp_num, rq_psn: 0x200, dgid: b.gid.gid, sgid_index: a.gid.gid_index });
      toRtr(b.qp, { dest_qp_num: a.qp.qp_num, rq_psn: 0x100, dgid: a.gid.gid, sgid_index: b.gid.gid_index });
      if (st === IBV_QPS_RTR) {
        expectVerbsError(() => a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] }), "EINVAL");
      }
      toRts(a.qp, { sq_psn: 0x100 });
      toRts(b.qp, { sq_psn: 0x200 });
      b.qp.postRecv([1, 2].map((i) => ({ wr_id: 600 + i, sg_list: [b.mr.sge(0, 64)] })));
      await expectNoWc(a.scq, 30); // nothing kicks the requester on RTR→RTS
      a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] });
      const wcs = await waitWc(a.scq, 2);
      expect(wcs.map((w) => [w.wr_id, w.status])).toEqual([
        [1, IBV_WC_SUCCESS],
        [2, IBV_WC_SUCCESS],
      ]);
      expect((await waitWc(b.rcq, 2)).map((w) => w.status)).toEqual([IBV_WC_SUCCESS, IBV_WC_SUCCESS]);
    },
  );

  it("RESET→RESET discards a send refused in INIT: after RTS only the next post runs", async () => {
    const s = scope();
    const a = endpoint(s, "rxe0", "ipv4");
    const b = endpoint(s, "rxe0", "ipv4");
    toInit(a.qp);
    expectVerbsError(() => a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] }), "EINVAL");
    toState(a.qp, IBV_QPS_RESET);
    toState(a.qp, IBV_QPS_RESET);
    connect(a, b);
    b.qp.postRecv([1, 2].map((i) => ({ wr_id: 600 + i, sg_list: [b.mr.sge(0, 64)] })));
    a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] });
    const wcs = await waitWc(a.scq, 1);
    expect(wcs.map((w) => [w.wr_id, w.status])).toEqual([[2, IBV_WC_SUCCESS]]);
    await expectNoWc(a.scq, 30);
    expect((await waitWc(b.rcq, 1))[0].wr_id).toBe(601);
    await expectNoWc(b.rcq, 30);
  });

  it("post_recv in ERR returns 0 and never completes (no flush); the next modify to ERR flushes it", async () => {
    const { a } = errPair();
    toState(a.qp, IBV_QPS_ERR);
    a.qp.postRecv({ wr_id: 9, sg_list: [a.mr.sge(0, 8)] });
    await expectNoWc(a.rcq, 100);
    expectState(a.qp, IBV_QPS_ERR);
    toState(a.qp, IBV_QPS_ERR);
    expectErrorWc((await waitWc(a.rcq))[0], IBV_WC_WR_FLUSH_ERR, a.qp, 9);
  });

  it("post_recv in RESET fails with EINVAL; in INIT and RTR it is accepted", () => {
    const s = scope();
    const a = endpoint(s, "rxe0", "ipv4");
    const wr = { wr_id: 1, sg_list: [a.mr.sge(0, 8)] };
    expectVerbsError(() => a.qp.postRecv(wr), "EINVAL");
    toInit(a.qp);
    a.qp.postRecv(wr);
    toRtr(a.qp, { dest_qp_num: a.qp.qp_num, rq_psn: 0, dgid: a.gid.gid, sgid_index: a.gid.gid_index });
    a.qp.postRecv(wr);
  });

  it("post_send in ERR is accepted and completes at once with WR_FLUSH_ERR", async () => {
    const { a } = errPair();
    a.qp.modify({ qp_state: IBV_QPS_ERR }, 1);
    a.qp.postSend({ wr_id: 77, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 8)] });
    const [wc] = await waitWc(a.scq, 1, 50);
    expectErrorWc(wc, IBV_WC_WR_FLUSH_ERR, a.qp, 77);
  });
});

suite("RC errors: remote access violations put both QPs in ERR (§5, §8.6)", () => {
  const variants: [string, (s: Scope, a: Endpoint, b: Endpoint) => { addr: number; rkey: number }][] = [
    ["a wrong key byte", (_s, _a, b) => ({ addr: b.mr.addr, rkey: (b.mr.rkey & ~0xff) | ((b.mr.rkey + 1) & 0xff) })],
    ["a non-existent MR index", (_s, _a, b) => ({ addr: b.mr.addr, rkey: (0x7fff0 << 8) | (b.mr.rkey & 0xff) })],
    [
      "an MR of another PD",
      (s, _a, b) => {
        const mr = s.mr(s.pd(b.ctx), 4096, ALL_REMOTE);
        return { addr: mr.addr, rkey: mr.rkey };
      },
    ],
    [
      "rkey 0 of an MR without remote access",
      (s, _a, b) => {
        const mr = s.mr(b.pd, 4096, LW);
        return { addr: mr.addr, rkey: mr.rkey };
      },
    ],
    [
      "the lkey used as rkey (MR without remote access)",
      (s, _a, b) => {
        const mr = s.mr(b.pd, 4096, LW);
        return { addr: mr.addr, rkey: mr.lkey };
      },
    ],
  ];
  for (const op of ["WRITE", "READ", "atomic"] as Op[]) {
    describe(op, () => {
      for (const [name, target] of variants) {
        it(`${op} with ${name}: A REM_ACCESS_ERR, B's recvs flushed, both ERR`, async () => {
          const { s, a, b } = errPair();
          const { addr, rkey } = target(s, a, b);
          a.qp.postSend(oneSided(op, a, addr, rkey));
          await expectBothErr(a, b, IBV_WC_REM_ACCESS_ERR);
        });
      }
    });
  }

  const perms: [Op, string, number][] = [
    ["WRITE", "an MR registered REMOTE_READ only", RR],
    ["READ", "an MR without REMOTE_READ", LW | RW | RA],
    ["atomic", "an MR without REMOTE_ATOMIC", LW | RW | RR],
  ];
  for (const [op, name, access] of perms) {
    it(`${op} to ${name}: REM_ACCESS_ERR, both ERR`, async () => {
      const { s, a, b } = errPair();
      const mr: Mr = s.mr(b.pd, 4096, access);
      a.qp.postSend(oneSided(op, a, mr.addr, mr.rkey));
      await expectBothErr(a, b, IBV_WC_REM_ACCESS_ERR);
    });
  }

  it.each([
    ["WRITE past the MR end", "WRITE", 8192 - 10],
    ["READ past the MR end", "READ", 8192 - 10],
    ["WRITE before the MR start", "WRITE", -8],
    ["READ before the MR start", "READ", -8],
  ] as [string, Op, number][])("%s: REM_ACCESS_ERR, both ERR", async (_n, op, offset) => {
    const { a, b } = errPair();
    a.qp.postSend(oneSided(op, a, b.mr.addr + offset, b.mr.rkey, 100));
    await expectBothErr(a, b, IBV_WC_REM_ACCESS_ERR);
  });
});

suite("RC errors: the responder QP's access flags (§5)", () => {
  it.each([
    ["WRITE", "REMOTE_WRITE", ALL_REMOTE & ~RW],
    ["READ", "REMOTE_READ", ALL_REMOTE & ~RR],
    ["atomic", "REMOTE_ATOMIC", ALL_REMOTE & ~RA],
  ] as [Op, string, number][])(
    "%s when B's QP lacks %s (MR fine): REM_INV_REQ_ERR, not REM_ACCESS_ERR; both ERR",
    async (op, _bit, access) => {
      const { a, b } = errPair({ b_access: access });
      a.qp.postSend(oneSided(op, a, b.mr.addr, b.mr.rkey));
      await expectBothErr(a, b, IBV_WC_REM_INV_REQ_ERR);
    },
  );

  it("a 0-byte WRITE with a garbage rkey succeeds (no rkey check for zero length); both stay RTS", async () => {
    const { a, b } = errPair();
    a.qp.postSend({ wr_id: 77, opcode: IBV_WR_RDMA_WRITE, sg_list: [], rdma: { remote_addr: 0x1234, rkey: 0xdead } });
    expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, wr_id: 77 });
    expectState(a.qp, IBV_QPS_RTS);
    expectState(b.qp, IBV_QPS_RTS);
  });

  it("a 0-byte WRITE when B's QP access is 0: REM_INV_REQ_ERR, both ERR", async () => {
    const { a, b } = errPair({ b_access: 0 });
    a.qp.postSend({ wr_id: 77, opcode: IBV_WR_RDMA_WRITE, sg_list: [], rdma: { remote_addr: 0, rkey: 0 } });
    await expectBothErr(a, b, IBV_WC_REM_INV_REQ_ERR);
  });

  it.each([
    ["READ", "READ"],
    ["atomic", "atomic"],
  ] as [string, Op][])("%s with responder max_dest_rd_atomic=0: REM_INV_REQ_ERR, both ERR", async (_n, op) => {
    const { a, b } = errPair({ b_rtr: { max_dest_rd_atomic: 0 } });
    a.qp.postSend(oneSided(op, a, b.mr.addr, b.mr.rkey));
    await expectBothErr(a, b, IBV_WC_REM_INV_REQ_ERR);
  });
});

suite("RC errors: local problems leave the peer alone (§5, §8.5)", () => {
  it.each([
    ["SEND", IBV_WR_SEND],
    ["RDMA_WRITE", IBV_WR_RDMA_WRITE],
  ])(
    "%s with a wrong lkey: LOC_QP_OP_ERR (not LOC_PROT_ERR); A ERR, B RTS; sq_psn not advanced",
    async (_n, opcode) => {
      const { a, b } = errPair();
      const psn0 = a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn;
      const sge = { ...a.mr.sge(0, 16), lkey: (a.mr.lkey & ~0xff) | ((a.mr.lkey + 1) & 0xff) };
      a.qp.postSend({ wr_id: 77, opcode, sg_list: [sge], rdma: { remote_addr: b.mr.addr, rkey: b.mr.rkey } });
      await expectOnlyAErr(a, b, IBV_WC_LOC_QP_OP_ERR);
      expect(a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn).toBe(psn0);
    },
  );

  it("SEND with the SGE running past the local MR end: LOC_PROT_ERR; A ERR, B RTS", async () => {
    const { a, b } = errPair();
    a.qp.postSend({ wr_id: 77, opcode: IBV_WR_SEND, sg_list: [{ ...a.mr.sge(8192 - 10, 10), length: 100 }] });
    await expectOnlyAErr(a, b, IBV_WC_LOC_PROT_ERR);
  });

  it("RDMA_READ into a local MR without LOCAL_WRITE: LOC_PROT_ERR; A ERR, B RTS", async () => {
    const { s, a, b } = errPair();
    const ro = s.mr(a.pd, 4096, 0);
    a.qp.postSend({
      wr_id: 77,
      opcode: IBV_WR_RDMA_READ,
      sg_list: [ro.sge(0, 64)],
      rdma: { remote_addr: b.mr.addr, rkey: b.mr.rkey },
    });
    await expectOnlyAErr(a, b, IBV_WC_LOC_PROT_ERR);
  });

  it("an invalid opcode (99) is accepted by post_send, then completes with LOC_QP_OP_ERR; A ERR, B RTS, sq_psn not advanced", async () => {
    const { a, b } = errPair();
    const psn0 = a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn;
    a.qp.postSend({ wr_id: 77, opcode: 99, sg_list: [a.mr.sge(0, 8)] });
    await expectOnlyAErr(a, b, IBV_WC_LOC_QP_OP_ERR);
    expect(a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn).toBe(psn0);
  });

  it("error completions are generated even for unsignaled WRs (sq_sig_all=0)", async () => {
    const { a, b } = errPair({ sq_sig_all: 0 });
    const sge = { ...a.mr.sge(0, 16), lkey: 0 };
    a.qp.postSend({ wr_id: 77, opcode: IBV_WR_SEND, sg_list: [sge] });
    await expectOnlyAErr(a, b, IBV_WC_LOC_QP_OP_ERR);
  });

  it("the peer is never told: after A is moved to ERR, B stays RTS with nothing in its CQ", async () => {
    const { a, b } = errPair();
    a.qp.modify({ qp_state: IBV_QPS_ERR }, 1);
    expectState(b.qp, IBV_QPS_RTS);
    await expectNoWc(b.rcq, 20);
  });
});

suite("RC errors: receive-side problems give REM_OP_ERR / LOC_QP_OP_ERR, never LOC_LEN_ERR (§5, §8.4)", () => {
  const recvCases: [string, (s: Scope, b: Endpoint) => { addr: number; length: number; lkey: number }][] = [
    ["a wrong lkey", (_s, b) => ({ ...b.mr.sge(1024, 256), lkey: (b.mr.lkey & ~0xff) | ((b.mr.lkey + 1) & 0xff) })],
    ["an MR without LOCAL_WRITE", (s, b) => s.mr(b.pd, 4096, 0).sge(0, 256)],
    ["the SGE past the MR end", (_s, b) => ({ ...b.mr.sge(8192 - 10, 10), length: 256 })],
  ];
  for (const [name, sgeOf] of recvCases) {
    it(`RECV with ${name}: A REM_OP_ERR; that recv LOC_QP_OP_ERR, the next flushed; both ERR`, async () => {
      const s = scope();
      const { a, b } = pair(s, LOOPBACK);
      b.qp.postRecv([
        { wr_id: 601, sg_list: [sgeOf(s, b)] },
        { wr_id: 602, sg_list: [b.mr.sge(0, 256)] },
      ]);
      a.qp.postSend({ wr_id: 77, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 100)] });
      expectErrorWc((await waitWc(a.scq))[0], IBV_WC_REM_OP_ERR, a.qp, 77);
      const [bad, flushed] = await waitWc(b.rcq, 2);
      expectErrorWc(bad, IBV_WC_LOC_QP_OP_ERR, b.qp, 601);
      expectErrorWc(flushed, IBV_WC_WR_FLUSH_ERR, b.qp, 602);
      expectState(a.qp, IBV_QPS_ERR);
      expectState(b.qp, IBV_QPS_ERR);
    });
  }

  it("a recv buffer smaller than the SEND (50 < 100): A REM_OP_ERR, B LOC_QP_OP_ERR (not LOC_LEN_ERR), both ERR", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK);
    b.qp.postRecv([
      { wr_id: 601, sg_list: [b.mr.sge(0, 50)] },
      { wr_id: 602, sg_list: [b.mr.sge(0, 256)] },
    ]);
    a.qp.postSend({ wr_id: 77, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 100)] });
    expectErrorWc((await waitWc(a.scq))[0], IBV_WC_REM_OP_ERR, a.qp, 77);
    const [bad, flushed] = await waitWc(b.rcq, 2);
    expectErrorWc(bad, IBV_WC_LOC_QP_OP_ERR, b.qp, 601);
    expectErrorWc(flushed, IBV_WC_WR_FLUSH_ERR, b.qp, 602);
    expectState(a.qp, IBV_QPS_ERR);
    expectState(b.qp, IBV_QPS_ERR);
  });

  it("multi-packet: 3000 bytes into 1500: the same errors, and B's rq_psn has moved past the first packet", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK);
    const rq0 = b.qp.query(IBV_QP_RQ_PSN).attr.rq_psn;
    b.qp.postRecv({ wr_id: 601, sg_list: [b.mr.sge(0, 1500)] });
    a.qp.postSend({ wr_id: 77, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 3000)] });
    expectErrorWc((await waitWc(a.scq))[0], IBV_WC_REM_OP_ERR, a.qp, 77);
    expectErrorWc((await waitWc(b.rcq))[0], IBV_WC_LOC_QP_OP_ERR, b.qp, 601);
    expect(psnDelta(rq0, b.qp.query(IBV_QP_RQ_PSN).attr.rq_psn)).toBeGreaterThanOrEqual(1);
    expectState(a.qp, IBV_QPS_ERR);
    expectState(b.qp, IBV_QPS_ERR);
  });
});

// One device's requester, responder and completer call each other directly (rxe_loopback hands
// the packet to rxe_rcv; the responder and completer tasks run inline when idle), so the NAK
// for the packet that overflows the receive moves A to ERR before its next packet is built:
// rxe_requester sees QP_STATE_ERROR and stops. sq_psn stops just past the refused packet.
// Between two devices the packets cross the veth and the NAK races the requester: measured,
// 3000 bytes stopped after packet 2 and 5000 bytes sent all 5.
suite("RC errors: a multi-packet SEND into a too-small receive stops at the refused packet (§5, §4.3)", () => {
  async function overflow(p: Pairing, len: number, name: string) {
    const s = scope();
    const { a, b } = pair(s, p);
    const sq0 = a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn;
    const rq0 = b.qp.query(IBV_QP_RQ_PSN).attr.rq_psn;
    b.qp.postRecv({ wr_id: 601, sg_list: [b.mr.sge(0, 1500)] });
    a.qp.postSend({ wr_id: 77, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, len)] });
    expectErrorWc((await waitWc(a.scq))[0], IBV_WC_REM_OP_ERR, a.qp, 77);
    expectErrorWc((await waitWc(b.rcq))[0], IBV_WC_LOC_QP_OP_ERR, b.qp, 601);
    const sent = psnDelta(sq0, a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn);
    const taken = psnDelta(rq0, b.qp.query(IBV_QP_RQ_PSN).attr.rq_psn);
    recordMeasured(`multi-packet SEND ${len} B into 1500, ${name}: sq_psn +, rq_psn +`, [sent, taken]);
    expectState(a.qp, IBV_QPS_ERR);
    expectState(b.qp, IBV_QPS_ERR);
    return { sent, taken };
  }

  it.each([3000, 5000])(
    "rxe0 loopback, %i bytes into 1500 at MTU 1024: packet 2 is refused and is the last sent: sq_psn +2, rq_psn +1",
    async (len) => {
      expect(await overflow(LOOPBACK, len, "rxe0 loopback")).toEqual({ sent: 2, taken: 1 });
    },
  );

  it.each([3000, 5000])(
    "rxe0 ↔ rxe1, %i bytes into 1500: packet 2 is refused; the requester sends between 2 and all of the packets",
    async (len) => {
      const { sent, taken } = await overflow(CROSS, len, "rxe0 ↔ rxe1");
      expect(taken).toBe(1);
      expectBetween(sent, 2, Math.ceil(len / 1024));
    },
  );
});

suite("RC errors: READ credits (§5, §8.8)", () => {
  it("RDMA_READ with requester max_rd_atomic=0 never completes (no WC, no retry error); moving A to ERR flushes it", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { a_rts: { max_rd_atomic: 0, retry_cnt: 1, timeout: 10 } });
    a.qp.postSend(oneSided("READ", a, b.mr.addr, b.mr.rkey));
    await expectNoWc(a.scq, 300);
    expectState(a.qp, IBV_QPS_RTS);
    expectState(b.qp, IBV_QPS_RTS);
    a.qp.modify({ qp_state: IBV_QPS_ERR }, 1);
    expectErrorWc((await waitWc(a.scq))[0], IBV_WC_WR_FLUSH_ERR, a.qp, 77);
  });
});

suite("RC errors: atomics refused at post time (§5)", () => {
  it("an unaligned remote_addr (addr & 7) fails post_send with EINVAL, bad_wr = that WR, nothing queued; A stays RTS", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK);
    const err = expectVerbsError(
      () =>
        a.qp.postSend({
          wr_id: 77,
          opcode: IBV_WR_ATOMIC_CMP_AND_SWP,
          sg_list: [a.mr.sge(0, 8)],
          atomic: { remote_addr: b.mr.addr + 4, rkey: b.mr.rkey, compare_add: 0n, swap: 1n },
        }),
      "EINVAL",
    );
    expect(err.badWrIndex ?? 0).toBe(0);
    await expectNoWc(a.scq, 20);
    expectState(a.qp, IBV_QPS_RTS);
  });

  it("an atomic SGE shorter than 8 bytes fails post_send with EINVAL", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK);
    expectVerbsError(
      () =>
        a.qp.postSend({
          wr_id: 77,
          opcode: IBV_WR_ATOMIC_FETCH_AND_ADD,
          sg_list: [a.mr.sge(0, 4)],
          atomic: { remote_addr: b.mr.addr, rkey: b.mr.rkey, compare_add: 1n },
        }),
      "EINVAL",
    );
    await expectNoWc(a.scq, 20);
    expectState(a.qp, IBV_QPS_RTS);
  });
});

suite("RC errors across devices (rxe0 ↔ rxe1): the same statuses and states as loopback (§4)", () => {
  it("WRITE with a wrong rkey: A REM_ACCESS_ERR, B's recvs flushed, both ERR", async () => {
    const s = scope();
    const { a, b } = pair(s, CROSS, { a_rts: { retry_cnt: 2 } });
    b.qp.postRecv([
      { wr_id: 501, sg_list: [b.mr.sge(0, 256)] },
      { wr_id: 502, sg_list: [b.mr.sge(256, 256)] },
    ]);
    a.qp.postSend(oneSided("WRITE", a, b.mr.addr, (b.mr.rkey & ~0xff) | ((b.mr.rkey + 1) & 0xff)));
    await expectBothErr(a, b, IBV_WC_REM_ACCESS_ERR);
  });

  it("a recv buffer smaller than the SEND: A REM_OP_ERR, B LOC_QP_OP_ERR, both ERR", async () => {
    const s = scope();
    const { a, b } = pair(s, CROSS);
    b.qp.postRecv({ wr_id: 601, sg_list: [b.mr.sge(0, 50)] });
    a.qp.postSend({ wr_id: 77, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 100)] });
    expectErrorWc((await waitWc(a.scq))[0], IBV_WC_REM_OP_ERR, a.qp, 77);
    expectErrorWc((await waitWc(b.rcq))[0], IBV_WC_LOC_QP_OP_ERR, b.qp, 601);
    expectState(a.qp, IBV_QPS_ERR);
    expectState(b.qp, IBV_QPS_ERR);
  });

  it("READ when B's QP lacks REMOTE_READ: REM_INV_REQ_ERR, both ERR", async () => {
    const s = scope();
    const { a, b } = pair(s, CROSS, { b_access: ALL_REMOTE & ~RR });
    b.qp.postRecv([
      { wr_id: 501, sg_list: [b.mr.sge(0, 256)] },
      { wr_id: 502, sg_list: [b.mr.sge(256, 256)] },
    ]);
    a.qp.postSend(oneSided("READ", a, b.mr.addr, b.mr.rkey));
    await expectBothErr(a, b, IBV_WC_REM_INV_REQ_ERR);
  });
});
