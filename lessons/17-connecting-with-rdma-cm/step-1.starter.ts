import type { Verbs, VerbsCmChannel, VerbsCmEvent } from "verbslab";
import {
  IBV_QPT_RC,
  RDMA_CM_EVENT_ADDR_RESOLVED,
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_ROUTE_RESOLVED,
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
  await client.resolveRoute(2000);
  await (await expectEvent(verbs, clientCh, RDMA_CM_EVENT_ROUTE_RESOLVED)).ack();

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
  // TODO: on conn.verbs (librdmacm's context for rxe1) allocate a PD and a CQ, create the
  // server's QP with conn.createQp, register a 64-byte MR and post one receive into it, then
  // conn.accept({ responder_resources: 1, initiator_depth: 1, rnr_retry_count: 7 }).
  // TODO: wait for RDMA_CM_EVENT_ESTABLISHED on clientCh, then on serverCh (ack both).
  // TODO: send "hello over rdma_cm" (18 bytes, signaled) from the client's QP, poll both CQs
  // and read the server's MR back.
  void conn;
  void cqp;
}
