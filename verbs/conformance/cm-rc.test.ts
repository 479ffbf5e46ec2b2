/**
 * rdma_cm over RC (RDMA_PS_TCP), rxe0 → rxe1 over IPv4: the happy path event by event, and
 * the QP librdmacm brings up behind the program's back (verbs/cm.ts; librdmacm/cma.c's
 * ucma_init_conn_qp, ucma_modify_qp_rtr/rts/err; the kernel's rdma_init_qp_attr and cm.c).
 */
import { expect, it } from "vitest";
import type { Qp } from "../backend.js";
import {
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_DISCONNECTED,
  RDMA_CM_EVENT_ESTABLISHED,
  RDMA_CM_EVENT_TIMEWAIT_EXIT,
  type CmQpTransition,
} from "../cm.js";
import {
  IBV_ACCESS_REMOTE_ATOMIC,
  IBV_ACCESS_REMOTE_READ,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_MTU_1024,
  IBV_QPS_ERR,
  IBV_QPS_INIT,
  IBV_QPS_RTS,
  IBV_WC_RECV,
  IBV_WC_SEND,
  IBV_WC_SUCCESS,
  IBV_WR_SEND,
  ibv_qp_state,
  nameOf,
} from "../constants.js";
import {
  CM,
  PARAM,
  RXE0_IP,
  RXE1_IP,
  bytes,
  channel,
  connectPair,
  createCmQp,
  expectEvent,
  freshPort,
  listen,
  resolve,
} from "./cm-harness.js";
import { B, expectBetween, expectState, scope, suite, waitWc } from "./harness.js";

const cmSuite = (title: string, body: () => void) =>
  suite(title, () => {
    if (B().cm) body();
    else it.skip(`no rdma_cm on this backend: ${B().cmUnavailableReason}`, () => {});
  });

cmSuite("rdma_cm RC: connecting rxe0 → rxe1", () => {
  it("address and route resolution bind the client to rxe0 and build a RoCE path to rxe1", async () => {
    const s = scope();
    const ch = channel(s);
    const id = await resolve(ch, freshPort());
    expect(id.verbs?.device.name).toBe("rxe0");
    expect(id.port_num).toBe(1);
    expect(id.getLocalAddr().addr).toBe(RXE0_IP);
    expect(id.getLocalAddr().port).toBeGreaterThan(0);
    expect(id.getPeerAddr().addr).toBe(RXE1_IP);
    const r = id.route;
    expect({ num_paths: r.num_paths, sgid: r.sgid, dgid: r.dgid }).toEqual({
      num_paths: 1,
      sgid: `::ffff:${RXE0_IP}`,
      dgid: `::ffff:${RXE1_IP}`,
    });
    expect(r.path_rec?.mtu).toBe(IBV_MTU_1024);
    // cma_resolve_iboe_route: packet life time 18, rate IB_RATE_PORT_CURRENT, TTL 64, pkey 0xffff.
    expect({
      packet_life_time: r.path_rec?.packet_life_time,
      rate: r.path_rec?.rate,
      hop_limit: r.path_rec?.hop_limit,
      sl: r.path_rec?.sl,
      pkey: r.path_rec?.pkey,
      traffic_class: r.path_rec?.traffic_class,
    }).toEqual({ packet_life_time: 18, rate: 0, hop_limit: 64, sl: 0, pkey: 0xffff, traffic_class: 0 });
  });

  it("every event in order, private data both ways (56 and 196 bytes, zero-padded), and the QPs end in RTS", async () => {
    const s = scope();
    const sch = channel(s);
    const cch = channel(s);
    const port = freshPort();
    const listener = listen(sch, port);
    const cid = await resolve(cch, port);
    const client = createCmQp(s, cid);
    expectState(client.qp, IBV_QPS_INIT);
    cid.connect({ ...PARAM, private_data: bytes("hello") });

    const req = await expectEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
    expect(req.listen_id).toBe(listener);
    expect(req.id).not.toBe(listener);
    expect(req.id.verbs?.device.name).toBe("rxe1");
    const conn = req.param.conn!;
    expect(conn.private_data_len).toBe(56);
    expect(new TextDecoder().decode(conn.private_data.subarray(0, 5))).toBe("hello");
    expect([...conn.private_data.subarray(5)].every((b) => b === 0)).toBe(true);
    expect(conn.qp_num).toBe(client.qp.qp_num);
    expect(req.id.getPeerAddr()).toEqual(cid.getLocalAddr());
    const server = createCmQp(s, req.id);
    expectState(server.qp, IBV_QPS_INIT);
    req.ack();
    req.id.accept({ ...PARAM, private_data: bytes("world") });
    // rdma_accept brings the server's QP to RTS before the REP goes out.
    expectState(server.qp, IBV_QPS_RTS);
    expectState(client.qp, IBV_QPS_INIT);

    const est = await expectEvent(cch, RDMA_CM_EVENT_ESTABLISHED);
    expect(est.id).toBe(cid);
    expect(est.param.conn!.private_data_len).toBe(196);
    expect(new TextDecoder().decode(est.param.conn!.private_data.subarray(0, 5))).toBe("world");
    expect(est.param.conn!.qp_num).toBe(server.qp.qp_num);
    expectState(client.qp, IBV_QPS_RTS);
    est.ack();
    const sest = await expectEvent(sch, RDMA_CM_EVENT_ESTABLISHED);
    expect(sest.id).toBe(req.id);
    sest.ack();
  });

  it("the attributes librdmacm set: crossed QPNs and PSNs, the path, retry counts from the other side", async () => {
    const s = scope();
    const { client, server } = await connectPair(s, {
      clientParam: { ...PARAM, retry_count: 5, rnr_retry_count: 3 },
      serverParam: { ...PARAM, rnr_retry_count: 6 },
    });
    const c = client.qp.query().attr;
    const v = server.qp.query().attr;
    expect(c.dest_qp_num).toBe(server.qp.qp_num);
    expect(v.dest_qp_num).toBe(client.qp.qp_num);
    expect(c.sq_psn).toBe(v.rq_psn);
    expect(v.sq_psn).toBe(c.rq_psn);
    expect([c.path_mtu, v.path_mtu]).toEqual([IBV_MTU_1024, IBV_MTU_1024]);
    // retry_count is the client's for both QPs; each side's rnr_retry is what the *other* sent.
    expect({ c: c.retry_cnt, v: v.retry_cnt }).toEqual({ c: 5, v: 5 });
    expect({ c: c.rnr_retry, v: v.rnr_retry }).toEqual({ c: 6, v: 3 });
    expect({ c: c.min_rnr_timer, v: v.min_rnr_timer }).toEqual({ c: 0, v: 0 });
    expect([c.max_rd_atomic, c.max_dest_rd_atomic, v.max_rd_atomic, v.max_dest_rd_atomic]).toEqual([1, 1, 1, 1]);
    const remote = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
    expect([c.qp_access_flags, v.qp_access_flags]).toEqual([remote, remote]);
    expect(c.ah_attr.grh.dgid).toBe(`::ffff:${RXE1_IP}`);
    expect(v.ah_attr.grh.dgid).toBe(`::ffff:${RXE0_IP}`);
    expect(c.ah_attr.is_global).toBe(1);
    // The local ACK timeout the CM computes for a RoCE path: packet life time 18 (Linux 6.1's
    // CMA_IBOE_PACKET_LIFETIME) + 1, as cm_ack_timeout gives it with rxe's ACK delay 15.
    expect([c.timeout, v.timeout]).toEqual([19, 19]);
  });

  it("a SEND works on the QPs the CM connected", async () => {
    const s = scope();
    const { client, server } = await connectPair(s);
    const smr = server.pd.regMr(64, 1);
    const cmr = client.pd.regMr(64, 1);
    s.defer(() => smr.dereg());
    s.defer(() => cmr.dereg());
    cmr.bytes.set(bytes("over rdma_cm"));
    server.qp.postRecv({ wr_id: 7, sg_list: [smr.sge()] });
    client.qp.postSend({ wr_id: 8, opcode: IBV_WR_SEND, sg_list: [cmr.sge(0, 12)] });
    const [sw] = await waitWc(client.cq);
    const [rw] = await waitWc(server.cq);
    expect([sw.status, sw.opcode]).toEqual([IBV_WC_SUCCESS, IBV_WC_SEND]);
    expect([rw.status, rw.opcode, rw.byte_len]).toEqual([IBV_WC_SUCCESS, IBV_WC_RECV, 12]);
    expect(new TextDecoder().decode(smr.bytes.subarray(0, 12))).toBe("over rdma_cm");
  });

  it("disconnect: QP to ERR at once, DISCONNECTED on both sides, then TIMEWAIT_EXIT about two seconds later", async () => {
    const s = scope();
    const { sch, cch, client, server } = await connectPair(s);
    client.id.disconnect();
    expectState(client.qp, IBV_QPS_ERR);
    const sd = await expectEvent(sch, RDMA_CM_EVENT_DISCONNECTED);
    sd.ack();
    expectState(server.qp, IBV_QPS_RTS);
    const t0 = B().now();
    server.id.disconnect();
    expectState(server.qp, IBV_QPS_ERR);
    (await expectEvent(cch, RDMA_CM_EVENT_DISCONNECTED)).ack();
    (await expectEvent(cch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 5000)).ack();
    (await expectEvent(sch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 5000)).ack();
    // Timewait is cm_convert_to_ms(ACK timeout 19) = 2^(19−8) = 2048 ms (measured 2.2 s).
    expectBetween(B().now() - t0, 2000, 2048 + 2000);
  });

  it("librdmacm's own transitions: INIT in rdma_create_qp; INIT→INIT, RTR, RTS in rdma_accept and in rdma_get_cm_event", async () => {
    const cm = CM();
    if (!cm.onQpTransition) return; // a backend that cannot see them reports none
    const seen: CmQpTransition[] = [];
    const stop = cm.onQpTransition((t) => seen.push(t));
    try {
      const s = scope();
      const { client, server } = await connectPair(s);
      const of = (qp: Qp) =>
        seen
          .filter((t) => t.qp === qp)
          .map((t) => `${t.during}:${nameOf(ibv_qp_state, t.from)}->${nameOf(ibv_qp_state, t.to)}`);
      expect(of(client.qp)).toEqual([
        "rdma_create_qp:IBV_QPS_RESET->IBV_QPS_INIT",
        "rdma_get_cm_event:IBV_QPS_INIT->IBV_QPS_INIT",
        "rdma_get_cm_event:IBV_QPS_INIT->IBV_QPS_RTR",
        "rdma_get_cm_event:IBV_QPS_RTR->IBV_QPS_RTS",
      ]);
      expect(of(server.qp)).toEqual([
        "rdma_create_qp:IBV_QPS_RESET->IBV_QPS_INIT",
        "rdma_accept:IBV_QPS_INIT->IBV_QPS_INIT",
        "rdma_accept:IBV_QPS_INIT->IBV_QPS_RTR",
        "rdma_accept:IBV_QPS_RTR->IBV_QPS_RTS",
      ]);
    } finally {
      stop();
    }
  });
});
