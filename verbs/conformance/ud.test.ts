/** sim/RXE-FACTS.md §4.2, §4.3 and §5.3: UD completions, the 40-byte GRH, qkeys and drops. */
import { describe, expect, it } from "vitest";
import {
  IBV_QPS_ERR,
  IBV_QPS_RTS,
  IBV_QPT_UD,
  IBV_QP_SQ_PSN,
  IBV_WC_GRH,
  IBV_WC_LOC_QP_OP_ERR,
  IBV_WC_RECV,
  IBV_WC_SEND,
  IBV_WC_SUCCESS,
  IBV_WC_WITH_IMM,
  IBV_WR_RDMA_WRITE,
  IBV_WR_SEND,
  IBV_WR_SEND_WITH_IMM,
} from "../constants.js";
import type { Ah } from "../backend.js";
import type { SendWr } from "../types.js";
import {
  type Endpoint,
  PAIRINGS,
  type Pairing,
  type Scope,
  UD_QKEY,
  ahTo,
  endpoint,
  expectErrorWc,
  expectNoWc,
  expectState,
  fill,
  gidBytes,
  isIpv4Mapped,
  pair,
  psnDelta,
  scope,
  suite,
  waitWc,
} from "./harness.js";

const UD = { qp_type: IBV_QPT_UD };

function udPair(p: Pairing) {
  const s = scope();
  const { a, b } = pair(s, p, UD);
  return { s, a, b, ah: ahTo(s, a, b) };
}
function udSend(a: Endpoint, ah: Ah, remote_qpn: number, n: number, over: Partial<SendWr> = {}): SendWr {
  return {
    wr_id: 77,
    opcode: IBV_WR_SEND,
    sg_list: [a.mr.sge(0, n)],
    ud: { ah, remote_qpn, remote_qkey: UD_QKEY },
    ...over,
  };
}

suite("UD data path (§4.2)", () => {
  for (const p of PAIRINGS) {
    describe(p.name, () => {
      it("SEND 64 bytes: receiver byte_len 64 + 40 (GRH), IBV_WC_GRH, src_qp = sender's QPN; payload after 40 bytes", async () => {
        const { a, b, ah } = udPair(p);
        const sent = fill(a.mr.bytes, 12, 0, 64);
        b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 40 + 1024)] });
        a.qp.postSend(udSend(a, ah, b.qp.qp_num, 64));
        expect((await waitWc(a.scq))[0]).toMatchObject({
          wr_id: 77,
          status: IBV_WC_SUCCESS,
          opcode: IBV_WC_SEND,
          byte_len: 64,
          wc_flags: 0,
          src_qp: 0,
        });
        expect((await waitWc(b.rcq))[0]).toMatchObject({
          wr_id: 5,
          status: IBV_WC_SUCCESS,
          opcode: IBV_WC_RECV,
          byte_len: 104,
          wc_flags: IBV_WC_GRH,
          src_qp: a.qp.qp_num,
          qp_num: b.qp.qp_num,
          pkey_index: 0,
          slid: 0,
          sl: 0,
          dlid_path_bits: 0,
        });
        expect(b.mr.bytes.slice(40, 104)).toEqual(sent);
      });

      if (isIpv6Pairing(p)) {
        it("the 40 GRH bytes are a real IPv6 header: 60 00 00 00, payload length, next header 0x11, hop limit 64, sgid, dgid", async () => {
          const { a, b, ah } = udPair(p);
          b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 200)] });
          a.qp.postSend(udSend(a, ah, b.qp.qp_num, 64));
          await waitWc(b.rcq);
          const g = b.mr.bytes;
          // UDP 8 + BTH 12 + DETH 8 + payload 64 + ICRC 4 = 96 (0x60), as measured.
          expect([...g.slice(0, 8)]).toEqual([0x60, 0, 0, 0, 0, 0x60, 0x11, 0x40]);
          expect([...g.slice(8, 24)]).toEqual([...gidBytes(a.gid.gid)]);
          expect([...g.slice(24, 40)]).toEqual([...gidBytes(b.gid.gid)]);
        });
      } else {
        it("with IPv4 GIDs the 40 GRH bytes are 20 zero bytes, then the 20-byte IPv4 header (45 00 …, UDP, addresses)", async () => {
          const { a, b, ah } = udPair(p);
          b.mr.bytes.fill(0xee, 0, 40);
          b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 200)] });
          a.qp.postSend(udSend(a, ah, b.qp.qp_num, 64));
          await waitWc(b.rcq);
          const g = b.mr.bytes;
          expect([...g.slice(0, 20)].every((x) => x === 0)).toBe(true);
          expect(g[20]).toBe(0x45);
          expect(g[29]).toBe(17); // protocol UDP
          expect([...g.slice(32, 36)]).toEqual([...gidBytes(a.gid.gid).slice(12)]);
          expect([...g.slice(36, 40)]).toEqual([...gidBytes(b.gid.gid).slice(12)]);
        });
      }
    });
  }

  it("SEND_WITH_IMM: receiver byte_len n + 40, GRH|WITH_IMM, imm_data as posted", async () => {
    const { a, b, ah } = udPair(PAIRINGS[0]);
    b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 200)] });
    a.qp.postSend(udSend(a, ah, b.qp.qp_num, 10, { opcode: IBV_WR_SEND_WITH_IMM, imm_data: 0xabcdef01 }));
    expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, wc_flags: IBV_WC_WITH_IMM });
    expect((await waitWc(b.rcq))[0]).toMatchObject({
      status: IBV_WC_SUCCESS,
      byte_len: 50,
      wc_flags: IBV_WC_GRH | IBV_WC_WITH_IMM,
      imm_data: 0xabcdef01,
      src_qp: a.qp.qp_num,
    });
  });

  it("UD advances sq_psn by one per packet", async () => {
    const { a, b, ah } = udPair(PAIRINGS[0]);
    const psn0 = a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn;
    for (let i = 0; i < 3; i++) b.qp.postRecv({ wr_id: i, sg_list: [b.mr.sge(0, 200)] });
    a.qp.postSend([1, 2, 3].map((i) => ({ ...udSend(a, ah, b.qp.qp_num, 16), wr_id: i })));
    await waitWc(a.scq, 3);
    expect(psnDelta(psn0, a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn)).toBe(3);
  });
});

function isIpv6Pairing(p: Pairing) {
  return p.gid === "linklocal";
}

function deadQpn(s: Scope): number {
  const e = endpoint(s, "rxe0", "ipv4", UD);
  const n = e.qp.qp_num;
  e.qp.destroy();
  return n;
}

suite("UD drops and errors (§4.2, §5.3)", () => {
  /** After a dropped message, a good one still arrives (B stays usable, nothing was queued). */
  async function expectDroppedThenWorks(a: Endpoint, b: Endpoint, ah: Ah) {
    expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS });
    await expectNoWc(b.rcq, 30);
    expectState(b.qp, IBV_QPS_RTS);
    a.qp.postSend({ ...udSend(a, ah, b.qp.qp_num, 8), wr_id: 78 });
    await waitWc(a.scq);
    expect((await waitWc(b.rcq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, byte_len: 48 });
  }

  it("a wrong qkey: sender SUCCESS, the receiver gets nothing", async () => {
    const { a, b, ah } = udPair(PAIRINGS[0]);
    b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 200)] });
    a.qp.postSend(udSend(a, ah, b.qp.qp_num, 8, { ud: { ah, remote_qpn: b.qp.qp_num, remote_qkey: 0x2222 } }));
    await expectDroppedThenWorks(a, b, ah);
  });

  it("a wrong qkey counts in the receiving port's qkey_viol_cntr (rxe_recv.c check_keys: set_qkey_viol_cntr)", async () => {
    const { a, b, ah } = udPair(PAIRINGS[0]);
    const before = b.ctx.queryPort(1).qkey_viol_cntr;
    b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 200)] });
    a.qp.postSend(udSend(a, ah, b.qp.qp_num, 8, { ud: { ah, remote_qpn: b.qp.qp_num, remote_qkey: 0x2222 } }));
    await waitWc(a.scq);
    await expectNoWc(b.rcq, 30);
    expect(b.ctx.queryPort(1).qkey_viol_cntr).toBe(before + 1);
  });

  it("a qkey with bit 31 set: dropped (rxe does not substitute the QP's own qkey)", async () => {
    const { a, b, ah } = udPair(PAIRINGS[0]);
    b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 200)] });
    a.qp.postSend(udSend(a, ah, b.qp.qp_num, 8, { ud: { ah, remote_qpn: b.qp.qp_num, remote_qkey: 0x80000000 } }));
    await expectDroppedThenWorks(a, b, ah);
  });

  it("a non-existent remote QPN: sender SUCCESS, nothing arrives", async () => {
    const { s, a, b, ah } = udPair(PAIRINGS[0]);
    b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 200)] });
    a.qp.postSend(udSend(a, ah, deadQpn(s), 8));
    await expectDroppedThenWorks(a, b, ah);
  });

  it("no recv posted: silently dropped, sender SUCCESS", async () => {
    const { a, b, ah } = udPair(PAIRINGS[0]);
    a.qp.postSend(udSend(a, ah, b.qp.qp_num, 8));
    expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS });
    b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 200)] });
    await expectNoWc(b.rcq, 30);
    expectState(b.qp, IBV_QPS_RTS);
  });

  it("a recv buffer smaller than 40 + payload: sender SUCCESS; the recv completes LOC_QP_OP_ERR and the UD QP goes to ERR", async () => {
    const { a, b, ah } = udPair(PAIRINGS[0]);
    b.qp.postRecv({ wr_id: 601, sg_list: [b.mr.sge(0, 40 + 63)] });
    a.qp.postSend(udSend(a, ah, b.qp.qp_num, 64));
    expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS });
    expectErrorWc((await waitWc(b.rcq))[0], IBV_WC_LOC_QP_OP_ERR, b.qp, 601);
    expectState(b.qp, IBV_QPS_ERR);
    expectState(a.qp, IBV_QPS_RTS);
  });

  it("UD cannot post RDMA_WRITE: LOC_QP_OP_ERR and A goes to ERR", async () => {
    const { a, b, ah } = udPair(PAIRINGS[0]);
    a.qp.postSend({
      ...udSend(a, ah, b.qp.qp_num, 8),
      opcode: IBV_WR_RDMA_WRITE,
      rdma: { remote_addr: b.mr.addr, rkey: b.mr.rkey },
    });
    expectErrorWc((await waitWc(a.scq))[0], IBV_WC_LOC_QP_OP_ERR, a.qp, 77);
    expectState(a.qp, IBV_QPS_ERR);
  });

  // C10-93.1.1, as rxe_requester implements it: a UD message longer than the port's active
  // MTU (1024 with the lab's 1500-byte netdevs) is not sent and not an error: the sender's WC
  // is SUCCESS, one PSN is used, nothing arrives.
  it("a payload above the port's active_mtu (1025 > 1024): sender SUCCESS, one PSN used, nothing arrives; 1024 arrives", async () => {
    const { a, b, ah } = udPair(PAIRINGS[0]);
    const mtuBytes = 128 << a.ctx.queryPort(1).active_mtu;
    b.qp.postRecv({ wr_id: 5, sg_list: [b.mr.sge(0, 40 + mtuBytes + 64)] });
    const sq0 = a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn;
    a.qp.postSend(udSend(a, ah, b.qp.qp_num, mtuBytes + 1));
    expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, wr_id: 77 });
    expect(psnDelta(sq0, a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn)).toBe(1);
    await expectNoWc(b.rcq, 30);
    expectState(a.qp, IBV_QPS_RTS);
    a.qp.postSend({ ...udSend(a, ah, b.qp.qp_num, mtuBytes), wr_id: 78 });
    expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, wr_id: 78 });
    expect((await waitWc(b.rcq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, byte_len: 40 + mtuBytes });
  });
});
