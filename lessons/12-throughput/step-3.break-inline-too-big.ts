import type { Verbs, VerbsQp, QpAttr } from "verbslab";
import {
  IBV_ACCESS_LOCAL_WRITE,
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
  IBV_SEND_INLINE,
  IBV_SEND_SIGNALED,
  IBV_WR_SEND,
} from "verbslab";

export default async function main(verbs: Verbs) {
  // Two RC QPs on rxe0 connected to each other (lesson 5 walks through connect()).
  const ctx = await verbs.openDevice("rxe0");
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(256);
  const cap = { max_send_wr: 64, max_recv_wr: 64, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 64 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  await connect(a, b.qp_num, gid, 0);
  await connect(b, a.qp_num, gid, 0);
  const ring = await pd.regMr(32 * 64, IBV_ACCESS_LOCAL_WRITE);

  const recvs = Array.from({ length: 32 }, (_, i) => ({ wr_id: i, sg_list: [ring.sge(i * 64, 64)] }));
  await b.postRecv(recvs);

  // Small messages go inline: the payload is copied into the work request itself, so the buffer
  // needs no registration and the adapter skips one DMA read. sg_list names plain bytes here.
  const note = await pd.regMr(128, IBV_ACCESS_LOCAL_WRITE); // room for a longer message
  for (let i = 0; i < 32; i++) {
    await note.write(0, `msg ${i}`);
    await a.postSend({
      wr_id: 100 + i,
      opcode: IBV_WR_SEND,
      send_flags: IBV_SEND_SIGNALED | IBV_SEND_INLINE,
      sg_list: [note.sge(0, 100)], // The mistake: more than max_inline_data (64) bytes inline
    });
  }
  const wcs = await cq.pollWait(64, 1000);
  await verbs.log("recv_completions", wcs.filter((wc) => wc.qp_num === b.qp_num).length);
  const last = await ring.read(31 * 64, 6);
  await verbs.log("last", new TextDecoder().decode(last));
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
