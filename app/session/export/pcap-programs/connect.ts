/**
 * Two RC QPs on different devices (a on rxe0, b on rxe1) connected to each other, so their
 * packets cross the lab's veth pair where tcpdump can see them (same-device traffic is looped
 * inside rxe and never reaches the veth). Shared by the programs the pcap comparison runs.
 */
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_READ,
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
} from "../../learner.js";
import type { Verbs, VerbsCq as Cq, VerbsMr as Mr, VerbsQp as Qp } from "../../verbs-api.js";

export interface Pair {
  a: Qp;
  b: Qp;
  cqA: Cq;
  cqB: Cq;
  mrA: Mr;
  mrB: Mr;
}

/**
 * Opens rxe0 and rxe1, and connects QP a (rxe0) with QP b (rxe1) over GID `gidIndex`
 * (0: the link-local IPv6 GID, so IPv6 on the wire; 1: the IPv4-mapped one, so IPv4).
 * `minRnrTimer` is b's (and a's) min_rnr_timer, `rnrRetry` a's and b's rnr_retry, `timeout`
 * both sides' local ACK timeout (default 14: 67 ms).
 */
export async function connectPair(
  verbs: Verbs,
  opts: { gidIndex: number; minRnrTimer?: number; rnrRetry?: number; timeout?: number },
): Promise<Pair> {
  const access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const side = async (name: string) => {
    const ctx = await verbs.openDevice(name);
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(16);
    const mr = await pd.regMr(8192, access);
    const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    const gid = await ctx.queryGid(1, opts.gidIndex);
    return { cq, mr, qp, gid };
  };
  const x = await side("rxe0");
  const y = await side("rxe1");
  for (const [me, peer] of [
    [x, y],
    [y, x],
  ] as const) {
    await me.qp.modify(
      { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: access },
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
    );
    await me.qp.modify(
      {
        qp_state: IBV_QPS_RTR,
        path_mtu: IBV_MTU_1024,
        dest_qp_num: peer.qp.qp_num,
        rq_psn: 100,
        max_dest_rd_atomic: 1,
        min_rnr_timer: opts.minRnrTimer ?? 12,
        ah_attr: { is_global: 1, port_num: 1, grh: { dgid: peer.gid, sgid_index: opts.gidIndex, hop_limit: 64 } },
      },
      IBV_QP_STATE |
        IBV_QP_AV |
        IBV_QP_PATH_MTU |
        IBV_QP_DEST_QPN |
        IBV_QP_RQ_PSN |
        IBV_QP_MAX_DEST_RD_ATOMIC |
        IBV_QP_MIN_RNR_TIMER,
    );
    await me.qp.modify(
      {
        qp_state: IBV_QPS_RTS,
        timeout: opts.timeout ?? 14,
        retry_cnt: 7,
        rnr_retry: opts.rnrRetry ?? 7,
        sq_psn: 100,
        max_rd_atomic: 1,
      },
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
    );
  }
  return { a: x.qp, b: y.qp, cqA: x.cq, cqB: y.cq, mrA: x.mr, mrB: y.mr };
}
