/**
 * sim/RXE-FACTS.md §4.1–4.2: each RC opcode's completions on both sides and the bytes it moves,
 * on every pairing (loopback and rxe0 ↔ rxe1, IPv4 and link-local GIDs).
 */
import { describe, expect, it } from "vitest";
import {
  IBV_SEND_FENCE,
  IBV_SEND_INLINE,
  IBV_SEND_SIGNALED,
  IBV_SEND_SOLICITED,
  IBV_WC_GRH,
  IBV_WC_RDMA_READ,
  IBV_WC_RDMA_WRITE,
  IBV_WC_RECV,
  IBV_WC_RECV_RDMA_WITH_IMM,
  IBV_WC_SEND,
  IBV_WC_SUCCESS,
  IBV_WC_WITH_IMM,
  IBV_WR_RDMA_READ,
  IBV_WR_RDMA_WRITE,
  IBV_WR_RDMA_WRITE_WITH_IMM,
  IBV_WR_SEND,
  IBV_WR_SEND_WITH_IMM,
} from "../constants.js";
import type { Wc } from "../types.js";
import { CROSS, LOOPBACK, PAIRINGS, type Pairing, expectNoWc, fill, pair, scope, suite, waitWc } from "./harness.js";

/** The send-side WC rxe produces for a successful WR (§4.1). */
function expectSendWc(
  wc: Wc,
  o: { wr_id: number; opcode: number; byte_len: number; wc_flags?: number; qp_num: number },
) {
  expect(wc).toMatchObject({
    wr_id: o.wr_id,
    status: IBV_WC_SUCCESS,
    opcode: o.opcode,
    byte_len: o.byte_len,
    wc_flags: o.wc_flags ?? 0,
    imm_data: 0,
    qp_num: o.qp_num,
    src_qp: 0,
    vendor_err: 0,
    pkey_index: 0,
    slid: 0,
    sl: 0,
    dlid_path_bits: 0,
  });
}

function datapath(p: Pairing, all: boolean) {
  describe(p.name, () => {
    it("SEND 100 bytes: sender WC SEND/100/flags 0; receiver WC RECV/100 with IBV_WC_GRH even on RC; bytes land", async () => {
      const s = scope();
      const { a, b } = pair(s, p);
      const sent = fill(a.mr.bytes, 1, 0, 100);
      b.qp.postRecv({ wr_id: 7, sg_list: [b.mr.sge(0, 256)] });
      a.qp.postSend({ wr_id: 8, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 100)] });
      const [swc] = await waitWc(a.scq);
      expectSendWc(swc, { wr_id: 8, opcode: IBV_WC_SEND, byte_len: 100, qp_num: a.qp.qp_num });
      const [rwc] = await waitWc(b.rcq);
      expect(rwc).toMatchObject({
        wr_id: 7,
        status: IBV_WC_SUCCESS,
        opcode: IBV_WC_RECV,
        byte_len: 100,
        wc_flags: IBV_WC_GRH,
        qp_num: b.qp.qp_num,
        src_qp: 0,
      });
      expect(b.mr.bytes.slice(0, 100)).toEqual(sent);
    });

    it("SEND_WITH_IMM: the sender WC carries IBV_WC_WITH_IMM; the receiver gets GRH|WITH_IMM and imm_data as posted", async () => {
      const s = scope();
      const { a, b } = pair(s, p);
      b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(0, 256)] });
      a.qp.postSend({
        wr_id: 2,
        opcode: IBV_WR_SEND_WITH_IMM,
        send_flags: IBV_SEND_SIGNALED,
        imm_data: 0x12345678,
        sg_list: [a.mr.sge(0, 10)],
      });
      const [swc] = await waitWc(a.scq);
      expectSendWc(swc, {
        wr_id: 2,
        opcode: IBV_WC_SEND,
        byte_len: 10,
        wc_flags: IBV_WC_WITH_IMM,
        qp_num: a.qp.qp_num,
      });
      const [rwc] = await waitWc(b.rcq);
      expect(rwc).toMatchObject({
        status: IBV_WC_SUCCESS,
        opcode: IBV_WC_RECV,
        byte_len: 10,
        wc_flags: IBV_WC_GRH | IBV_WC_WITH_IMM,
        imm_data: 0x12345678,
      });
    });

    it("RDMA_WRITE 300 bytes: WC RDMA_WRITE/300; the bytes land at remote_addr; no recv is consumed", async () => {
      const s = scope();
      const { a, b } = pair(s, p);
      const sent = fill(a.mr.bytes, 3, 0, 300);
      b.qp.postRecv({ wr_id: 11, sg_list: [b.mr.sge(0, 64)] });
      a.qp.postSend({
        wr_id: 3,
        opcode: IBV_WR_RDMA_WRITE,
        sg_list: [a.mr.sge(0, 300)],
        rdma: { remote_addr: b.mr.addr + 1000, rkey: b.mr.rkey },
      });
      const [swc] = await waitWc(a.scq);
      expectSendWc(swc, { wr_id: 3, opcode: IBV_WC_RDMA_WRITE, byte_len: 300, qp_num: a.qp.qp_num });
      expect(b.mr.bytes.slice(1000, 1300)).toEqual(sent);
      await expectNoWc(b.rcq, 20);
      // The recv is still there for the next SEND.
      a.qp.postSend({ wr_id: 4, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] });
      const [rwc] = await waitWc(b.rcq);
      expect(rwc.wr_id).toBe(11);
    });

    it("RDMA_WRITE_WITH_IMM 300 bytes into a 16-byte recv: RECV_RDMA_WITH_IMM, byte_len 300, the recv buffer untouched", async () => {
      const s = scope();
      const { a, b } = pair(s, p);
      const sent = fill(a.mr.bytes, 5, 0, 300);
      b.mr.bytes.fill(0xee, 4000, 4016);
      b.qp.postRecv({ wr_id: 21, sg_list: [b.mr.sge(4000, 16)] });
      a.qp.postSend({
        wr_id: 22,
        opcode: IBV_WR_RDMA_WRITE_WITH_IMM,
        imm_data: 0xcafe,
        sg_list: [a.mr.sge(0, 300)],
        rdma: { remote_addr: b.mr.addr + 100, rkey: b.mr.rkey },
      });
      const [swc] = await waitWc(a.scq);
      expectSendWc(swc, {
        wr_id: 22,
        opcode: IBV_WC_RDMA_WRITE,
        byte_len: 300,
        wc_flags: IBV_WC_WITH_IMM,
        qp_num: a.qp.qp_num,
      });
      const [rwc] = await waitWc(b.rcq);
      expect(rwc).toMatchObject({
        wr_id: 21,
        status: IBV_WC_SUCCESS,
        opcode: IBV_WC_RECV_RDMA_WITH_IMM,
        byte_len: 300,
        wc_flags: IBV_WC_GRH | IBV_WC_WITH_IMM,
        imm_data: 0xcafe,
        src_qp: 0,
      });
      expect(b.mr.bytes.slice(100, 400)).toEqual(sent);
      expect([...b.mr.bytes.slice(4000, 4016)].every((x) => x === 0xee)).toBe(true);
    });

    it("RDMA_READ 3000 bytes: WC RDMA_READ/3000 and the remote bytes arrive locally", async () => {
      const s = scope();
      const { a, b } = pair(s, p);
      const remote = fill(b.mr.bytes, 9, 2000, 3000);
      a.qp.postSend({
        wr_id: 31,
        opcode: IBV_WR_RDMA_READ,
        sg_list: [a.mr.sge(100, 3000)],
        rdma: { remote_addr: b.mr.addr + 2000, rkey: b.mr.rkey },
      });
      const [swc] = await waitWc(a.scq);
      expectSendWc(swc, { wr_id: 31, opcode: IBV_WC_RDMA_READ, byte_len: 3000, qp_num: a.qp.qp_num });
      expect(a.mr.bytes.slice(100, 3100)).toEqual(remote);
    });

    if (!all) return;

    it("RDMA_WRITE_WITH_IMM of 0 bytes (no SGE, rkey 0): receiver WC RECV_RDMA_WITH_IMM, byte_len 0, GRH|WITH_IMM", async () => {
      const s = scope();
      const { a, b } = pair(s, p);
      b.qp.postRecv({ wr_id: 41, sg_list: [] });
      a.qp.postSend({
        wr_id: 42,
        opcode: IBV_WR_RDMA_WRITE_WITH_IMM,
        imm_data: 5,
        sg_list: [],
        rdma: { remote_addr: 0, rkey: 0 },
      });
      const [swc] = await waitWc(a.scq);
      expect(swc).toMatchObject({ status: IBV_WC_SUCCESS, opcode: IBV_WC_RDMA_WRITE, byte_len: 0 });
      const [rwc] = await waitWc(b.rcq);
      expect(rwc).toMatchObject({
        status: IBV_WC_SUCCESS,
        opcode: IBV_WC_RECV_RDMA_WITH_IMM,
        byte_len: 0,
        wc_flags: IBV_WC_GRH | IBV_WC_WITH_IMM,
        imm_data: 5,
      });
    });

    it("multi-SGE: 3 send SGEs of 20 bytes scatter into a 2-SGE recv (40 + 100), byte_len 60", async () => {
      const s = scope();
      const { a, b } = pair(s, p);
      const parts = [fill(a.mr.bytes, 1, 0, 20), fill(a.mr.bytes, 50, 500, 20), fill(a.mr.bytes, 99, 1000, 20)];
      const all = new Uint8Array([...parts[0], ...parts[1], ...parts[2]]);
      b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(3000, 40), b.mr.sge(6000, 100)] });
      a.qp.postSend({
        wr_id: 2,
        opcode: IBV_WR_SEND,
        sg_list: [a.mr.sge(0, 20), a.mr.sge(500, 20), a.mr.sge(1000, 20)],
      });
      const [swc] = await waitWc(a.scq);
      expect(swc.byte_len).toBe(60);
      const [rwc] = await waitWc(b.rcq);
      expect(rwc).toMatchObject({ status: IBV_WC_SUCCESS, byte_len: 60 });
      expect(b.mr.bytes.slice(3000, 3040)).toEqual(all.slice(0, 40));
      expect(b.mr.bytes.slice(6000, 6020)).toEqual(all.slice(40, 60));
    });

    it("SEND of 0 bytes: byte_len 0 on both sides", async () => {
      const s = scope();
      const { a, b } = pair(s, p);
      b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(0, 64)] });
      a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, sg_list: [] });
      const [swc] = await waitWc(a.scq);
      expect(swc).toMatchObject({ status: IBV_WC_SUCCESS, opcode: IBV_WC_SEND, byte_len: 0 });
      const [rwc] = await waitWc(b.rcq);
      expect(rwc).toMatchObject({ status: IBV_WC_SUCCESS, opcode: IBV_WC_RECV, byte_len: 0, wc_flags: IBV_WC_GRH });
    });

    it("SEND of 5000 bytes (5 packets at MTU 1024) arrives whole", async () => {
      const s = scope();
      const { a, b } = pair(s, p);
      const sent = fill(a.mr.bytes, 17, 0, 5000);
      b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(0, 8192)] });
      a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 5000)] });
      expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, byte_len: 5000 });
      expect((await waitWc(b.rcq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, byte_len: 5000 });
      expect(b.mr.bytes.slice(0, 5000)).toEqual(sent);
    });

    it("IBV_SEND_INLINE copies the data at post time: changing the buffer afterwards does not change what arrives", async () => {
      const s = scope();
      const { a, b } = pair(s, p, { cap: { max_inline_data: 64 } });
      const sent = fill(a.mr.bytes, 33, 0, 64);
      b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(0, 128)] });
      a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, send_flags: IBV_SEND_INLINE, sg_list: [a.mr.sge(0, 64)] });
      a.mr.bytes.fill(0, 0, 64);
      expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, opcode: IBV_WC_SEND, byte_len: 64 });
      expect((await waitWc(b.rcq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, byte_len: 64 });
      expect(b.mr.bytes.slice(0, 64)).toEqual(sent);
    });
  });
}

suite("RC data path: each opcode's completions and bytes (§4.1, §4.2)", () => {
  for (const p of PAIRINGS) datapath(p, p === LOOPBACK || p === CROSS);
});

suite("RC data path: signaling and ordering (§4.1)", () => {
  it("sq_sig_all=0: 2 unsignaled + 1 signaled SEND give 1 send WC, and all 3 recvs complete", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { sq_sig_all: 0 });
    for (let i = 0; i < 3; i++) b.qp.postRecv({ wr_id: 100 + i, sg_list: [b.mr.sge(64 * i, 64)] });
    a.qp.postSend([
      { wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] },
      { wr_id: 2, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] },
      { wr_id: 3, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 8)] },
    ]);
    const rw = await waitWc(b.rcq, 3);
    expect(rw.map((w) => w.wr_id)).toEqual([100, 101, 102]);
    const sw = await waitWc(a.scq, 1);
    expect(sw[0].wr_id).toBe(3);
    await expectNoWc(a.scq, 20);
  });

  it("sq_sig_all=1: every WR completes even without IBV_SEND_SIGNALED", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { sq_sig_all: 1 });
    for (let i = 0; i < 2; i++) b.qp.postRecv({ wr_id: i, sg_list: [b.mr.sge(64 * i, 64)] });
    a.qp.postSend([
      { wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] },
      { wr_id: 2, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] },
    ]);
    expect((await waitWc(a.scq, 2)).map((w) => w.wr_id)).toEqual([1, 2]);
  });

  it("completions come in post order across opcodes (WRITE, SEND, READ, WRITE)", async () => {
    const s = scope();
    const { a, b } = pair(s, CROSS);
    b.qp.postRecv({ wr_id: 0, sg_list: [b.mr.sge(0, 64)] });
    const rdma = { remote_addr: b.mr.addr + 4096, rkey: b.mr.rkey };
    a.qp.postSend([
      { wr_id: 1, opcode: IBV_WR_RDMA_WRITE, sg_list: [a.mr.sge(0, 2000)], rdma },
      { wr_id: 2, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] },
      { wr_id: 3, opcode: IBV_WR_RDMA_READ, sg_list: [a.mr.sge(4096, 100)], rdma },
      { wr_id: 4, opcode: IBV_WR_RDMA_WRITE, sg_list: [a.mr.sge(0, 10)], rdma },
    ]);
    const wcs = await waitWc(a.scq, 4);
    expect(wcs.map((w) => [w.wr_id, w.opcode, w.status])).toEqual([
      [1, IBV_WC_RDMA_WRITE, 0],
      [2, IBV_WC_SEND, 0],
      [3, IBV_WC_RDMA_READ, 0],
      [4, IBV_WC_RDMA_WRITE, 0],
    ]);
  });

  it("IBV_SEND_FENCE and IBV_SEND_SOLICITED change nothing visible in the WCs", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK);
    b.qp.postRecv({ wr_id: 9, sg_list: [b.mr.sge(0, 64)] });
    a.qp.postSend({
      wr_id: 1,
      opcode: IBV_WR_SEND,
      send_flags: IBV_SEND_FENCE | IBV_SEND_SOLICITED,
      sg_list: [a.mr.sge(0, 8)],
    });
    expectSendWc((await waitWc(a.scq))[0], { wr_id: 1, opcode: IBV_WC_SEND, byte_len: 8, qp_num: a.qp.qp_num });
    expect((await waitWc(b.rcq))[0]).toMatchObject({ opcode: IBV_WC_RECV, byte_len: 8, wc_flags: IBV_WC_GRH });
  });

  it("a 9 MiB RDMA WRITE succeeds although max_msg_sz is 8 MiB (not enforced)", async () => {
    const s = scope();
    const size = 9 * 1024 * 1024;
    const { a, b } = pair(s, LOOPBACK, { mrSize: size });
    a.mr.bytes[size - 1] = 0x5a;
    a.qp.postSend({
      wr_id: 1,
      opcode: IBV_WR_RDMA_WRITE,
      sg_list: [a.mr.sge(0, size)],
      rdma: { remote_addr: b.mr.addr, rkey: b.mr.rkey },
    });
    const [wc] = await waitWc(a.scq, 1, 5000);
    expect(wc).toMatchObject({ status: IBV_WC_SUCCESS, byte_len: size });
    expect(b.mr.bytes[size - 1]).toBe(0x5a);
  });
});
