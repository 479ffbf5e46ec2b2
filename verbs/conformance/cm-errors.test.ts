/**
 * rdma_cm failures as a program meets them: nobody listening, an address nobody has, a server
 * that says no with private data, private data over the limit, a peer that goes away, events
 * not acknowledged before rdma_destroy_id, and calls in the wrong order.
 */
import { expect, it } from "vitest";
import {
  IB_CM_REJ_CONSUMER_DEFINED,
  IB_CM_REJ_INVALID_SERVICE_ID,
  RDMA_CM_EVENT_ADDR_ERROR,
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_DISCONNECTED,
  RDMA_CM_EVENT_REJECTED,
  RDMA_CM_EVENT_TIMEWAIT_EXIT,
  RDMA_PS_TCP,
  isUnackedCmEventsRefusal,
} from "../cm.js";
import { IBV_QPS_ERR, IBV_QPS_INIT, IBV_QPS_RTS, IBV_QPT_RC } from "../constants.js";
import {
  NOBODY_IP,
  PARAM,
  RXE0_IP,
  RXE1_IP,
  bytes,
  channel,
  connectPair,
  createCmQp,
  createId,
  expectEvent,
  expectNoEvent,
  freshPort,
  listen,
  resolve,
} from "./cm-harness.js";
import { B, DEFAULT_CAP, expectBetween, expectState, expectVerbsError, scope, suite } from "./harness.js";

const cmSuite = (title: string, body: () => void) =>
  suite(title, () => {
    if (B().cm) body();
    else it.skip(`no rdma_cm on this backend: ${B().cmUnavailableReason}`, () => {});
  });

cmSuite("rdma_cm failures", () => {
  it("connect to a port nobody listens on: REJECTED, status 8 (IB_CM_REJ_INVALID_SERVICE_ID), QP to ERR", async () => {
    const s = scope();
    const ch = channel(s);
    const id = await resolve(ch, freshPort());
    const c = createCmQp(s, id);
    id.connect(PARAM);
    const e = await expectEvent(ch, RDMA_CM_EVENT_REJECTED, 5000);
    expect(e.status).toBe(IB_CM_REJ_INVALID_SERVICE_ID);
    expect(e.param.conn!.private_data_len).toBe(148);
    expect(e.param.conn!.private_data.every((b) => b === 0)).toBe(true);
    // librdmacm moves the QP to ERR when it hands out REJECTED.
    expectState(c.qp, IBV_QPS_ERR);
  });

  it("resolve an address no device has: ADDR_ERROR with -ETIMEDOUT once the timeout passes", async () => {
    const s = scope();
    const ch = channel(s);
    const id = createId(ch);
    const t0 = B().now();
    id.resolveAddr({ addr: RXE0_IP, port: 0 }, { addr: NOBODY_IP, port: 7471 }, 500);
    const e = await expectEvent(ch, RDMA_CM_EVENT_ADDR_ERROR, 5000);
    expect(e.status).toBe(-110);
    expectBetween(B().now() - t0, 450, 3 * 500 + 2000);
    e.ack();
    // The id is bound again, not resolved: route resolution is refused.
    expectVerbsError(() => id.resolveRoute(1000), "EINVAL");
  });

  it("a server that rejects with private data: REJECTED status 28, the bytes in 148 zero-padded", async () => {
    const s = scope();
    const sch = channel(s);
    const cch = channel(s);
    const port = freshPort();
    listen(sch, port);
    const id = await resolve(cch, port);
    const c = createCmQp(s, id);
    id.connect(PARAM);
    const req = await expectEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
    req.ack();
    req.id.reject(bytes("go away"));
    const e = await expectEvent(cch, RDMA_CM_EVENT_REJECTED);
    expect(e.status).toBe(IB_CM_REJ_CONSUMER_DEFINED);
    expect(e.param.conn!.private_data_len).toBe(148);
    expect(new TextDecoder().decode(e.param.conn!.private_data.subarray(0, 7))).toBe("go away");
    expect(e.param.conn!.private_data[7]).toBe(0);
    expectState(c.qp, IBV_QPS_ERR);
  });

  it("private data over the limit: rdma_connect 57 bytes EINVAL (56 go), rdma_reject 149 EINVAL", async () => {
    const s = scope();
    const sch = channel(s);
    const cch = channel(s);
    const port = freshPort();
    listen(sch, port);
    const id = await resolve(cch, port);
    createCmQp(s, id);
    expectVerbsError(() => id.connect({ ...PARAM, private_data: new Uint8Array(57) }), "EINVAL");
    await expectNoEvent(sch, 50);
    id.connect({ ...PARAM, private_data: new Uint8Array(56).fill(1) });
    const req = await expectEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
    expect(req.param.conn!.private_data.every((b) => b === 1)).toBe(true);
    req.ack();
    expectVerbsError(() => req.id.reject(new Uint8Array(149)), "EINVAL");
    req.id.reject(new Uint8Array(148));
    // The request is answered: a second reject (or an accept) has nothing to answer.
    expectVerbsError(() => req.id.reject(), "EINVAL");
    expectVerbsError(() => req.id.accept(PARAM), "EINVAL");
    (await expectEvent(cch, RDMA_CM_EVENT_REJECTED)).ack();
    await expectNoEvent(cch, 100);
  });

  it("rdma_reject on an established connection is EINVAL on both sides, and the connection stays up", async () => {
    const s = scope();
    const { sch, cch, client, server } = await connectPair(s);
    expectVerbsError(() => client.id.reject(), "EINVAL");
    expectVerbsError(() => server.id.reject(), "EINVAL");
    expectState(client.qp, IBV_QPS_RTS);
    expectState(server.qp, IBV_QPS_RTS);
    await expectNoEvent(cch, 100);
    await expectNoEvent(sch, 100);
  });

  it("rdma_accept with 197 bytes: EINVAL, the server's QP in ERR, and the client REJECTED with status 28", async () => {
    const s = scope();
    const sch = channel(s);
    const cch = channel(s);
    const port = freshPort();
    listen(sch, port);
    const id = await resolve(cch, port);
    const c = createCmQp(s, id);
    id.connect(PARAM);
    const req = await expectEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
    const v = createCmQp(s, req.id);
    req.ack();
    expectVerbsError(() => req.id.accept({ ...PARAM, private_data: new Uint8Array(197) }), "EINVAL");
    expectState(v.qp, IBV_QPS_ERR);
    const e = await expectEvent(cch, RDMA_CM_EVENT_REJECTED);
    expect(e.status).toBe(IB_CM_REJ_CONSUMER_DEFINED);
    expectState(c.qp, IBV_QPS_ERR);
  });

  it("the peer destroys its id while connected: DISCONNECTED here; after rdma_disconnect, TIMEWAIT_EXIT", async () => {
    const s = scope();
    const { cch, client, server } = await connectPair(s);
    server.qp.destroy();
    server.id.destroy();
    const e = await expectEvent(cch, RDMA_CM_EVENT_DISCONNECTED);
    expect(e.status).toBe(0);
    e.ack();
    expectState(client.qp, IBV_QPS_RTS);
    client.id.disconnect();
    expectState(client.qp, IBV_QPS_ERR);
    (await expectEvent(cch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 5000)).ack();
  });

  it("rdma_destroy_id with an event not acknowledged is refused (EBUSY), and works once it is", async () => {
    const s = scope();
    const sch = channel(s);
    const cch = channel(s);
    const port = freshPort();
    const listener = listen(sch, port);
    const id = await resolve(cch, port);
    createCmQp(s, id);
    id.connect(PARAM);
    const req = await expectEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
    // A CONNECT_REQUEST counts on its listening id, not on the new one.
    const err = expectVerbsError(() => listener.destroy(), "EBUSY");
    expect(err.attribute).toBe("rdma_ack_cm_event");
    expect(isUnackedCmEventsRefusal(err)).toBe(true);
    req.ack();
    req.id.reject();
    req.id.destroy();
    listener.destroy();
    (await expectEvent(cch, RDMA_CM_EVENT_REJECTED)).ack();
  });

  it("calls out of order are EINVAL: route before address, QP before a device, accept on a client, connect twice", async () => {
    const s = scope();
    const ch = channel(s);
    const fresh = createId(ch);
    expectVerbsError(() => fresh.resolveRoute(1000), "EINVAL");
    const ctx = s.open("rxe0");
    const pd = s.pd(ctx);
    const cq = s.cq(ctx);
    expectVerbsError(
      () => fresh.createQp(pd, { send_cq: cq, recv_cq: cq, qp_type: IBV_QPT_RC, cap: DEFAULT_CAP }),
      "EINVAL",
    );
    const id = await resolve(ch, freshPort());
    // A PD of the program's own context is not librdmacm's context for rxe0.
    expectVerbsError(
      () => id.createQp(pd, { send_cq: cq, recv_cq: cq, qp_type: IBV_QPT_RC, cap: DEFAULT_CAP }),
      "EINVAL",
    );
    const c = createCmQp(s, id);
    expectState(c.qp, IBV_QPS_INIT);
    expectVerbsError(() => id.accept(PARAM), "EINVAL");
    expectVerbsError(() => createId(ch, RDMA_PS_TCP).connect(PARAM), "EINVAL");
  });

  it("binding a port twice: EADDRINUSE", () => {
    const s = scope();
    const ch = channel(s);
    const port = freshPort();
    listen(ch, port, { addr: RXE1_IP });
    expectVerbsError(() => createId(ch).bindAddr({ addr: RXE1_IP, port }), "EADDRINUSE");
    expectVerbsError(() => createId(ch).bindAddr({ addr: NOBODY_IP, port: 0 }), "EADDRNOTAVAIL");
  });

  it("an id whose bind failed with EADDRINUSE keeps that netdev: binding it to an address nobody has is ENODEV", () => {
    const s = scope();
    const ch = channel(s);
    const port = freshPort();
    listen(ch, port, { addr: RXE1_IP });
    const id = createId(ch);
    expectVerbsError(() => id.bindAddr({ addr: RXE1_IP, port }), "EADDRINUSE");
    // The kernel left rxe1's netdev on the id (dev_addr.bound_dev_if): no device has this
    // address's GID on it. A fresh id gets EADDRNOTAVAIL for the same call.
    expectVerbsError(() => id.bindAddr({ addr: NOBODY_IP, port }), "ENODEV");
    // rxe0's address is not on rxe1's netdev either; the same address on a fresh id binds.
    expectVerbsError(() => id.bindAddr({ addr: RXE0_IP, port }), "ENODEV");
    expectVerbsError(() => createId(ch).bindAddr({ addr: NOBODY_IP, port }), "EADDRNOTAVAIL");
    createId(ch).bindAddr({ addr: RXE0_IP, port });
  });
});
