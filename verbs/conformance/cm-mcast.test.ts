/**
 * Multicast through rdma_cm (rdma_join_multicast / rdma_leave_multicast), as measured on rxe
 * (sim/RXE-FACTS.md §10.5): an RDMA_PS_UDP id on rxe1 joins a group, librdmacm attaches its UD
 * QP while handing out MULTICAST_JOIN, and a datagram rxe0 sends to the group's AH with
 * remote_qpn IB_MULTICAST_QPN arrives; after the leave nothing does.
 */
import { expect, it } from "vitest";
import {
  IB_MULTICAST_QPN,
  RDMA_CM_EVENT_ADDR_RESOLVED,
  RDMA_CM_EVENT_MULTICAST_ERROR,
  RDMA_CM_EVENT_MULTICAST_JOIN,
  RDMA_PS_TCP,
  RDMA_PS_UDP,
  RDMA_UDP_QKEY,
  isUnackedCmEventsRefusal,
  type CmEvent,
  type CmEventChannel,
  type CmId,
  type SockAddr,
  type UdParamEvent,
} from "../cm.js";
import { VerbsError } from "../errors.js";
import {
  IBV_QPS_RTS,
  IBV_QPT_UD,
  IBV_WC_GRH,
  IBV_WC_RECV,
  IBV_WC_SEND,
  IBV_WC_SUCCESS,
  IBV_WR_SEND,
} from "../constants.js";
import type { Wc } from "../types.js";
import {
  RXE0_IP,
  RXE1_IP,
  bytes,
  channel,
  createCmQp,
  createId,
  expectEvent,
  freshPort,
  resolve,
  type CmEnd,
} from "./cm-harness.js";
import {
  B,
  expectNoWc,
  expectState,
  expectVerbsError,
  findGid,
  isIpv4Mapped,
  scope,
  suite,
  waitWc,
  type Scope,
} from "./harness.js";

const cmSuite = (title: string, body: () => void) =>
  suite(title, () => {
    if (B().cm) body();
    else it.skip(`no rdma_cm on this backend: ${B().cmUnavailableReason}`, () => {});
  });

/** A group of its own for each test (native devices keep memberships across tests). */
function group(): SockAddr {
  const n = freshPort();
  return { addr: `239.7.${(n >> 8) & 0xff}.${n & 0xff}`, port: 0 };
}

/** A UD id bound to `ip` (rdma_bind_addr), so it is on that device. */
function boundUdId(ch: CmEventChannel, ip: string): CmId {
  const id = createId(ch, RDMA_PS_UDP);
  id.bindAddr({ addr: ip, port: 0 });
  return id;
}

/**
 * id.joinMulticast(g), left again after the test however it ended (events on the channel
 * acknowledged first, as a leave needs): an attached QP left behind could not be destroyed.
 */
function join(s: Scope, ch: CmEventChannel, id: CmId, g: SockAddr): void {
  id.joinMulticast(g);
  s.defer(() => {
    for (const e of (ch as { __events?: CmEvent[] }).__events ?? []) {
      try {
        e.ack();
      } catch (err) {
        if (!(err instanceof VerbsError && err.code === "EINVAL")) throw err;
      }
    }
    try {
      for (;;) id.leaveMulticast(g);
    } catch (err) {
      if (!(err instanceof VerbsError && err.code === "EADDRNOTAVAIL")) throw err;
    }
  });
}

/** rxe0's sender: a UD id whose address resolution went to the group (from rxe0's address), with a QP. */
async function sender(s: Scope, ch: CmEventChannel, g: SockAddr): Promise<CmEnd> {
  const id = createId(ch, RDMA_PS_UDP);
  id.resolveAddr({ addr: RXE0_IP, port: 0 }, g, 2000);
  (await expectEvent(ch, RDMA_CM_EVENT_ADDR_RESOLVED)).ack();
  expect(id.verbs?.device.name).toBe("rxe0");
  return createCmQp(s, id, IBV_QPT_UD);
}

/** Posts `n` 256-byte receives on an end's QP; returns the MR they land in (one slot each). */
function receives(s: Scope, end: CmEnd, n = 4) {
  const mr = end.pd.regMr(256 * n, 1);
  s.defer(() => mr.dereg());
  for (let i = 0; i < n; i++) end.qp.postRecv({ wr_id: 100 + i, sg_list: [mr.sge(256 * i, 256)] });
  return mr;
}

/**
 * One datagram "text" from `from` through the group's AH: a signaled send that completes.
 * `ownRecv`: the sender is a member and gets the datagram too; its RECV is returned (on rxe it
 * completes before the SEND, on the same CQ).
 */
async function sendTo(
  s: Scope,
  from: CmEnd,
  ud: UdParamEvent,
  text: string,
  o: { qpn?: number; qkey?: number; ownRecv?: boolean } = {},
): Promise<Wc[]> {
  const ah = from.pd.createAh(ud.ah_attr);
  s.defer(() => ah.destroy());
  const mr = from.pd.regMr(64, 1);
  s.defer(() => mr.dereg());
  mr.bytes.set(bytes(text));
  from.qp.postSend({
    wr_id: 7,
    opcode: IBV_WR_SEND,
    sg_list: [mr.sge(0, text.length)],
    ud: { ah, remote_qpn: o.qpn ?? ud.qp_num, remote_qkey: o.qkey ?? ud.qkey },
  });
  const wcs = await waitWc(from.cq, o.ownRecv ? 2 : 1);
  const send = wcs.find((w) => w.opcode === IBV_WC_SEND);
  expect(send?.status).toBe(IBV_WC_SUCCESS);
  return wcs.filter((w) => w !== send);
}

cmSuite("rdma_cm multicast (rdma_join_multicast)", () => {
  it("rxe1 joins: MULTICAST_JOIN carries qp_num 0xffffff, RDMA_UDP_QKEY and an AH to the group; rxe0's datagram arrives; after the leave none does", async () => {
    const s = scope();
    const bch = channel(s);
    const ach = channel(s);
    const g = group();
    const bid = boundUdId(bch, RXE1_IP);
    const b = createCmQp(s, bid, IBV_QPT_UD);
    const mr = receives(s, b);
    join(s, bch, bid, g);
    const e = await expectEvent(bch, RDMA_CM_EVENT_MULTICAST_JOIN);
    const ud = e.param.ud!;
    const sgid = findGid(bid.verbs!, "ipv4");
    expect({
      id: e.id === bid,
      qp_num: ud.qp_num,
      qkey: ud.qkey,
      private_data_len: ud.private_data_len,
      is_global: ud.ah_attr.is_global,
      dgid: ud.ah_attr.grh.dgid,
      sgid_index: ud.ah_attr.grh.sgid_index,
      hop_limit: ud.ah_attr.grh.hop_limit,
      port_num: ud.ah_attr.port_num,
    }).toEqual({
      id: true,
      qp_num: IB_MULTICAST_QPN,
      qkey: RDMA_UDP_QKEY,
      private_data_len: 0,
      is_global: 1,
      dgid: `::ffff:${g.addr}`,
      sgid_index: sgid.gid_index,
      hop_limit: 64,
      port_num: 1,
    });
    expect(isIpv4Mapped(sgid.gid)).toBe(true);
    e.ack();

    // The sender need not join: an AH to the group's GID is enough.
    const a = await sender(s, ach, g);
    await sendTo(s, a, ud, "to the group");
    const [rw] = await waitWc(b.cq);
    expect([rw.status, rw.opcode, rw.byte_len, rw.wc_flags & IBV_WC_GRH, rw.src_qp]).toEqual([
      IBV_WC_SUCCESS,
      IBV_WC_RECV,
      40 + 12,
      IBV_WC_GRH,
      a.qp.qp_num,
    ]);
    expect(new TextDecoder().decode(mr.bytes.subarray(40, 52))).toBe("to the group");

    bid.leaveMulticast(g);
    await sendTo(s, a, ud, "after leave");
    await expectNoWc(b.cq, 300);
    expectState(b.qp, IBV_QPS_RTS);
  });

  it("a wrong Q_Key vanishes; remote_qpn the member's own QPN (not 0xffffff) reaches it like a unicast datagram", async () => {
    const s = scope();
    const bch = channel(s);
    const ach = channel(s);
    const g = group();
    const bid = boundUdId(bch, RXE1_IP);
    const b = createCmQp(s, bid, IBV_QPT_UD);
    receives(s, b);
    join(s, bch, bid, g);
    const e = await expectEvent(bch, RDMA_CM_EVENT_MULTICAST_JOIN);
    const ud = e.param.ud!;
    e.ack();
    const a = await sender(s, ach, g);
    await sendTo(s, a, ud, "bad qkey", { qkey: 0x11111111 });
    await expectNoWc(b.cq, 300);
    await sendTo(s, a, ud, "by qpn", { qpn: b.qp.qp_num });
    const [rw] = await waitWc(b.cq);
    expect([rw.status, rw.byte_len]).toEqual([IBV_WC_SUCCESS, 40 + 6]);
    bid.leaveMulticast(g);
  });

  it("a QP created after the join is not attached (librdmacm attaches in rdma_get_cm_event): nothing arrives until it joins again", async () => {
    const s = scope();
    const bch = channel(s);
    const ach = channel(s);
    const g = group();
    const bid = boundUdId(bch, RXE1_IP);
    join(s, bch, bid, g);
    const e = await expectEvent(bch, RDMA_CM_EVENT_MULTICAST_JOIN);
    const ud = e.param.ud!;
    e.ack();
    const b = createCmQp(s, bid, IBV_QPT_UD);
    receives(s, b);
    const a = await sender(s, ach, g);
    await sendTo(s, a, ud, "too early");
    await expectNoWc(b.cq, 300);
    // Leave and join again, now with the QP: attached this time.
    bid.leaveMulticast(g);
    join(s, bch, bid, g);
    (await expectEvent(bch, RDMA_CM_EVENT_MULTICAST_JOIN)).ack();
    await sendTo(s, a, ud, "now");
    const [rw] = await waitWc(b.cq);
    expect([rw.status, rw.byte_len]).toEqual([IBV_WC_SUCCESS, 40 + 3]);
    bid.leaveMulticast(g);
  });

  it("the sender's own QP receives its datagram once its id joined too", async () => {
    const s = scope();
    const bch = channel(s);
    const ach = channel(s);
    const g = group();
    const bid = boundUdId(bch, RXE1_IP);
    const b = createCmQp(s, bid, IBV_QPT_UD);
    receives(s, b);
    join(s, bch, bid, g);
    const e = await expectEvent(bch, RDMA_CM_EVENT_MULTICAST_JOIN);
    const ud = e.param.ud!;
    e.ack();
    const a = await sender(s, ach, g);
    const amr = receives(s, a);
    await sendTo(s, a, ud, "not a member");
    await waitWc(b.cq);
    await expectNoWc(a.cq, 300);
    join(s, ach, a.id, g);
    (await expectEvent(ach, RDMA_CM_EVENT_MULTICAST_JOIN)).ack();
    const [own] = await sendTo(s, a, ud, "member", { ownRecv: true });
    expect([own.opcode, own.byte_len, own.src_qp]).toEqual([IBV_WC_RECV, 40 + 6, a.qp.qp_num]);
    expect(new TextDecoder().decode(amr.bytes.subarray(40, 46))).toBe("member");
    await waitWc(b.cq);
    a.id.leaveMulticast(g);
    bid.leaveMulticast(g);
  });

  it("joining twice gives two events and needs two leaves; the first leave already detaches the QP; a third is EADDRNOTAVAIL", async () => {
    const s = scope();
    const bch = channel(s);
    const ach = channel(s);
    const g = group();
    const bid = boundUdId(bch, RXE1_IP);
    const b = createCmQp(s, bid, IBV_QPT_UD);
    receives(s, b);
    join(s, bch, bid, g);
    const e = await expectEvent(bch, RDMA_CM_EVENT_MULTICAST_JOIN);
    const ud = e.param.ud!;
    e.ack();
    join(s, bch, bid, g);
    (await expectEvent(bch, RDMA_CM_EVENT_MULTICAST_JOIN)).ack();
    const a = await sender(s, ach, g);
    bid.leaveMulticast(g);
    await sendTo(s, a, ud, "half left");
    await expectNoWc(b.cq, 300);
    bid.leaveMulticast(g);
    expectVerbsError(() => bid.leaveMulticast(g), "EADDRNOTAVAIL");
  });

  it("refusals: a fresh id and an RDMA_PS_TCP id cannot join (EINVAL); leaving a group never joined is EADDRNOTAVAIL", () => {
    const s = scope();
    const ch = channel(s);
    const g = group();
    const fresh = createId(ch, RDMA_PS_UDP);
    expectVerbsError(() => fresh.joinMulticast(g), "EINVAL");
    const tcp = createId(ch, RDMA_PS_TCP);
    tcp.bindAddr({ addr: RXE1_IP, port: 0 });
    expectVerbsError(() => tcp.joinMulticast(g), "EINVAL");
    expectVerbsError(() => tcp.leaveMulticast(g), "EADDRNOTAVAIL");
    const ud = boundUdId(ch, RXE1_IP);
    expectVerbsError(() => ud.leaveMulticast(g), "EADDRNOTAVAIL");
  });

  it("refusals: no route to a group without a source address (ENETUNREACH); no join after ROUTE_RESOLVED (EINVAL); a leave names the joined port", async () => {
    const s = scope();
    const ch = channel(s);
    const g = group();
    expectVerbsError(() => createId(ch, RDMA_PS_UDP).resolveAddr(undefined, g, 2000), "ENETUNREACH");
    const routed = await resolve(ch, freshPort(), { ps: RDMA_PS_UDP });
    expectVerbsError(() => routed.joinMulticast(g), "EINVAL");
    const id = boundUdId(ch, RXE1_IP);
    join(s, ch, id, g);
    (await expectEvent(ch, RDMA_CM_EVENT_MULTICAST_JOIN)).ack();
    expectVerbsError(() => id.leaveMulticast({ addr: g.addr, port: 99 }), "EADDRNOTAVAIL");
    id.leaveMulticast(g);
  });

  it("joining a unicast address with a QP: MULTICAST_ERROR with status -1 (ibv_attach_mcast refuses a non-multicast GID)", async () => {
    const s = scope();
    const ch = channel(s);
    const id = boundUdId(ch, RXE1_IP);
    createCmQp(s, id, IBV_QPT_UD);
    const uni = { addr: RXE0_IP, port: 0 };
    join(s, ch, id, uni);
    const e = await expectEvent(ch, RDMA_CM_EVENT_MULTICAST_ERROR);
    expect(e.status).toBe(-1);
    e.ack();
    id.leaveMulticast(uni);
  });

  it("while joined, rdma_destroy_qp is EBUSY and the QP stays; rdma_leave_multicast with the event unacknowledged is refused (EBUSY)", async () => {
    const s = scope();
    const ch = channel(s);
    const g = group();
    const id = boundUdId(ch, RXE1_IP);
    const b = createCmQp(s, id, IBV_QPT_UD);
    join(s, ch, id, g);
    const e = await expectEvent(ch, RDMA_CM_EVENT_MULTICAST_JOIN);
    const err = expectVerbsError(() => id.leaveMulticast(g), "EBUSY");
    expect(isUnackedCmEventsRefusal(err)).toBe(true);
    e.ack();
    expectVerbsError(() => id.destroyQp(), "EBUSY");
    expect(id.qp).toBe(b.qp);
    expectState(b.qp, IBV_QPS_RTS);
    id.leaveMulticast(g);
  });
});
