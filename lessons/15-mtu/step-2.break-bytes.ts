import type { Verbs, VerbsContext, VerbsQp } from "verbslab";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_QPS_INIT,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_RC,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_AV,
  IBV_QP_DEST_QPN,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_PATH_MTU,
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_RETRY_CNT,
  IBV_QP_RNR_RETRY,
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
  IBV_QP_TIMEOUT,
  IBV_SEND_SIGNALED,
  IBV_WR_SEND,
} from "verbslab";

export default async function main(verbs: Verbs) {
  // Someone set jumbo frames on one host only: rxe0's veth at 9000, rxe1's left at 1500.
  await verbs.lab.setLink({ mtu: { rxe0: 9000, rxe1: 1500 } });
  try {
    const a = await openSide(verbs, "rxe0");
    const b = await openSide(verbs, "rxe1");
    // The mistake: the netdev MTU in bytes, where ibv_modify_qp wants an IBV_MTU_* value.
    const link = await verbs.lab.getLink();
    const path_mtu = Math.min(link.mtu.rxe0, link.mtu.rxe1);
    void pathMtu;
    await verbs.log("path_mtu", path_mtu);
    await connect(a.qp, b.qp.qp_num, b.gid, path_mtu);
    await connect(b.qp, a.qp.qp_num, a.gid, path_mtu);

    // 8 KiB from rxe1 to rxe0, then a 64-byte answer back.
    await a.qp.postRecv({ wr_id: 1, sg_list: [a.mr.sge(0, 8192)] });
    await b.qp.postRecv({ wr_id: 2, sg_list: [b.mr.sge(0, 64)] });
    await b.mr.write(0, "8 KiB from rxe1");
    await b.qp.postSend({ wr_id: 3, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [b.mr.sge(0, 8192)] });
    await b.cq.pollWait(1, 5000);
    for (const wc of await a.cq.pollWait(1, 5000)) await verbs.log("rxe0_got", wc);
    await a.qp.postSend({ wr_id: 4, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 64)] });
    await a.cq.pollWait(1, 5000);
    for (const wc of await b.cq.pollWait(1, 5000)) await verbs.log("rxe1_got", wc);
  } finally {
    await verbs.lab.clearLink();
  }
}

/** The path MTU both ends can carry: the smaller of the two ports' active_mtu (IBV_MTU_* values). */
async function pathMtu(a: VerbsContext, b: VerbsContext): Promise<number> {
  const pa = await a.queryPort(1);
  const pb = await b.queryPort(1);
  return Math.min(pa.active_mtu, pb.active_mtu);
}

/** One side: its device, a CQ, an RC QP and an 8 KiB buffer. */
async function openSide(verbs: Verbs, name: string) {
  const ctx = await verbs.openDevice(name);
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(16);
  const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const mr = await pd.regMr(8192, IBV_ACCESS_LOCAL_WRITE);
  return { ctx, gid, cq, qp, mr };
}

/** RESET → INIT → RTR (with `path_mtu`) → RTS toward the peer. */
async function connect(qp: VerbsQp, remoteQpn: number, dgid: string, path_mtu: number) {
  await qp.modify(
    { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: 0 },
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
  );
  await qp.modify(
    {
      qp_state: IBV_QPS_RTR,
      path_mtu,
      dest_qp_num: remoteQpn,
      rq_psn: 0,
      max_dest_rd_atomic: 1,
      min_rnr_timer: 12,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid, sgid_index: 0, hop_limit: 1 } },
    },
    IBV_QP_STATE |
      IBV_QP_AV |
      IBV_QP_PATH_MTU |
      IBV_QP_DEST_QPN |
      IBV_QP_RQ_PSN |
      IBV_QP_MAX_DEST_RD_ATOMIC |
      IBV_QP_MIN_RNR_TIMER,
  );
  await qp.modify(
    { qp_state: IBV_QPS_RTS, timeout: 14, retry_cnt: 7, rnr_retry: 7, sq_psn: 0, max_rd_atomic: 1 },
    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
  );
}
