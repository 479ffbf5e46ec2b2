import type { Verbs } from "verbslab";
import { IBV_QPS_INIT, IBV_QPT_RC, IBV_QP_ACCESS_FLAGS, IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_STATE } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(16);
  const cap = { max_send_wr: 8, max_recv_wr: 8, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const fresh = await qp.query();
  await verbs.log("state_after_create", fresh.attr.qp_state);
  await verbs.log("path_mtu_after_create", fresh.attr.path_mtu);

  await qp.modify(
    { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: 0 },
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT, // The mistake: qp_access_flags 0 "needs no mask bit"
  );
  const init = await qp.query();
  await verbs.log("state_after_modify", init.attr.qp_state);
  await verbs.log("port_num", init.attr.port_num);
}
