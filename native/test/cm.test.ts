/**
 * rdma_cm through the native backend on real rxe (VM only): the happy paths (RC and UD) with
 * every event, the QP transitions librdmacm makes (reported through onQpTransition), QPs made
 * by rdma_create_qp working as ordinary QPs, and the failures of sim/RXE-FACTS.md §10.
 */
import { describe, expect, it } from "vitest";
import {
  IB_CM_REJ_CONSUMER_DEFINED,
  IB_CM_REJ_INVALID_SERVICE_ID,
  RDMA_CM_EVENT_ADDR_ERROR,
  RDMA_CM_EVENT_ADDR_RESOLVED,
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_DISCONNECTED,
  RDMA_CM_EVENT_ESTABLISHED,
  RDMA_CM_EVENT_REJECTED,
  RDMA_CM_EVENT_TIMEWAIT_EXIT,
  RDMA_CM_EVENT_UNREACHABLE,
  RDMA_CM_PRIVATE_DATA_MAX,
  RDMA_PS_TCP,
  RDMA_PS_UDP,
  RDMA_UDP_QKEY,
  ib_cm_sidr_status,
  type CmQpTransition,
} from "../../verbs/cm.js";
import * as v from "../../verbs/constants.js";
import { VerbsError } from "../../verbs/errors.js";
import { MAX_WAIT_MS } from "../../verbs/waits.js";
import {
  CLIENT_IP,
  CM,
  SERVER_IP,
  announceCmSkip,
  listenOn,
  nextEvent,
  qpOn,
  qpState,
  resolvedClient,
  teardown,
} from "./cm-env.js";
import { B } from "./native-env.js";

const skip = announceCmSkip("native/test/cm.test.ts");

function bytes(n: number, from = 0): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (from + i) & 0xff);
}

function errorOf(f: () => unknown): VerbsError {
  try {
    f();
  } catch (e) {
    if (e instanceof VerbsError) return e;
    throw e;
  }
  throw new Error("no error");
}

describe.skipIf(skip)("rdma_cm on rxe (native)", () => {
  it("RC: every event, librdmacm's transitions, SENDs both ways, disconnect and TIMEWAIT_EXIT", async () => {
    const cm = CM();
    const seen: CmQpTransition[] = [];
    const stop = cm.onQpTransition!((t) => seen.push(t));
    const sch = cm.createEventChannel();
    const cch = cm.createEventChannel();
    const listen = listenOn(sch, 7501, RDMA_PS_TCP);
    expect(listen.verbs?.device.name).toBe("rxe1");
    expect(listen.port_num).toBe(1);
    const client = await resolvedClient(cch, 7501, RDMA_PS_TCP);
    expect(client.verbs?.device.name).toBe("rxe0");
    const route = client.route;
    expect(route.num_paths).toBe(1);
    expect(route.path_rec).toMatchObject({
      sgid: `::ffff:${CLIENT_IP}`,
      dgid: `::ffff:${SERVER_IP}`,
      mtu: v.IBV_MTU_1024,
      hop_limit: 64,
      pkey: 0xffff,
      gid_type: v.IBV_GID_TYPE_ROCE_V2,
    });
    expect(client.getPeerAddr()).toEqual({ addr: SERVER_IP, port: 7501 });

    const c = qpOn(client, v.IBV_QPT_RC);
    expect(client.qp).toBe(c.qp);
    expect(qpState(c.qp)).toBe(v.IBV_QPS_INIT);
    expect(seen.map((t) => [t.during, t.by, t.from, t.to])).toEqual([
      ["rdma_create_qp", "ucma_init_conn_qp", v.IBV_QPS_RESET, v.IBV_QPS_INIT],
    ]);
    expect(seen[0].mask).toBe(v.IBV_QP_STATE | v.IBV_QP_ACCESS_FLAGS | v.IBV_QP_PKEY_INDEX | v.IBV_QP_PORT);
    expect(seen[0].qp).toBe(c.qp);
    seen.length = 0;

    c.qp.postRecv({ wr_id: 1, sg_list: [c.mr.sge(0, 64)] });
    client.connect({
      private_data: bytes(RDMA_CM_PRIVATE_DATA_MAX.connect, 1),
      responder_resources: 1,
      initiator_depth: 1,
      retry_count: 7,
      rnr_retry_count: 7,
    });
    const req = await nextEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
    const child = req.id;
    expect(child).not.toBe(listen);
    expect(req.listen_id).toBe(listen);
    expect(req.param.conn?.private_data_len).toBe(56);
    expect(req.param.conn?.private_data).toEqual(bytes(56, 1));
    expect(req.param.conn?.qp_num).toBe(c.qp.qp_num);
    expect(child.verbs?.device.name).toBe("rxe1");
    req.ack();

    const s = qpOn(child, v.IBV_QPT_RC);
    seen.length = 0;
    s.qp.postRecv({ wr_id: 2, sg_list: [s.mr.sge(0, 64)] });
    child.accept({ private_data: bytes(10, 0xa0), responder_resources: 1, initiator_depth: 1 });
    expect(qpState(s.qp)).toBe(v.IBV_QPS_RTS);
    expect(seen.map((t) => [t.during, t.by, t.from, t.to])).toEqual([
      ["rdma_accept", "ucma_modify_qp_rtr", v.IBV_QPS_INIT, v.IBV_QPS_INIT],
      ["rdma_accept", "ucma_modify_qp_rtr", v.IBV_QPS_INIT, v.IBV_QPS_RTR],
      ["rdma_accept", "ucma_modify_qp_rts", v.IBV_QPS_RTR, v.IBV_QPS_RTS],
    ]);
    expect(seen[1].mask & v.IBV_QP_DEST_QPN).toBeTruthy();
    expect(seen[1].attr.dest_qp_num).toBe(c.qp.qp_num);
    seen.length = 0;

    const est = await nextEvent(cch, RDMA_CM_EVENT_ESTABLISHED);
    expect(est.id).toBe(client);
    expect(est.param.conn?.private_data_len).toBe(RDMA_CM_PRIVATE_DATA_MAX.accept);
    expect(est.param.conn?.private_data.subarray(0, 10)).toEqual(bytes(10, 0xa0));
    expect(est.param.conn?.private_data[10]).toBe(0);
    expect(est.param.conn?.qp_num).toBe(s.qp.qp_num);
    est.ack();
    expect(qpState(c.qp)).toBe(v.IBV_QPS_RTS);
    expect(seen.map((t) => [t.during, t.by, t.from, t.to])).toEqual([
      ["rdma_get_cm_event", "ucma_modify_qp_rtr", v.IBV_QPS_INIT, v.IBV_QPS_INIT],
      ["rdma_get_cm_event", "ucma_modify_qp_rtr", v.IBV_QPS_INIT, v.IBV_QPS_RTR],
      ["rdma_get_cm_event", "ucma_modify_qp_rts", v.IBV_QPS_RTR, v.IBV_QPS_RTS],
    ]);
    seen.length = 0;
    (await nextEvent(sch, RDMA_CM_EVENT_ESTABLISHED)).ack();
    expect(seen).toEqual([]); // the passive side was RTS already

    // Ordinary QPs: a SEND each way.
    c.mr.bytes.set(bytes(16, 0x30), 128);
    c.qp.postSend({ wr_id: 7, opcode: v.IBV_WR_SEND, send_flags: v.IBV_SEND_SIGNALED, sg_list: [c.mr.sge(128, 16)] });
    const cw = await c.scq.pollWait(1, 5000);
    const sw = await s.rcq.pollWait(1, 5000);
    expect(cw.map((w) => [w.wr_id, w.status])).toEqual([[7, v.IBV_WC_SUCCESS]]);
    expect(sw.map((w) => [w.wr_id, w.status, w.byte_len])).toEqual([[2, v.IBV_WC_SUCCESS, 16]]);
    expect(s.mr.bytes.subarray(0, 16)).toEqual(bytes(16, 0x30));
    s.qp.postSend({ wr_id: 8, opcode: v.IBV_WR_SEND, send_flags: v.IBV_SEND_SIGNALED, sg_list: [s.mr.sge(0, 16)] });
    expect((await s.scq.pollWait(1, 5000)).map((w) => w.status)).toEqual([v.IBV_WC_SUCCESS]);
    expect((await c.rcq.pollWait(1, 5000)).map((w) => [w.wr_id, w.byte_len])).toEqual([[1, 16]]);

    // The active side disconnects: its QP goes to ERR in the call, the server's stays RTS.
    client.disconnect();
    expect(qpState(c.qp)).toBe(v.IBV_QPS_ERR);
    expect(seen.map((t) => [t.during, t.by, t.to])).toEqual([["rdma_disconnect", "ucma_modify_qp_err", v.IBV_QPS_ERR]]);
    const sd = await nextEvent(sch, RDMA_CM_EVENT_DISCONNECTED);
    expect(sd.id).toBe(child);
    expect(qpState(s.qp)).toBe(v.IBV_QPS_RTS);
    sd.ack();
    child.disconnect();
    expect(qpState(s.qp)).toBe(v.IBV_QPS_ERR);
    (await nextEvent(cch, RDMA_CM_EVENT_DISCONNECTED)).ack();
    const t0 = B().now();
    (await nextEvent(sch, RDMA_CM_EVENT_TIMEWAIT_EXIT)).ack();
    (await nextEvent(cch, RDMA_CM_EVENT_TIMEWAIT_EXIT)).ack();
    console.log(`[cm] TIMEWAIT_EXIT on both sides ${(B().now() - t0).toFixed(0)} ms after DISCONNECTED`);

    teardown(client, c);
    teardown(child, s);
    listen.destroy();
    sch.destroy();
    cch.destroy();
    stop();
  }, 120_000);

  it("UD: rdma_create_qp leaves the QP in RTS, ESTABLISHED carries ah_attr, qp_num and qkey", async () => {
    const cm = CM();
    const seen: CmQpTransition[] = [];
    const stop = cm.onQpTransition!((t) => seen.push(t));
    const sch = cm.createEventChannel();
    const cch = cm.createEventChannel();
    const listen = listenOn(sch, 7502, RDMA_PS_UDP);
    const client = await resolvedClient(cch, 7502, RDMA_PS_UDP);
    expect(client.qp_type).toBe(v.IBV_QPT_UD);
    const c = qpOn(client, v.IBV_QPT_UD);
    expect(seen.map((t) => [t.by, t.from, t.to, t.mask])).toEqual([
      ["ucma_init_ud_qp", v.IBV_QPS_RESET, v.IBV_QPS_INIT, seen[0]?.mask],
      ["ucma_init_ud_qp", v.IBV_QPS_INIT, v.IBV_QPS_RTR, v.IBV_QP_STATE],
      ["ucma_init_ud_qp", v.IBV_QPS_RTR, v.IBV_QPS_RTS, v.IBV_QP_STATE | v.IBV_QP_SQ_PSN],
    ]);
    expect(seen[0].mask & v.IBV_QP_QKEY).toBeTruthy();
    expect(c.qp.query().attr.qkey).toBe(RDMA_UDP_QKEY);
    expect(errorOf(() => client.connect({ private_data: bytes(RDMA_CM_PRIVATE_DATA_MAX.udpConnect + 1) })).code).toBe(
      "EINVAL",
    );
    client.connect({ private_data: bytes(3, 9) });
    const req = await nextEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
    expect(req.param.ud?.private_data_len).toBe(RDMA_CM_PRIVATE_DATA_MAX.udpConnect);
    expect(req.param.ud?.private_data.subarray(0, 3)).toEqual(bytes(3, 9));
    const child = req.id;
    req.ack();
    const s = qpOn(child, v.IBV_QPT_UD);
    s.qp.postRecv({ wr_id: 5, sg_list: [s.mr.sge(0, 40 + 32)] });
    child.accept({ qp_num: s.qp.qp_num });
    const est = await nextEvent(cch, RDMA_CM_EVENT_ESTABLISHED);
    const ud = est.param.ud!;
    expect(ud.qp_num).toBe(s.qp.qp_num);
    expect(ud.qkey).toBe(RDMA_UDP_QKEY);
    expect(ud.ah_attr.is_global).toBe(1);
    const ah = c.pd.createAh(ud.ah_attr);
    est.ack();
    c.qp.postSend({
      wr_id: 6,
      opcode: v.IBV_WR_SEND,
      send_flags: v.IBV_SEND_SIGNALED,
      sg_list: [c.mr.sge(0, 32)],
      ud: { ah, remote_qpn: ud.qp_num, remote_qkey: ud.qkey },
    });
    expect((await c.scq.pollWait(1, 5000)).map((w) => w.status)).toEqual([v.IBV_WC_SUCCESS]);
    expect((await s.rcq.pollWait(1, 5000)).map((w) => [w.wr_id, w.status, w.byte_len])).toEqual([
      [5, v.IBV_WC_SUCCESS, 40 + 32],
    ]);
    expect(await sch.getEvent(500)).toBeNull(); // no ESTABLISHED on the passive side of UD
    ah.destroy();
    teardown(client, c);
    teardown(child, s);
    listen.destroy();
    sch.destroy();
    cch.destroy();
    stop();
  }, 120_000);

  it("no listener: REJECTED with IB_CM_REJ_INVALID_SERVICE_ID, the QP moved to ERR by librdmacm", async () => {
    const cm = CM();
    const seen: CmQpTransition[] = [];
    const stop = cm.onQpTransition!((t) => seen.push(t));
    const ch = cm.createEventChannel();
    const id = await resolvedClient(ch, 7509, RDMA_PS_TCP);
    const c = qpOn(id, v.IBV_QPT_RC);
    seen.length = 0;
    id.connect();
    const ev = await nextEvent(ch, RDMA_CM_EVENT_REJECTED);
    expect(ev.status).toBe(IB_CM_REJ_INVALID_SERVICE_ID);
    expect(ev.param.conn?.private_data_len).toBe(RDMA_CM_PRIVATE_DATA_MAX.reject);
    expect(qpState(c.qp)).toBe(v.IBV_QPS_ERR);
    expect(seen.map((t) => [t.during, t.by, t.from, t.to])).toEqual([
      ["rdma_get_cm_event", "ucma_modify_qp_err", v.IBV_QPS_INIT, v.IBV_QPS_ERR],
    ]);
    ev.ack();
    expect(errorOf(() => id.connect()).code).toBe("EINVAL");
    teardown(id, c);
    ch.destroy();
    stop();
  }, 60_000);

  it("reject with private data: REJECTED 28 with the bytes, then 148 - n zeros; over 148 is EINVAL", async () => {
    const cm = CM();
    const sch = cm.createEventChannel();
    const cch = cm.createEventChannel();
    const listen = listenOn(sch, 7503, RDMA_PS_TCP);
    const client = await resolvedClient(cch, 7503, RDMA_PS_TCP);
    const c = qpOn(client, v.IBV_QPT_RC);
    client.connect();
    const req = await nextEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
    expect(errorOf(() => req.id.reject(bytes(RDMA_CM_PRIVATE_DATA_MAX.reject + 1))).code).toBe("EINVAL");
    req.id.reject(Uint8Array.of(0xde, 0xad, 0xbe, 0xef));
    const rej = await nextEvent(cch, RDMA_CM_EVENT_REJECTED);
    expect(rej.status).toBe(IB_CM_REJ_CONSUMER_DEFINED);
    expect(rej.param.conn?.private_data_len).toBe(148);
    expect(rej.param.conn?.private_data.subarray(0, 5)).toEqual(Uint8Array.of(0xde, 0xad, 0xbe, 0xef, 0));
    rej.ack();
    req.ack();
    req.id.destroy();
    teardown(client, c);
    listen.destroy();
    sch.destroy();
    cch.destroy();
  }, 60_000);

  it("private-data limits: connect over 56 and accept over 196 are EINVAL (the accept rejects the request)", async () => {
    const cm = CM();
    const sch = cm.createEventChannel();
    const cch = cm.createEventChannel();
    const listen = listenOn(sch, 7504, RDMA_PS_TCP);
    const client = await resolvedClient(cch, 7504, RDMA_PS_TCP);
    const c = qpOn(client, v.IBV_QPT_RC);
    const e = errorOf(() => client.connect({ private_data: bytes(57) }));
    expect([e.verb, e.code]).toEqual(["rdma_connect", "EINVAL"]);
    client.connect({ private_data: bytes(56) });
    const req = await nextEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
    req.ack();
    const s = qpOn(req.id, v.IBV_QPT_RC);
    expect(errorOf(() => req.id.accept({ private_data: bytes(197) })).code).toBe("EINVAL");
    expect(qpState(s.qp)).toBe(v.IBV_QPS_ERR);
    const rej = await nextEvent(cch, RDMA_CM_EVENT_REJECTED);
    expect(rej.status).toBe(IB_CM_REJ_CONSUMER_DEFINED);
    rej.ack();
    teardown(req.id, s);
    teardown(client, c);
    listen.destroy();
    sch.destroy();
    cch.destroy();
  }, 60_000);

  it("addresses: no neighbour is ADDR_ERROR -110 after timeout_ms, no route is ENETUNREACH, a taken port EADDRINUSE", async () => {
    const cm = CM();
    const ch = cm.createEventChannel();
    const a = ch.createId(RDMA_PS_TCP);
    const t0 = B().now();
    a.resolveAddr(undefined, { addr: "10.77.0.99", port: 7505 }, 1000);
    const ev = await nextEvent(ch, RDMA_CM_EVENT_ADDR_ERROR);
    expect(ev.status).toBe(-110);
    expect(B().now() - t0).toBeGreaterThanOrEqual(900);
    ev.ack();
    a.destroy();
    const b = ch.createId(RDMA_PS_TCP);
    const e = errorOf(() => b.resolveAddr(undefined, { addr: "192.0.2.1", port: 7505 }, 1000));
    expect([e.verb, e.code]).toEqual(["rdma_resolve_addr", "ENETUNREACH"]);
    expect(await ch.getEvent(200)).toBeNull();
    b.destroy();
    const l1 = ch.createId(RDMA_PS_TCP);
    l1.bindAddr({ addr: SERVER_IP, port: 7506 });
    const l2 = ch.createId(RDMA_PS_TCP);
    expect(errorOf(() => l2.bindAddr({ addr: SERVER_IP, port: 7506 })).code).toBe("EADDRINUSE");
    // The kernel keeps the failed bind's interface on the id: an address nobody has is then
    // ENODEV (no device with its GID there), where a fresh id gets EADDRNOTAVAIL.
    expect(errorOf(() => l2.bindAddr({ addr: "10.77.0.50", port: 7506 })).code).toBe("ENODEV");
    const l3 = ch.createId(RDMA_PS_TCP);
    expect(errorOf(() => l3.bindAddr({ addr: "10.77.0.50", port: 7506 })).code).toBe("EADDRNOTAVAIL");
    l3.destroy();
    l2.destroy();
    l1.destroy();
    ch.destroy();
  }, 60_000);

  it("refuses what would hang or crash librdmacm: destroy with events not acked, calls before an address", async () => {
    const cm = CM();
    const ch = cm.createEventChannel();
    // Waits are bounded like every other wait (verbs/waits.ts).
    await expect(ch.getEvent(MAX_WAIT_MS + 1)).rejects.toMatchObject({ code: "EINVAL", attribute: "timeoutMs" });
    const fresh = ch.createId(RDMA_PS_TCP);
    expect(fresh.verbs).toBeUndefined();
    // librdmacm 44 segfaults here (RXE-FACTS §10.4): refused with the kernel's EINVAL.
    expect(errorOf(() => fresh.resolveRoute(1000)).code).toBe("EINVAL");
    expect(errorOf(() => fresh.connect({ responder_resources: 1 })).code).toBe("EINVAL");
    expect(errorOf(() => fresh.accept()).code).toBe("EINVAL");
    const ctx = B().openDevice("rxe0");
    const pd = ctx.allocPd();
    const cq = ctx.createCq(4);
    expect(() =>
      fresh.createQp(pd, {
        send_cq: cq,
        recv_cq: cq,
        qp_type: v.IBV_QPT_RC,
        cap: { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
      }),
    ).toThrow(VerbsError);
    fresh.resolveAddr(undefined, { addr: SERVER_IP, port: 7507 }, 2000);
    const ev = await nextEvent(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
    // A PD of a context the program opened itself is not id.verbs: librdmacm says EINVAL.
    const pe = errorOf(() =>
      fresh.createQp(pd, {
        send_cq: cq,
        recv_cq: cq,
        qp_type: v.IBV_QPT_RC,
        cap: { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
      }),
    );
    expect([pe.code, pe.attribute]).toEqual(["EINVAL", "pd"]);
    const de = errorOf(() => fresh.destroy());
    expect([de.verb, de.code, de.attribute]).toEqual(["rdma_destroy_id", "EBUSY", "rdma_ack_cm_event"]);
    expect(errorOf(() => ch.destroy()).code).toBe("EBUSY");
    ev.ack();
    expect(errorOf(() => ev.ack()).code).toBe("EINVAL");
    fresh.destroy();
    ch.destroy();
    cq.destroy();
    pd.dealloc();
    ctx.close();
  }, 60_000);

  it("a CONNECT_REQUEST counts on the listening id; librdmacm's own PD serves rdma_create_qp without one", async () => {
    const cm = CM();
    const sch = cm.createEventChannel();
    const cch = cm.createEventChannel();
    const listen = listenOn(sch, 7508, RDMA_PS_TCP);
    const client = await resolvedClient(cch, 7508, RDMA_PS_TCP);
    const c = qpOn(client, v.IBV_QPT_RC);
    client.connect();
    const req = await nextEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
    expect(errorOf(() => listen.destroy()).code).toBe("EBUSY");
    const ctx = req.id.verbs!;
    const cq = ctx.createCq(4);
    const qp = req.id.createQp(undefined, {
      send_cq: cq,
      recv_cq: cq,
      qp_type: v.IBV_QPT_RC,
      cap: { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
    });
    expect(qp.pd.context).toBe(ctx);
    expect(() => qp.pd.dealloc()).toThrow(VerbsError);
    req.id.destroyQp();
    expect(req.id.qp).toBeUndefined();
    req.id.reject();
    req.id.destroy(); // its CONNECT_REQUEST is the listener's to acknowledge
    (await nextEvent(cch, RDMA_CM_EVENT_REJECTED)).ack();
    req.ack();
    listen.destroy();
    cq.destroy();
    teardown(client, c);
    sch.destroy();
    cch.destroy();
  }, 60_000);

  it("RDMA_PS_UDP to no listener is UNREACHABLE with IB_SIDR_UNSUPPORTED", async () => {
    const cm = CM();
    const ch = cm.createEventChannel();
    const id = await resolvedClient(ch, 7510, RDMA_PS_UDP);
    id.connect();
    const ev = await nextEvent(ch, RDMA_CM_EVENT_UNREACHABLE);
    expect(ev.status).toBe(ib_cm_sidr_status.IB_SIDR_UNSUPPORTED);
    expect(ev.param.ud?.private_data_len).toBe(RDMA_CM_PRIVATE_DATA_MAX.udpAccept);
    ev.ack();
    id.destroy();
    ch.destroy();
  }, 60_000);

  it("rdma_getaddrinfo: numeric addresses only, the port space's QP type", () => {
    const cm = CM();
    const [a] = cm.getAddrInfo(SERVER_IP, "7471", { ai_port_space: RDMA_PS_TCP });
    expect(a).toMatchObject({ ai_family: 2, ai_qp_type: v.IBV_QPT_RC, ai_port_space: RDMA_PS_TCP });
    expect(a.ai_dst_addr).toEqual({ addr: SERVER_IP, port: 7471 });
    const [u] = cm.getAddrInfo(SERVER_IP, "7471", { ai_port_space: RDMA_PS_UDP });
    expect(u.ai_qp_type).toBe(v.IBV_QPT_UD);
    const e = errorOf(() => cm.getAddrInfo("no.such.host.invalid", "7471"));
    expect([e.verb, e.code, e.attribute]).toEqual(["rdma_getaddrinfo", "EINVAL", "node"]);
  });
});
