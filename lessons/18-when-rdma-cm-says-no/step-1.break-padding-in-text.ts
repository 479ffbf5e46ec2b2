import type { Verbs, VerbsCmChannel, VerbsCmEvent } from "verbslab";
import {
  IBV_QPT_RC,
  RDMA_CM_EVENT_ADDR_RESOLVED,
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_REJECTED,
  RDMA_CM_EVENT_ROUTE_RESOLVED,
  RDMA_PS_TCP,
  rdmaEventStr,
} from "verbslab";

const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
const PORT = 7471;

async function expectEvent(ch: VerbsCmChannel, type: number): Promise<VerbsCmEvent> {
  const e = await ch.getEvent(2000);
  if (!e) throw new Error(`no event: expected ${rdmaEventStr(type)}`);
  if (e.event !== type)
    throw new Error(`got ${rdmaEventStr(e.event)} (status ${e.status}), expected ${rdmaEventStr(type)}`);
  return e;
}

export default async function main(verbs: Verbs) {
  // A server that is full: it turns every request down, saying why in the REJ's private data.
  const serverCh = await verbs.cm.createEventChannel();
  const listener = await serverCh.createId(RDMA_PS_TCP);
  await listener.bindAddr({ addr: "10.77.0.2", port: PORT });
  await listener.listen(8);

  const clientCh = await verbs.cm.createEventChannel();
  const client = await clientCh.createId(RDMA_PS_TCP);
  await client.resolveAddr({ addr: "10.77.0.1", port: 0 }, { addr: "10.77.0.2", port: PORT }, 2000);
  await (await expectEvent(clientCh, RDMA_CM_EVENT_ADDR_RESOLVED)).ack();
  await client.resolveRoute(2000);
  await (await expectEvent(clientCh, RDMA_CM_EVENT_ROUTE_RESOLVED)).ack();
  const pd = await client.verbs!.allocPd();
  const cq = await client.verbs!.createCq(8);
  await client.createQp(pd, { send_cq: cq, recv_cq: cq, qp_type: IBV_QPT_RC, cap });
  await client.connect({ responder_resources: 1, initiator_depth: 1, retry_count: 7, rnr_retry_count: 7 });

  const req = await expectEvent(serverCh, RDMA_CM_EVENT_CONNECT_REQUEST);
  await req.ack();
  await req.id.reject(new TextEncoder().encode("busy, try later"));
  await req.id.destroy();

  // The client learns why: the REJ's reason in `status`, the server's words in the private data.
  const rej = await expectEvent(clientCh, RDMA_CM_EVENT_REJECTED);
  await verbs.log("status", rej.status);
  const data = rej.param.conn!.private_data;
  await verbs.log("private_data_len", data.length);
  // The mistake: the whole private-data field as text, zero padding and all.
  await verbs.log("reason", new TextDecoder().decode(data));
  await rej.ack();

  await client.destroyQp();
  await client.destroy();
  await listener.destroy();
}
