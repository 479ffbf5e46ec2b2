/**
 * The rdma_cm calls lessons 17 and 18 leave out, for the C export's tests (c-cm.test.ts on any
 * machine, c-cm-rxe.test.ts on real rxe): rdma_getaddrinfo, the ids' addresses,
 * rdma_init_qp_attr, an RC connection taken down (DISCONNECTED on both sides, then
 * TIMEWAIT_EXIT), every object destroyed, and UD through the CM (RDMA_PS_UDP: private data both
 * ways, the ESTABLISHED event's ah_attr, qp_num and qkey used to send one datagram). Server ends
 * on rxe1 (10.77.0.2), clients on rxe0 (10.77.0.1), as in the lab VM.
 */
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_QPS_RTR,
  IBV_QPT_RC,
  IBV_QPT_UD,
  IBV_SEND_SIGNALED,
  IBV_WR_SEND,
  RAI_NUMERICHOST,
  RDMA_CM_EVENT_ADDR_RESOLVED,
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_DISCONNECTED,
  RDMA_CM_EVENT_ESTABLISHED,
  RDMA_CM_EVENT_ROUTE_RESOLVED,
  RDMA_CM_EVENT_TIMEWAIT_EXIT,
  RDMA_PS_TCP,
  RDMA_PS_UDP,
  rdmaEventStr,
} from "../../learner.js";
import type { Verbs, VerbsCmChannel, VerbsCmEvent, VerbsCmId } from "../../learner.js";

const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
const bytes = (s: string) => new TextEncoder().encode(s);

async function expectEvent(ch: VerbsCmChannel, type: number, timeoutMs = 2000): Promise<VerbsCmEvent> {
  const e = await ch.getEvent(timeoutMs);
  if (!e) throw new Error(`no event: expected ${rdmaEventStr(type)}`);
  if (e.event !== type)
    throw new Error(`got ${rdmaEventStr(e.event)} (status ${e.status}), expected ${rdmaEventStr(type)}`);
  return e;
}

/** A client id on rxe0 with its address and route resolved to rxe1's port. */
async function resolved(ch: VerbsCmChannel, ps: number, port: number): Promise<VerbsCmId> {
  const id = await ch.createId(ps);
  await id.resolveAddr({ addr: "10.77.0.1", port: 0 }, { addr: "10.77.0.2", port }, 2000);
  await (await expectEvent(ch, RDMA_CM_EVENT_ADDR_RESOLVED)).ack();
  await id.resolveRoute(2000);
  await (await expectEvent(ch, RDMA_CM_EVENT_ROUTE_RESOLVED)).ack();
  return id;
}

export default async function main(verbs: Verbs) {
  await verbs.cm.getAddrInfo("10.77.0.2", "7472", { ai_flags: RAI_NUMERICHOST, ai_port_space: RDMA_PS_TCP });
  const sch = await verbs.cm.createEventChannel();
  const cch = await verbs.cm.createEventChannel();

  // RC: connect, look at the ids, take the connection down.
  const listener = await sch.createId(RDMA_PS_TCP);
  await listener.bindAddr({ addr: "10.77.0.2", port: 7472 });
  await listener.listen(4);
  const client = await resolved(cch, RDMA_PS_TCP, 7472);
  const cpd = await client.verbs!.allocPd();
  const ccq = await client.verbs!.createCq(8);
  await client.createQp(cpd, { send_cq: ccq, recv_cq: ccq, qp_type: IBV_QPT_RC, cap });
  await client.connect({ private_data: bytes("hello"), responder_resources: 1, initiator_depth: 1, retry_count: 7 });
  const req = await expectEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
  const conn = req.id;
  await req.ack();
  const spd = await conn.verbs!.allocPd();
  const scq = await conn.verbs!.createCq(8);
  await conn.createQp(spd, { send_cq: scq, recv_cq: scq, qp_type: IBV_QPT_RC, cap });
  await conn.accept({ private_data: bytes("welcome"), responder_resources: 1, initiator_depth: 1 });
  await (await expectEvent(cch, RDMA_CM_EVENT_ESTABLISHED)).ack();
  await (await expectEvent(sch, RDMA_CM_EVENT_ESTABLISHED)).ack();
  await client.getLocalAddr();
  await client.getPeerAddr();
  await conn.initQpAttr(IBV_QPS_RTR);
  await client.disconnect();
  await (await expectEvent(sch, RDMA_CM_EVENT_DISCONNECTED)).ack();
  await conn.disconnect();
  await (await expectEvent(cch, RDMA_CM_EVENT_DISCONNECTED)).ack();
  await (await expectEvent(cch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 5000)).ack();
  await (await expectEvent(sch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 5000)).ack();
  await client.destroyQp();
  await conn.destroyQp();
  await client.destroy();
  await conn.destroy();
  await listener.destroy();
  await ccq.destroy();
  await scq.destroy();
  await cpd.dealloc();
  await spd.dealloc();

  // UD: a SIDR exchange, then one datagram with what ESTABLISHED carried.
  const ulistener = await sch.createId(RDMA_PS_UDP);
  await ulistener.bindAddr({ addr: "10.77.0.2", port: 7473 });
  await ulistener.listen(4);
  const uclient = await resolved(cch, RDMA_PS_UDP, 7473);
  const upd = await uclient.verbs!.allocPd();
  const ucq = await uclient.verbs!.createCq(8);
  const uqp = await uclient.createQp(upd, { send_cq: ucq, recv_cq: ucq, qp_type: IBV_QPT_UD, cap });
  await uclient.connect({ private_data: bytes("udp hello") });
  const ureq = await expectEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
  const userver = ureq.id;
  await ureq.ack();
  const vpd = await userver.verbs!.allocPd();
  const vcq = await userver.verbs!.createCq(8);
  const vqp = await userver.createQp(vpd, { send_cq: vcq, recv_cq: vcq, qp_type: IBV_QPT_UD, cap });
  const vmr = await vpd.regMr(256, IBV_ACCESS_LOCAL_WRITE);
  await vqp.postRecv({ wr_id: 1, sg_list: [vmr.sge()] });
  await userver.accept({ private_data: bytes("udp welcome") });
  const est = await expectEvent(cch, RDMA_CM_EVENT_ESTABLISHED);
  const ud = est.param.ud!;
  await est.ack();
  const ah = await upd.createAh(ud.ah_attr);
  const umr = await upd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
  await umr.write(0, "datagram");
  await uqp.postSend({
    wr_id: 2,
    opcode: IBV_WR_SEND,
    send_flags: IBV_SEND_SIGNALED,
    sg_list: [umr.sge(0, 8)],
    ud: { ah, remote_qpn: ud.qp_num, remote_qkey: ud.qkey },
  });
  await ucq.pollWait(1, 1000);
  await vcq.pollWait(1, 1000);
  await vmr.read(40, 8);
  await ah.destroy();
  await uclient.destroyQp();
  await userver.destroyQp();
  await uclient.destroy();
  await userver.destroy();
  await ulistener.destroy();
  await sch.destroy();
  await cch.destroy();
}
