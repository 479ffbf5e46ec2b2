import type { Verbs, VerbsQp } from "verbslab";
import {
  IBV_MTU_4096,
  IBV_QPS_INIT,
  IBV_QPS_RTR,
  IBV_QPT_RC,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_AV,
  IBV_QP_DEST_QPN,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_PATH_MTU,
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_RQ_PSN,
  IBV_QP_STATE,
} from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(16);
  const cap = { max_send_wr: 8, max_recv_wr: 8, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  for (const qp of [a, b]) {
    await qp.modify(
      { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: 0 },
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
    );
  }

  await toRtr(a, b.qp_num, gid, 0);
  await toRtr(b, a.qp_num, gid, 0);
  const q = await a.query();
  await verbs.log("a.qp_state", q.attr.qp_state);
  await verbs.log("a.max_dest_rd_atomic", q.attr.max_dest_rd_atomic);
  await verbs.log("a.hop_limit", q.attr.ah_attr.grh.hop_limit);
}

/** INIT → RTR: where to send (AV, dest QPN) and what to expect (rq_psn). */
async function toRtr(qp: VerbsQp, remoteQpn: number, gid: string, rq_psn: number) {
  await qp.modify(
    {
      qp_state: IBV_QPS_RTR,
      // The mistake: the largest MTU, not the port's active_mtu (1024 on a 1500-byte netdev).
      path_mtu: IBV_MTU_4096,
      dest_qp_num: remoteQpn,
      rq_psn,
      max_dest_rd_atomic: 3,
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
}
