import type { Verbs, VerbsQp } from "verbslab";
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
} from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(16);
  const cap = { max_send_wr: 16, max_recv_wr: 16, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  // b lets its peer write into its memory: REMOTE_WRITE in the QP's access flags...
  await connect(a, b.qp_num, gid, 0);
  await connect(b, a.qp_num, gid, IBV_ACCESS_REMOTE_WRITE);

  const src = await pd.regMr(4096, IBV_ACCESS_LOCAL_WRITE);
  // ...and in the MR's (REMOTE_WRITE requires LOCAL_WRITE too).
  const dst = await pd.regMr(4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  await src.write(0, "written without the receiver's help");

  // b posts nothing. a needs only dst's address and rkey (exchanged out of band in real programs).
  const rounds = 10;
  const pkts0 = (await ctx.queryCounters()).sent_pkts ?? 0;
  const t0 = await verbs.now();
  for (let i = 0; i < rounds; i++) {
    await a.postSend({
      wr_id: i,
      opcode: IBV_WR_RDMA_WRITE,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [src.sge()],
      rdma: { remote_addr: dst.addr, rkey: dst.rkey },
    });
    await cq.pollWait(1, 1000);
  }
  const t1 = await verbs.now();
  await verbs.log("us_per_write", ((t1 - t0) * 1000) / rounds);
  // What every backend counts exactly: the packets the adapter built per write (both QPs are on
  // rxe0, so b's ACK counts too), and the completions b's CPU got (the CQ is shared: b's are by qp_num).
  await verbs.log("packets_per_write", (((await ctx.queryCounters()).sent_pkts ?? 0) - pkts0) / rounds);
  await verbs.log("b_completions", (await cq.poll(16)).filter((wc) => wc.qp_num === b.qp_num).length);
  const landed = await dst.read(0, 64);
  await verbs.log("dst", new TextDecoder().decode(landed).replace(/\0+$/, ""));
}

/** RESET → INIT → RTR → RTS with ibv_rc_pingpong's values. */
async function connect(qp: VerbsQp, remoteQpn: number, gid: string, access: number) {
  await qp.modify(
    { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: access },
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
  );
  await qp.modify(
    {
      qp_state: IBV_QPS_RTR,
      path_mtu: IBV_MTU_1024,
      dest_qp_num: remoteQpn,
      rq_psn: 0,
      max_dest_rd_atomic: 1,
      min_rnr_timer: 12,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid: gid, sgid_index: 0, hop_limit: 1 } },
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
