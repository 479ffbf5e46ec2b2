import type { Verbs, VerbsCmChannel, VerbsCmEvent } from "verbslab";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_QPT_UD,
  IBV_SEND_SIGNALED,
  IBV_WC_SUCCESS,
  IBV_WR_SEND,
  RDMA_CM_EVENT_ADDR_RESOLVED,
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_ESTABLISHED,
  RDMA_CM_EVENT_ROUTE_RESOLVED,
  RDMA_PS_UDP,
  rdmaEventStr,
} from "verbslab";

const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
const PORT = 7473;
/** Every UD receive starts with the 40-byte GRH; the payload follows it. */
const GRH = 40;
const PING = "ping over the CM";
const PONG = "pong";

/** The next event on a channel, which must be `type`; logged, not yet acknowledged. */
async function expectEvent(verbs: Verbs, ch: VerbsCmChannel, type: number): Promise<VerbsCmEvent> {
  const e = await ch.getEvent(2000);
  if (!e) throw new Error(`no event: expected ${rdmaEventStr(type)}`);
  await verbs.log("event", rdmaEventStr(e.event), "status", e.status);
  if (e.event !== type) throw new Error(`got ${rdmaEventStr(e.event)}, expected ${rdmaEventStr(type)}`);
  return e;
}

export default async function main(verbs: Verbs) {
  // The server listens on rxe1's address in the UDP port space; the client resolves it from rxe0.
  const serverCh = await verbs.cm.createEventChannel();
  const listener = await serverCh.createId(RDMA_PS_UDP);
  await listener.bindAddr({ addr: "10.77.0.2", port: PORT });
  await listener.listen(8);

  const clientCh = await verbs.cm.createEventChannel();
  const client = await clientCh.createId(RDMA_PS_UDP);
  await client.resolveAddr({ addr: "10.77.0.1", port: 0 }, { addr: "10.77.0.2", port: PORT }, 2000);
  await (await expectEvent(verbs, clientCh, RDMA_CM_EVENT_ADDR_RESOLVED)).ack();
  await client.resolveRoute(2000);
  await (await expectEvent(verbs, clientCh, RDMA_CM_EVENT_ROUTE_RESOLVED)).ack();

  // A UD QP from rdma_create_qp is in RTS at once, with Q_Key RDMA_UDP_QKEY.
  const cpd = await client.verbs!.allocPd();
  const ccq = await client.verbs!.createCq(8);
  const cqp = await client.createQp(cpd, { send_cq: ccq, recv_cq: ccq, qp_type: IBV_QPT_UD, cap });
  const crecv = await cpd.regMr(128, IBV_ACCESS_LOCAL_WRITE);
  const csend = await cpd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
  await cqp.postRecv({ wr_id: 1, sg_list: [crecv.sge(0, GRH + PONG.length)] });
  await client.connect({ private_data: new TextEncoder().encode("hello") });

  // The request arrives on a new id bound to rxe1; its QP answers for the service.
  const req = await expectEvent(verbs, serverCh, RDMA_CM_EVENT_CONNECT_REQUEST);
  const conn = req.id;
  await req.ack();
  const spd = await conn.verbs!.allocPd();
  const scq = await conn.verbs!.createCq(8);
  const sqp = await conn.createQp(spd, { send_cq: scq, recv_cq: scq, qp_type: IBV_QPT_UD, cap });
  const srecv = await spd.regMr(128, IBV_ACCESS_LOCAL_WRITE);
  const ssend = await spd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
  await sqp.postRecv({ wr_id: 2, sg_list: [srecv.sge(0, GRH + PING.length)] });
  await conn.accept();

  // ESTABLISHED tells the client how to reach the server's QP: ah_attr, qp_num, qkey.
  const est = await expectEvent(verbs, clientCh, RDMA_CM_EVENT_ESTABLISHED);
  const ud = est.param.ud!;
  await verbs.log("qkey", ud.qkey);
  await verbs.log("is_server_qp", ud.qp_num === sqp.qp_num);
  const ah = await cpd.createAh(ud.ah_attr);
  await est.ack();
  await csend.write(0, PING);
  await cqp.postSend({
    wr_id: 3,
    opcode: IBV_WR_SEND,
    send_flags: IBV_SEND_SIGNALED,
    sg_list: [csend.sge(0, PING.length)],
    // The mistake: lesson 11's Q_Key, not the one the event carries.
    ud: { ah, remote_qpn: ud.qp_num, remote_qkey: 0x11111111 },
  });
  await ccq.pollWait(1, 1000);

  // The server answers whoever sent the ping: its QPN is in the completion (src_qp), its
  // address is the request's peer, its Q_Key the same RDMA_UDP_QKEY.
  const [got] = await scq.pollWait(1, 1000);
  await srecv.read(0, GRH + PING.length);
  if (got?.status !== IBV_WC_SUCCESS) {
    // No ping to answer: what became of the server's QP?
    await verbs.log("server_qp_state", (await sqp.query()).attr.qp_state);
    return;
  }
  const back = await spd.createAh({
    is_global: 1,
    port_num: 1,
    grh: { dgid: `::ffff:${(await conn.getPeerAddr()).addr}`, sgid_index: 1, hop_limit: 64 },
  });
  await ssend.write(0, PONG);
  await sqp.postSend({
    wr_id: 4,
    opcode: IBV_WR_SEND,
    send_flags: IBV_SEND_SIGNALED,
    sg_list: [ssend.sge(0, PONG.length)],
    ud: { ah: back, remote_qpn: got.src_qp, remote_qkey: ud.qkey },
  });
  await scq.pollWait(1, 1000);
  await ccq.pollWait(1, 1000);
  await crecv.read(0, GRH + PONG.length);
}
