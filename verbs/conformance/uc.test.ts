/** sim/RXE-FACTS.md §4 and §5.3: UC completions, and UC's rule that the sender never learns of a drop. */
import { describe, expect, it } from "vitest";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_READ,
  IBV_QPS_ERR,
  IBV_QPS_RTS,
  IBV_QPT_UC,
  IBV_QP_SQ_PSN,
  IBV_WC_GRH,
  IBV_WC_LOC_QP_OP_ERR,
  IBV_WC_RDMA_WRITE,
  IBV_WC_RECV,
  IBV_WC_RECV_RDMA_WITH_IMM,
  IBV_WC_SEND,
  IBV_WC_SUCCESS,
  IBV_WC_WITH_IMM,
  IBV_WR_ATOMIC_FETCH_AND_ADD,
  IBV_WR_RDMA_READ,
  IBV_WR_RDMA_WRITE,
  IBV_WR_RDMA_WRITE_WITH_IMM,
  IBV_WR_SEND,
} from "../constants.js";
import type { Scope } from "./harness.js";
import {
  CROSS,
  LOOPBACK,
  endpoint,
  expectErrorWc,
  expectNoWc,
  expectState,
  fill,
  pair,
  psnDelta,
  scope,
  suite,
  waitWc,
} from "./harness.js";

const UC = { qp_type: IBV_QPT_UC };

function deadQpn(s: Scope): number {
  const e = endpoint(s, "rxe0", "ipv4", UC);
  const n = e.qp.qp_num;
  e.qp.destroy();
  return n;
}

suite("UC data path (§4)", () => {
  for (const p of [LOOPBACK, CROSS]) {
    describe(p.name, () => {
      it("SEND 100 bytes: sender WC SEND/100, receiver RECV/100 with IBV_WC_GRH; bytes land", async () => {
        const s = scope();
        const { a, b } = pair(s, p, UC);
        const sent = fill(a.mr.bytes, 2, 0, 100);
        b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(0, 128)] });
        a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 100)] });
        expect((await waitWc(a.scq))[0]).toMatchObject({
          wr_id: 2,
          status: IBV_WC_SUCCESS,
          opcode: IBV_WC_SEND,
          byte_len: 100,
          wc_flags: 0,
        });
        expect((await waitWc(b.rcq))[0]).toMatchObject({
          wr_id: 1,
          status: IBV_WC_SUCCESS,
          opcode: IBV_WC_RECV,
          byte_len: 100,
          wc_flags: IBV_WC_GRH,
          src_qp: 0,
        });
        expect(b.mr.bytes.slice(0, 100)).toEqual(sent);
      });

      it("RDMA_WRITE and RDMA_WRITE_WITH_IMM: bytes land, receiver WC RECV_RDMA_WITH_IMM with the write length", async () => {
        const s = scope();
        const { a, b } = pair(s, p, UC);
        const sent = fill(a.mr.bytes, 4, 0, 300);
        b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(0, 16)] });
        const rdma = { remote_addr: b.mr.addr + 1000, rkey: b.mr.rkey };
        a.qp.postSend([
          { wr_id: 2, opcode: IBV_WR_RDMA_WRITE, sg_list: [a.mr.sge(0, 300)], rdma },
          { wr_id: 3, opcode: IBV_WR_RDMA_WRITE_WITH_IMM, imm_data: 9, sg_list: [a.mr.sge(0, 300)], rdma },
        ]);
        const [w1, w2] = await waitWc(a.scq, 2);
        expect(w1).toMatchObject({ status: IBV_WC_SUCCESS, opcode: IBV_WC_RDMA_WRITE, byte_len: 300, wc_flags: 0 });
        expect(w2).toMatchObject({
          status: IBV_WC_SUCCESS,
          opcode: IBV_WC_RDMA_WRITE,
          byte_len: 300,
          wc_flags: IBV_WC_WITH_IMM,
        });
        expect((await waitWc(b.rcq))[0]).toMatchObject({
          status: IBV_WC_SUCCESS,
          opcode: IBV_WC_RECV_RDMA_WITH_IMM,
          byte_len: 300,
          wc_flags: IBV_WC_GRH | IBV_WC_WITH_IMM,
          imm_data: 9,
        });
        expect(b.mr.bytes.slice(1000, 1300)).toEqual(sent);
      });
    });
  }

  it("a 5000-byte UC SEND advances sq_psn by 5 (one per packet)", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, UC);
    const psn0 = a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn;
    b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge()] });
    a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 5000)] });
    await waitWc(a.scq);
    expect((await waitWc(b.rcq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, byte_len: 5000 });
    expect(psnDelta(psn0, a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn)).toBe(5);
  });
});

suite("UC errors: the sender gets SUCCESS and the packet is dropped (§5.3)", () => {
  it("RDMA_WRITE with a bad rkey: sender SUCCESS, nothing written, both RTS", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, UC);
    b.mr.bytes.fill(0x11, 0, 64);
    a.mr.bytes.fill(0xaa, 0, 64);
    a.qp.postSend({
      wr_id: 77,
      opcode: IBV_WR_RDMA_WRITE,
      sg_list: [a.mr.sge(0, 64)],
      rdma: { remote_addr: b.mr.addr, rkey: (b.mr.rkey & ~0xff) | ((b.mr.rkey + 1) & 0xff) },
    });
    expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, wr_id: 77 });
    await expectNoWc(b.rcq, 30);
    expect([...b.mr.bytes.slice(0, 64)].every((x) => x === 0x11)).toBe(true);
    expectState(a.qp, IBV_QPS_RTS);
    expectState(b.qp, IBV_QPS_RTS);
  });

  it("RDMA_WRITE to a QP without REMOTE_WRITE: sender SUCCESS, nothing written, both RTS", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { ...UC, b_access: IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ });
    b.mr.bytes.fill(0x11, 0, 64);
    a.mr.bytes.fill(0xaa, 0, 64);
    a.qp.postSend({
      wr_id: 77,
      opcode: IBV_WR_RDMA_WRITE,
      sg_list: [a.mr.sge(0, 64)],
      rdma: { remote_addr: b.mr.addr, rkey: b.mr.rkey },
    });
    expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS });
    await expectNoWc(b.rcq, 30);
    expect([...b.mr.bytes.slice(0, 64)].every((x) => x === 0x11)).toBe(true);
    expectState(b.qp, IBV_QPS_RTS);
  });

  it("SEND with no recv posted: sender SUCCESS, the message is gone; the next SEND lands in the next recv", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, UC);
    a.mr.bytes.fill(1, 0, 16);
    a.mr.bytes.fill(2, 16, 32);
    a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 16)] });
    expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, wr_id: 1 });
    expectState(b.qp, IBV_QPS_RTS);
    b.qp.postRecv({ wr_id: 9, sg_list: [b.mr.sge(0, 64)] });
    await expectNoWc(b.rcq, 30);
    a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(16, 16)] });
    await waitWc(a.scq);
    expect((await waitWc(b.rcq))[0]).toMatchObject({ wr_id: 9, status: IBV_WC_SUCCESS, byte_len: 16 });
    expect(b.mr.bytes[0]).toBe(2);
  });

  it("SEND to a non-existent dest_qp_num: sender SUCCESS, A stays RTS", async () => {
    const s = scope();
    const { a } = pair(s, LOOPBACK, { ...UC, a_dest_qp_num: deadQpn(s) });
    a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 16)] });
    expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS });
    expectState(a.qp, IBV_QPS_RTS);
  });

  it("SEND larger than the recv buffer: sender SUCCESS; the recv completes LOC_QP_OP_ERR and B goes to ERR", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, UC);
    b.qp.postRecv({ wr_id: 601, sg_list: [b.mr.sge(0, 50)] });
    a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 100)] });
    expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS });
    expectErrorWc((await waitWc(b.rcq))[0], IBV_WC_LOC_QP_OP_ERR, b.qp, 601);
    expectState(b.qp, IBV_QPS_ERR);
    expectState(a.qp, IBV_QPS_RTS);
  });

  it.each([
    ["RDMA_READ", IBV_WR_RDMA_READ],
    ["an atomic", IBV_WR_ATOMIC_FETCH_AND_ADD],
  ])("UC cannot post %s: it completes with LOC_QP_OP_ERR and A goes to ERR", async (_n, opcode) => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, UC);
    a.qp.postSend({
      wr_id: 77,
      opcode,
      sg_list: [a.mr.sge(0, 8)],
      rdma: { remote_addr: b.mr.addr, rkey: b.mr.rkey },
      atomic: { remote_addr: b.mr.addr, rkey: b.mr.rkey, compare_add: 1n },
    });
    expectErrorWc((await waitWc(a.scq))[0], IBV_WC_LOC_QP_OP_ERR, a.qp, 77);
    expectState(a.qp, IBV_QPS_ERR);
  });
});
