/**
 * Mistakes and what they cost: a modify missing an attribute, an address without a GRH, an
 * RDMA WRITE to memory registered without remote access (both QPs end in ERR, the posted
 * receive is flushed), and the way back through RESET.
 * Run it: verbslab run app/cli/examples/when-it-breaks.ts
 */
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_MTU_1024,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
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
  type Verbs,
  type VerbsQp,
} from "verbslab";

const RTR_MASK =
  IBV_QP_STATE |
  IBV_QP_AV |
  IBV_QP_PATH_MTU |
  IBV_QP_DEST_QPN |
  IBV_QP_RQ_PSN |
  IBV_QP_MAX_DEST_RD_ATOMIC |
  IBV_QP_MIN_RNR_TIMER;

async function tryIt(verbs: Verbs, what: string, call: () => Promise<unknown>) {
  try {
    await call();
    await verbs.log(`${what}: ok`);
  } catch (e) {
    await verbs.log(`${what}: ${(e as { code?: string }).code ?? e}`);
  }
}

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(8);
  // Local access only: no rkey a peer could use.
  const local = await pd.regMr(256, IBV_ACCESS_LOCAL_WRITE);
  const cap = { max_send_wr: 2, max_recv_wr: 2, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const init = async (qp: VerbsQp) =>
    qp.modify(
      {
        qp_state: IBV_QPS_INIT,
        pkey_index: 0,
        port_num: 1,
        qp_access_flags: IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
      },
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
    );
  const rtr = (peer: VerbsQp, is_global = 1) => ({
    qp_state: IBV_QPS_RTR,
    path_mtu: IBV_MTU_1024,
    dest_qp_num: peer.qp_num,
    rq_psn: 0,
    max_dest_rd_atomic: 1,
    min_rnr_timer: 12,
    ah_attr: { is_global, port_num: 1, grh: { dgid: gid, sgid_index: 0, hop_limit: 1 } },
  });
  const rts = async (qp: VerbsQp) =>
    qp.modify(
      { qp_state: IBV_QPS_RTS, timeout: 14, retry_cnt: 7, rnr_retry: 7, sq_psn: 0, max_rd_atomic: 1 },
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
    );

  await init(a);
  await tryIt(verbs, "RTR without IBV_QP_DEST_QPN", () => a.modify(rtr(b), RTR_MASK & ~IBV_QP_DEST_QPN));
  await tryIt(verbs, "RTR with is_global 0", () => a.modify(rtr(b, 0), RTR_MASK));
  await a.modify(rtr(b), RTR_MASK);
  await rts(a);
  await init(b);
  await b.modify(rtr(a), RTR_MASK);
  await rts(b);

  await b.postRecv({ wr_id: 20, sg_list: [local.sge(128, 64)] });
  await a.postSend({
    wr_id: 10,
    opcode: IBV_WR_RDMA_WRITE,
    send_flags: IBV_SEND_SIGNALED,
    sg_list: [local.sge(0, 32)],
    rdma: { remote_addr: local.addr + 64, rkey: local.rkey },
  });
  const wcs = await cq.pollWait(2, 1000);
  await verbs.log(`completions: ${wcs.map((w) => `wr ${w.wr_id} status ${w.status}`).join(", ")}`);
  await a.query();

  // The way back: ERR → RESET → INIT.
  await a.modify({ qp_state: IBV_QPS_RESET }, IBV_QP_STATE);
  await init(a);
}
