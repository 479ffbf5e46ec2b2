import type { Verbs, VerbsQp, VerbsMr, QpAttr } from "verbslab";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_ATOMIC,
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
  IBV_WR_ATOMIC_CMP_AND_SWP,
} from "verbslab";

export default async function main(verbs: Verbs) {
  // Two RC QPs on rxe0 connected to each other (lesson 5 walks through connect()).
  const ctx = await verbs.openDevice("rxe0");
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(32);
  const cap = { max_send_wr: 16, max_recv_wr: 16, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  await connect(a, b.qp_num, gid, 0);
  await connect(b, a.qp_num, gid, IBV_ACCESS_REMOTE_ATOMIC);
  // Atomics work on 8 aligned bytes; the original remote value lands in the local buffer.
  const result = await pd.regMr(8, IBV_ACCESS_LOCAL_WRITE);
  const word = await pd.regMr(8, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
  const u64 = async (mr: VerbsMr) => new DataView((await mr.read(0, 8)).buffer).getBigUint64(0, true);

  /** CMP_SWP: if the remote word equals `compare`, replace it with `swap`; always return the old value. */
  const cas = async (compare: bigint, swap: bigint) => {
    await a.postSend({
      wr_id: 1,
      opcode: IBV_WR_ATOMIC_CMP_AND_SWP,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [result.sge(0, 8)],
      // The mistake: compare and swap passed the other way round.
      atomic: { remote_addr: word.addr, rkey: word.rkey, compare_add: swap, swap: compare },
    });
    await cq.pollWait(1, 1000);
    return u64(result);
  };

  const acquire = await cas(0n, 1n); // 0 came back: the lock was free and is ours now
  await verbs.log("acquire", Number(acquire));
  const second = await cas(0n, 1n); // 1 came back: someone (we) holds it, nothing changed
  await verbs.log("second_try", Number(second));
  const release = await cas(1n, 0n);
  await verbs.log("release", Number(release));
  await verbs.log("lock_word", Number(await u64(word)));
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
