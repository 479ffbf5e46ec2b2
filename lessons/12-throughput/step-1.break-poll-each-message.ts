import type { Verbs, VerbsQp, QpAttr } from "verbslab";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_MTU_1024,
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
  IBV_WR_RDMA_WRITE,
  readCounter,
} from "verbslab";

export default async function main(verbs: Verbs) {
  // An RC QP on rxe0 connected to one on rxe1 (lesson 5 walks through connect()): the WRITEs
  // cross the link between the two devices, so they take time on either backend.
  const ctx = await verbs.openDevice("rxe0");
  const peer = await verbs.openDevice("rxe1");
  const gid = await ctx.queryGid(1, 0);
  const peerGid = await peer.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const peerPd = await peer.allocPd();
  const cq = await ctx.createCq(256);
  const peerCq = await peer.createCq(256);
  const cap = { max_send_wr: 64, max_recv_wr: 64, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 64 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const b = await peerPd.createQp({ send_cq: peerCq, recv_cq: peerCq, cap, qp_type: IBV_QPT_RC });
  await connect(a, b.qp_num, peerGid, 0);
  await connect(b, a.qp_num, gid, IBV_ACCESS_REMOTE_WRITE);
  const src = await pd.regMr(65536, IBV_ACCESS_LOCAL_WRITE);
  const dst = await peerPd.regMr(65536, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);

  const iters = 16;
  const sweep: { bytes: number; ms: number; MBps: number | null; packets_per_msg: number }[] = [];
  for (const bytes of [64, 256, 1024, 4096, 16384, 65536]) {
    const pkts0 = readCounter(await ctx.queryCounters(), ctx.device, "sent_pkts") ?? 0;
    const t0 = await verbs.now();
    for (let i = 0; i < iters; i++) {
      await a.postSend({
        wr_id: i,
        opcode: IBV_WR_RDMA_WRITE,
        send_flags: IBV_SEND_SIGNALED,
        sg_list: [src.sge(0, bytes)],
        rdma: { remote_addr: dst.addr, rkey: dst.rkey },
      });
      // The mistake: waiting for each WRITE before posting the next.
      await cq.pollWait(1, 5000);
    }
    const ms = (await verbs.now()) - t0;
    const pkts = (readCounter(await ctx.queryCounters(), ctx.device, "sent_pkts") ?? 0) - pkts0;
    sweep.push({
      bytes,
      ms,
      MBps: ms > 0 ? Math.round((bytes * iters) / 1e2 / ms) / 10 : null, // one decimal: 64 B moves well under 1 MB/s
      packets_per_msg: Math.round((pkts / iters) * 10) / 10,
    });
  }
  // The app plots "sweep": bytes against MB/s and packets per message.
  await verbs.log("sweep", sweep);
  await verbs.log("sizes", sweep.length);
}

/** RESET → INIT → RTR → RTS, one transition at a time, with ibv_rc_pingpong's values unless `tune` says otherwise. */
async function connect(qp: VerbsQp, remoteQpn: number, gid: string, access: number, tune: Partial<QpAttr> = {}) {
  await qp.modify(
    { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: access },
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
  );
  await qp.modify(
    {
      path_mtu: IBV_MTU_1024,
      dest_qp_num: remoteQpn,
      rq_psn: 0,
      max_dest_rd_atomic: 1,
      min_rnr_timer: 12,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid: gid, sgid_index: 0, hop_limit: 1 } },
      ...tune,
      qp_state: IBV_QPS_RTR,
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
    { timeout: 14, retry_cnt: 7, rnr_retry: 7, sq_psn: 0, max_rd_atomic: 1, ...tune, qp_state: IBV_QPS_RTS },
    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
  );
}
