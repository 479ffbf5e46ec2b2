import type { Verbs, VerbsCmChannel, VerbsCmEvent } from "verbslab";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_QPT_RC,
  IBV_SEND_SIGNALED,
  IBV_WR_SEND,
  RDMA_CM_EVENT_ADDR_RESOLVED,
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_ESTABLISHED,
  RDMA_PS_TCP,
  rdmaEventStr,
} from "verbslab";

const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
const PORT = 7471;

/** The next event on a channel, which must be `type`; logged, not yet acknowledged. */
async function expectEvent(verbs: Verbs, ch: VerbsCmChannel, type: number): Promise<VerbsCmEvent> {
  const e = await ch.getEvent(2000);
  if (!e) throw new Error(`no event: expected ${rdmaEventStr(type)}`);
  await verbs.log("event", rdmaEventStr(e.event), "status", e.status);
  if (e.event !== type) throw new Error(`got ${rdmaEventStr(e.event)}, expected ${rdmaEventStr(type)}`);
  return e;
}

export default async function main(verbs: Verbs) {
  // The server listens on rxe1's address; the client connects from rxe0's.
  const serverCh = await verbs.cm.createEventChannel();
  const listener = await serverCh.createId(RDMA_PS_TCP);
  await listener.bindAddr({ addr: "10.77.0.2", port: PORT });
  await listener.listen(8);

  const clientCh = await verbs.cm.createEventChannel();
  const client = await clientCh.createId(RDMA_PS_TCP);
  await client.resolveAddr({ addr: "10.77.0.1", port: 0 }, { addr: "10.77.0.2", port: PORT }, 2000);
  await (await expectEvent(verbs, clientCh, RDMA_CM_EVENT_ADDR_RESOLVED)).ack();
  // The mistake: straight from ADDR_RESOLVED to connect, without resolving the route.

  // The client's QP lives on librdmacm's context for rxe0: client.verbs.
  const cctx = client.verbs!;
  const cpd = await cctx.allocPd();
  const ccq = await cctx.createCq(8);
  const cqp = await client.createQp(cpd, { send_cq: ccq, recv_cq: ccq, qp_type: IBV_QPT_RC, cap });
  await client.connect({ responder_resources: 1, initiator_depth: 1, retry_count: 7, rnr_retry_count: 7 });

  // The server's side of the connection is a new id, carried by CONNECT_REQUEST.
  const req = await expectEvent(verbs, serverCh, RDMA_CM_EVENT_CONNECT_REQUEST);
  const conn = req.id;
  await req.ack();
  const sctx = conn.verbs!;
  const spd = await sctx.allocPd();
  const scq = await sctx.createCq(8);
  const sqp = await conn.createQp(spd, { send_cq: scq, recv_cq: scq, qp_type: IBV_QPT_RC, cap });
  const smr = await spd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
  await sqp.postRecv({ wr_id: 1, sg_list: [smr.sge()] });
  await conn.accept({ responder_resources: 1, initiator_depth: 1, rnr_retry_count: 7 });

  await (await expectEvent(verbs, clientCh, RDMA_CM_EVENT_ESTABLISHED)).ack();
  await (await expectEvent(verbs, serverCh, RDMA_CM_EVENT_ESTABLISHED)).ack();

  // An ordinary RC QP now: post and poll as in lesson 6.
  const cmr = await cpd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
  await cmr.write(0, "hello over rdma_cm");
  await cqp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [cmr.sge(0, 18)] });
  await ccq.pollWait(1, 1000);
  await scq.pollWait(1, 1000);
  await smr.read(0, 18);
}
