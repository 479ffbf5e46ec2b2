import { describe, expect, it } from "vitest";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_READ,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_QPS_INIT,
  IBV_QPS_RTS,
  IBV_WC_LOC_LEN_ERR,
  IBV_WC_LOC_PROT_ERR,
  IBV_WC_LOC_QP_OP_ERR,
  IBV_WC_REM_OP_ERR,
  IBV_WC_REM_ACCESS_ERR,
  IBV_WC_REM_INV_REQ_ERR,
  IBV_WC_RETRY_EXC_ERR,
  IBV_WC_RNR_RETRY_EXC_ERR,
  IBV_WR_ATOMIC_FETCH_AND_ADD,
  IBV_WR_RDMA_READ,
  IBV_WR_RDMA_WRITE,
  IBV_WR_SEND,
} from "../../verbs/constants.js";
import { inferWcReason as inferData, type MrFact, type QpFact, type WcFacts } from "./explain-wc.js";
import { wcReasonText } from "../../verbs/wc-reason.js";

/** The inferred reason as the English the transcript exports print. */
const inferWcReason = (f: WcFacts) => {
  const r = inferData(f);
  return r && wcReasonText(r);
};

// Two connected QPs as a session would know them: QP 17 on rxe0 writes to QP 18 on rxe1.
const me = (o: Partial<QpFact> = {}): QpFact => ({
  qp_num: 17,
  device: "rxe0",
  pd: 2,
  state: IBV_QPS_RTS,
  dest_qp_num: 18,
  qp_access_flags: IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
  max_dest_rd_atomic: 1,
  sq_psn_set: 0,
  rq_psn_set: 0,
  retry_cnt: 1,
  rnr_retry: 1,
  ...o,
});
const peer = (o: Partial<QpFact> = {}): QpFact => me({ qp_num: 18, device: "rxe1", pd: 6, dest_qp_num: 17, ...o });
const peerMr: MrFact = {
  name: "mr7",
  device: "rxe1",
  pd: 6,
  addr: 0x1000,
  length: 4096,
  rkey: 0x1234,
  access: IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
};

function facts(status: number, o: Partial<WcFacts> & { peerQp?: Partial<QpFact>; myQp?: Partial<QpFact> } = {}) {
  const a = me(o.myQp);
  const b = peer(o.peerQp);
  return {
    status,
    qp: a,
    wr: { wr_id: 1, opcode: IBV_WR_RDMA_WRITE, length: 64, remote_addr: 0x1000, rkey: 0x1234 },
    qps: [a, b],
    mrs: [peerMr],
    ...o,
  } satisfies WcFacts;
}

describe("inferring why a completion failed from both sides' objects", () => {
  it("REM_ACCESS_ERR with rkey 0", () => {
    const f = facts(IBV_WC_REM_ACCESS_ERR, {
      wr: { wr_id: 1, opcode: IBV_WR_RDMA_WRITE, length: 8, remote_addr: 0x1000, rkey: 0 },
    });
    expect(inferWcReason(f)).toMatch(/^rkey 0 names no MR/);
  });

  it("REM_ACCESS_ERR with an rkey no MR on the peer's device has", () => {
    const f = facts(IBV_WC_REM_ACCESS_ERR, {
      wr: { wr_id: 1, opcode: IBV_WR_RDMA_WRITE, length: 8, remote_addr: 0x1000, rkey: 0x999 },
    });
    expect(inferWcReason(f)).toBe("rkey 0x999 is not the rkey of any MR on QP 18 on rxe1's device");
  });

  it("REM_ACCESS_ERR with an lkey given as the rkey", () => {
    const f = facts(IBV_WC_REM_ACCESS_ERR, {
      mrs: [peerMr, { ...peerMr, name: "mr8", lkey: 0x1200, rkey: 0, access: IBV_ACCESS_LOCAL_WRITE }],
      wr: { wr_id: 1, opcode: IBV_WR_RDMA_WRITE, length: 8, remote_addr: 0x1000, rkey: 0x1200 },
    });
    expect(inferWcReason(f)).toBe(
      "rkey 0x1200 is the lkey of mr8, registered without a REMOTE_* access flag: its rkey is 0",
    );
  });

  it("REM_ACCESS_ERR for a WRITE past the end of the MR: the range and by how much", () => {
    const f = facts(IBV_WC_REM_ACCESS_ERR, {
      wr: { wr_id: 1, opcode: IBV_WR_RDMA_WRITE, length: 64, remote_addr: 0x1000 + 4096 - 32, rkey: 0x1234 },
    });
    expect(inferWcReason(f)).toBe("[0x1fe0, 0x2020) (64 bytes) is outside mr7 [0x1000, 0x2000): 32 bytes past its end");
  });

  it("REM_ACCESS_ERR for a READ from an MR without REMOTE_READ", () => {
    const f = facts(IBV_WC_REM_ACCESS_ERR, {
      wr: { wr_id: 1, opcode: IBV_WR_RDMA_READ, length: 8, remote_addr: 0x1000, rkey: 0x1234 },
    });
    expect(inferWcReason(f)).toMatch(/^mr7 \(rkey 0x1234\) lacks IBV_ACCESS_REMOTE_READ/);
  });

  it("REM_ACCESS_ERR whose WR the objects explain not: no made-up reason", () => {
    expect(inferWcReason(facts(IBV_WC_REM_ACCESS_ERR))).toBeUndefined();
  });

  it("REM_INV_REQ_ERR when the peer QP lacks REMOTE_WRITE", () => {
    const f = facts(IBV_WC_REM_INV_REQ_ERR, { peerQp: { qp_access_flags: IBV_ACCESS_REMOTE_READ } });
    expect(inferWcReason(f)).toBe(
      "QP 18 on rxe1's qp_access_flags lack IBV_ACCESS_REMOTE_WRITE (they are IBV_ACCESS_REMOTE_READ)",
    );
  });

  it("REM_INV_REQ_ERR for an atomic at a peer with max_dest_rd_atomic 0", () => {
    const f = facts(IBV_WC_REM_INV_REQ_ERR, {
      peerQp: { qp_access_flags: 0xe, max_dest_rd_atomic: 0 },
      wr: { wr_id: 1, opcode: IBV_WR_ATOMIC_FETCH_AND_ADD, length: 8, remote_addr: 0x1000, rkey: 0x1234 },
    });
    expect(inferWcReason(f)).toMatch(/max_dest_rd_atomic 0/);
  });

  it("RETRY_EXC_ERR when no QP has the dest_qp_num", () => {
    const f = facts(IBV_WC_RETRY_EXC_ERR, { myQp: { dest_qp_num: 99 } });
    expect(inferWcReason(f)).toBe(
      "dest_qp_num is 99, and no QP in this session has that number (the others are 18): " +
        "the peer device drops every packet; after 2 tries (retry_cnt 1)",
    );
  });

  it("RETRY_EXC_ERR when sq_psn and the peer's rq_psn were set apart", () => {
    const ahead = facts(IBV_WC_RETRY_EXC_ERR, { myQp: { sq_psn_set: 100 } });
    expect(inferWcReason(ahead)).toMatch(/sq_psn was set to 100 and QP 18 on rxe1's rq_psn to 0: .*out of sequence/);
    const behind = facts(IBV_WC_RETRY_EXC_ERR, { peerQp: { rq_psn_set: 100 } });
    expect(inferWcReason(behind)).toMatch(/duplicates/);
  });

  it("RETRY_EXC_ERR when the peer is not ready, or answers another QP", () => {
    expect(inferWcReason(facts(IBV_WC_RETRY_EXC_ERR, { peerQp: { state: IBV_QPS_INIT } }))).toMatch(
      /QP 18 on rxe1 is in INIT/,
    );
    expect(inferWcReason(facts(IBV_WC_RETRY_EXC_ERR, { peerQp: { dest_qp_num: 40 } }))).toMatch(
      /answers QP 40 \(its dest_qp_num\), not QP 17/,
    );
  });

  it("RNR_RETRY_EXC_ERR names the peer with no receive posted", () => {
    const f = facts(IBV_WC_RNR_RETRY_EXC_ERR, { wr: { wr_id: 1, opcode: IBV_WR_SEND, length: 8 } });
    expect(inferWcReason(f)).toMatch(/^QP 18 on rxe1 had no receive WQE posted/);
  });

  it("REM_OP_ERR for a SEND longer than the peer's receive WQE", () => {
    const f = facts(IBV_WC_REM_OP_ERR, {
      peerQp: { recv_bytes: 8 },
      wr: { wr_id: 1, opcode: IBV_WR_SEND, length: 32 },
    });
    expect(inferWcReason(f)).toBe("the SEND carries 32 bytes, and QP 18 on rxe1's receive WQE holds 8");
  });

  it("LOC_PROT_ERR / LOC_QP_OP_ERR: the SGE outside its MR, or with an lkey of no MR", () => {
    const mine: MrFact = { ...peerMr, name: "mr2", device: "rxe0", pd: 2, lkey: 0x77 };
    const outside = facts(IBV_WC_LOC_PROT_ERR, {
      mrs: [mine],
      wr: { wr_id: 1, opcode: IBV_WR_SEND, length: 16, sges: [{ addr: 0x1ff8, length: 16, lkey: 0x77 }] },
    });
    expect(inferWcReason(outside)).toBe("the WR's sg_list[0] [0x1ff8, 0x2008) is outside mr2 [0x1000, 0x2000)");
    const unknown = facts(IBV_WC_LOC_QP_OP_ERR, {
      mrs: [mine],
      wr: { wr_id: 1, opcode: IBV_WR_SEND, length: 16, sges: [{ addr: 0x1000, length: 16, lkey: 0x78 }] },
    });
    expect(inferWcReason(unknown)).toBe("the WR's sg_list[0].lkey 0x78 is the lkey of no MR on this QP's device");
  });

  it("a local error is not for this function", () => {
    expect(inferWcReason(facts(IBV_WC_LOC_LEN_ERR))).toBeUndefined();
  });
});
