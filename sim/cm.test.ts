/**
 * What only the simulator can show of rdma_cm: the CM's MADs in the packet log, in order, and
 * its timeouts and retries on the virtual clock (a real run of these takes over a minute).
 */
import { describe, expect, it } from "vitest";
import {
  RDMA_CM_EVENT_ADDR_RESOLVED,
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_DISCONNECTED,
  RDMA_CM_EVENT_ESTABLISHED,
  RDMA_CM_EVENT_ROUTE_RESOLVED,
  RDMA_CM_EVENT_TIMEWAIT_EXIT,
  RDMA_CM_EVENT_UNREACHABLE,
  RDMA_PS_TCP,
  rdmaEventStr,
  type CmEventChannel,
  type CmId,
} from "../verbs/cm.js";
import { IBV_QPT_RC } from "../verbs/constants.js";
import { createSimBackend, type SimBackend } from "./index.js";

const CAP = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };

async function next(ch: CmEventChannel, type: number, ms = 200_000) {
  const e = await ch.getEvent(ms);
  expect(e ? rdmaEventStr(e.event) : "none").toBe(rdmaEventStr(type));
  e!.ack();
  return e!;
}

async function client(b: SimBackend, ch: CmEventChannel, port: number): Promise<CmId> {
  const id = ch.createId(RDMA_PS_TCP);
  id.resolveAddr({ addr: "10.77.0.1", port: 0 }, { addr: "10.77.0.2", port }, 2000);
  await next(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
  id.resolveRoute(2000);
  await next(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
  const pd = id.verbs!.allocPd();
  const cq = id.verbs!.createCq(8);
  id.createQp(pd, { send_cq: cq, recv_cq: cq, qp_type: IBV_QPT_RC, cap: CAP });
  void b;
  return id;
}

describe("sim rdma_cm protocol", () => {
  it("logs REQ, MRA, REP, MRA, RTU, DREQ, DREP on QP1, each from the right device, and counts them", async () => {
    const b = createSimBackend({ seed: 3 });
    const cm = b.cm;
    const sch = cm.createEventChannel();
    const cch = cm.createEventChannel();
    const l = sch.createId(RDMA_PS_TCP);
    l.bindAddr({ addr: "10.77.0.2", port: 7471 });
    l.listen(1);
    const c = await client(b, cch, 7471);
    const before = b.openDevice("rxe0").queryCounters().sent_pkts;
    c.connect({ responder_resources: 1, initiator_depth: 1, private_data: new Uint8Array(5) });
    const req = await next(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
    const pd = req.id.verbs!.allocPd();
    const cq = req.id.verbs!.createCq(8);
    req.id.createQp(pd, { send_cq: cq, recv_cq: cq, qp_type: IBV_QPT_RC, cap: CAP });
    req.id.accept({ responder_resources: 1, initiator_depth: 1 });
    await next(cch, RDMA_CM_EVENT_ESTABLISHED);
    await next(sch, RDMA_CM_EVENT_ESTABLISHED);
    c.disconnect();
    await next(sch, RDMA_CM_EVENT_DISCONNECTED);
    req.id.disconnect();
    await next(cch, RDMA_CM_EVENT_DISCONNECTED);
    const mads = b.packets.filter((p) => p.mad).map((p) => `${p.src}>${p.dst} ${p.mad!.attr}`);
    expect(mads).toEqual([
      "rxe0>rxe1 REQ",
      "rxe1>rxe0 MRA",
      "rxe1>rxe0 REP",
      "rxe0>rxe1 MRA",
      "rxe0>rxe1 RTU",
      "rxe0>rxe1 DREQ",
      "rxe1>rxe0 DREP",
    ]);
    const reqPkt = b.packets.find((p) => p.mad?.attr === "REQ")!;
    expect(reqPkt).toMatchObject({ opcode: "UD_SEND_ONLY", src_qpn: 1, dest_qpn: 1 });
    expect(reqPkt.mad).toMatchObject({ service_id: "0x0000000001061d2f", private_data_len: 36 + 5, retry: 0 });
    // rxe0 sent REQ, MRA, RTU, DREQ.
    expect(b.openDevice("rxe0").queryCounters().sent_pkts - before).toBe(4);
    const tw = b.now();
    await next(cch, RDMA_CM_EVENT_TIMEWAIT_EXIT);
    // Timewait: cm_convert_to_ms(ACK timeout 19) after the DREP.
    expect(b.now() - tw).toBe(2048);
  });

  it("a REQ nobody answers (link down) is resent every 6144 ms, 15 times, then UNREACHABLE -ETIMEDOUT (98.3 s)", async () => {
    const b = createSimBackend({ seed: 4 });
    const cch = b.cm.createEventChannel();
    const c = await client(b, cch, 7472);
    b.setLinkState("rxe0", false);
    const t0 = b.now();
    c.connect({ responder_resources: 1, initiator_depth: 1 });
    const e = await next(cch, RDMA_CM_EVENT_UNREACHABLE);
    expect(e.status).toBe(-110);
    // 2 × 2^(18−8) for the path's packet life time + 2^(20−8) for the CM response timeout.
    expect(b.now() - t0).toBe(16 * 6144);
    expect(b.packets.filter((p) => p.mad?.attr === "REQ").map((p) => p.time)).toEqual(
      [...Array(16).keys()].map((i) => t0 + i * 6144),
    );
    const reqs = b.packets.filter((p) => p.mad?.attr === "REQ");
    expect(reqs.map((p) => p.mad!.retry)).toEqual([...Array(16).keys()]);
    expect(reqs.every((p) => p.dropped === "link down")).toBe(true);
  });

  it("the MRA stretches the client's wait: a server that never accepts makes it UNREACHABLE only after 18 min", async () => {
    const b = createSimBackend({ seed: 5 });
    const sch = b.cm.createEventChannel();
    const cch = b.cm.createEventChannel();
    const l = sch.createId(RDMA_PS_TCP);
    l.bindAddr({ addr: "10.77.0.2", port: 7473 });
    l.listen(1);
    const c = await client(b, cch, 7473);
    const t0 = b.now();
    c.connect({ responder_resources: 1, initiator_depth: 1 });
    await next(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
    const e = await next(cch, RDMA_CM_EVENT_UNREACHABLE, 10_000_000);
    expect(e.status).toBe(-110);
    // After the MRA each wait is 2^(24−8) + 2^(19−8) ms (service timeout + ACK timeout 19).
    expect(b.now() - t0).toBe(16 * (65536 + 2048));
  });
});
