import type { Verbs, VerbsQp } from "verbslab";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_QPS_INIT,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_UD,
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_QKEY,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
  IBV_SEND_SIGNALED,
  IBV_WR_SEND,
} from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(16);
  const cap = { max_send_wr: 8, max_recv_wr: 8, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_UD });
  const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_UD });
  const QKEY = 0x11111111;
  await udReady(a, QKEY);
  await udReady(b, QKEY);
  const GRH = 40;
  const text = "datagram";
  const src = await pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
  const dst = await pd.regMr(256, IBV_ACCESS_LOCAL_WRITE);
  await src.write(0, text);
  for (const wr_id of [20, 21]) await b.postRecv({ wr_id, sg_list: [dst.sge(0, GRH + text.length)] });
  const ah = await pd.createAh({ is_global: 1, port_num: 1, grh: { dgid: gid, sgid_index: 0, hop_limit: 64 } });
  const send = async (wr_id: number, remote_qkey: number) => {
    await a.postSend({
      wr_id,
      opcode: IBV_WR_SEND,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [src.sge(0, text.length)],
      ud: { ah, remote_qpn: a.qp_num, remote_qkey }, // The mistake: the sender's own QP number
    });
  };

  // The first datagram carries the wrong Q_Key.
  await send(1, 0x22222222);
  await send(2, QKEY);
  const wcs = await cq.pollWait(4, 300);
  for (const wc of wcs) await verbs.log("wc", wc);
  await verbs.log("received", wcs.filter((wc) => wc.qp_num === b.qp_num).length);
}

/** A UD QP needs no peer: RESET → INIT (port, P_Key, Q_Key) → RTR (nothing) → RTS (sq_psn). */
async function udReady(qp: VerbsQp, qkey: number) {
  await qp.modify(
    { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qkey },
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
  );
  await qp.modify({ qp_state: IBV_QPS_RTR }, IBV_QP_STATE);
  await qp.modify({ qp_state: IBV_QPS_RTS, sq_psn: 0 }, IBV_QP_STATE | IBV_QP_SQ_PSN);
}
