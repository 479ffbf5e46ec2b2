/**
 * Multicast through rdma_cm, for the C export's tests (c-cm.test.ts on any machine,
 * c-cm-rxe.test.ts on real rxe): a UD id bound to rxe1 joins group 239.7.0.1 and gets
 * MULTICAST_JOIN (librdmacm attached its QP); a UD id on rxe0 resolves the group's address and
 * sends one datagram to the AH that event carried, with remote_qpn 0xffffff; rxe1 receives it
 * behind its 40-byte GRH; then it leaves the group and everything is destroyed.
 */
import {
  IB_MULTICAST_QPN,
  IBV_ACCESS_LOCAL_WRITE,
  IBV_QPT_UD,
  IBV_SEND_SIGNALED,
  IBV_WR_SEND,
  RDMA_CM_EVENT_ADDR_RESOLVED,
  RDMA_CM_EVENT_MULTICAST_JOIN,
  RDMA_PS_UDP,
  rdmaEventStr,
} from "../../learner.js";
import type { Verbs, VerbsCmChannel, VerbsCmEvent } from "../../learner.js";

const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
const group = { addr: "239.7.0.1", port: 0 };

async function expectEvent(ch: VerbsCmChannel, type: number): Promise<VerbsCmEvent> {
  const e = await ch.getEvent(2000);
  if (!e) throw new Error(`no event: expected ${rdmaEventStr(type)}`);
  if (e.event !== type)
    throw new Error(`got ${rdmaEventStr(e.event)} (status ${e.status}), expected ${rdmaEventStr(type)}`);
  return e;
}

export default async function main(verbs: Verbs) {
  const mch = await verbs.cm.createEventChannel();
  const sch = await verbs.cm.createEventChannel();

  // The member, on rxe1: its QP must exist before the join, which attaches it.
  const member = await mch.createId(RDMA_PS_UDP);
  await member.bindAddr({ addr: "10.77.0.2", port: 0 });
  const mpd = await member.verbs!.allocPd();
  const mcq = await member.verbs!.createCq(8);
  const mqp = await member.createQp(mpd, { send_cq: mcq, recv_cq: mcq, qp_type: IBV_QPT_UD, cap });
  const mmr = await mpd.regMr(256, IBV_ACCESS_LOCAL_WRITE);
  await mqp.postRecv({ wr_id: 1, sg_list: [mmr.sge()] });
  await member.joinMulticast(group);
  const joined = await expectEvent(mch, RDMA_CM_EVENT_MULTICAST_JOIN);
  const ud = joined.param.ud!;
  await joined.ack();

  // The sender, on rxe0: no join, only an address resolved to the group and an AH to it.
  const sender = await sch.createId(RDMA_PS_UDP);
  await sender.resolveAddr({ addr: "10.77.0.1", port: 0 }, group, 2000);
  await (await expectEvent(sch, RDMA_CM_EVENT_ADDR_RESOLVED)).ack();
  const spd = await sender.verbs!.allocPd();
  const scq = await sender.verbs!.createCq(8);
  const sqp = await sender.createQp(spd, { send_cq: scq, recv_cq: scq, qp_type: IBV_QPT_UD, cap });
  const ah = await spd.createAh(ud.ah_attr);
  const smr = await spd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
  await smr.write(0, "to the group");
  await sqp.postSend({
    wr_id: 2,
    opcode: IBV_WR_SEND,
    send_flags: IBV_SEND_SIGNALED,
    sg_list: [smr.sge(0, 12)],
    ud: { ah, remote_qpn: IB_MULTICAST_QPN, remote_qkey: ud.qkey },
  });
  await scq.pollWait(1, 1000);
  await mcq.pollWait(1, 1000);
  await mmr.read(40, 12);

  await member.leaveMulticast(group);
  await ah.destroy();
  await sender.destroyQp();
  await member.destroyQp();
  await sender.destroy();
  await member.destroy();
  await smr.dereg();
  await mmr.dereg();
  await scq.destroy();
  await mcq.destroy();
  await spd.dealloc();
  await mpd.dealloc();
  await mch.destroy();
  await sch.destroy();
}
