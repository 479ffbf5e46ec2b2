/** A quick end-to-end check of the native backend in the lab VM: `npx tsx native/tools/smoke.ts`. */
import * as v from "../../verbs/constants.js";
import { loadNativeBackend, rdmaResShowQp } from "../index.js";

const r = loadNativeBackend();
if (!("backend" in r)) throw new Error(r.unavailable);
const b = r.backend;
console.log("devices", b.getDeviceList());
const ctx = b.openDevice("rxe0");
console.log("port", ctx.queryPort(1).state, "gids", ctx.queryGidTable());
const gid = ctx.queryGidTable()[0];
const pd = ctx.allocPd();
const ch = ctx.createCompChannel();
const cq = ctx.createCq(10, { channel: ch, cq_context: "ctx!" });
console.log("cqe", cq.cqe);
const mr = pd.regMr(4096, v.IBV_ACCESS_LOCAL_WRITE | v.IBV_ACCESS_REMOTE_WRITE | v.IBV_ACCESS_REMOTE_READ);
console.log("mr", mr.lkey.toString(16), mr.rkey.toString(16), mr.addr.toString(16), mr.length);
const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
const a = pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: v.IBV_QPT_RC, sq_sig_all: 1 });
const bq = pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: v.IBV_QPT_RC, sq_sig_all: 1 });
console.log("qpns", a.qp_num, bq.qp_num, a.cap);
for (const [q, peer] of [
  [a, bq],
  [bq, a],
] as const) {
  q.modify(
    { qp_state: v.IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: 7 },
    v.IBV_QP_STATE | v.IBV_QP_PKEY_INDEX | v.IBV_QP_PORT | v.IBV_QP_ACCESS_FLAGS,
  );
  q.modify(
    {
      qp_state: v.IBV_QPS_RTR,
      path_mtu: v.IBV_MTU_1024,
      dest_qp_num: peer.qp_num,
      rq_psn: 0,
      max_dest_rd_atomic: 1,
      min_rnr_timer: 12,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid: gid.gid, sgid_index: gid.gid_index, hop_limit: 64 } },
    },
    v.IBV_QP_STATE |
      v.IBV_QP_AV |
      v.IBV_QP_PATH_MTU |
      v.IBV_QP_DEST_QPN |
      v.IBV_QP_RQ_PSN |
      v.IBV_QP_MAX_DEST_RD_ATOMIC |
      v.IBV_QP_MIN_RNR_TIMER,
  );
}
try {
  a.modify({ qp_state: v.IBV_QPS_RTS }, v.IBV_QP_STATE);
} catch (e) {
  console.log("expected EINVAL with reason:", e);
}
for (const q of [a, bq]) {
  q.modify(
    { qp_state: v.IBV_QPS_RTS, sq_psn: 0, timeout: 14, retry_cnt: 7, rnr_retry: 7, max_rd_atomic: 1 },
    v.IBV_QP_STATE |
      v.IBV_QP_TIMEOUT |
      v.IBV_QP_RETRY_CNT |
      v.IBV_QP_RNR_RETRY |
      v.IBV_QP_SQ_PSN |
      v.IBV_QP_MAX_QP_RD_ATOMIC,
  );
}
console.log("query", a.query().attr);
mr.bytes.set([1, 2, 3, 4], 0);
bq.postRecv({ wr_id: 7, sg_list: [mr.sge(2048, 64)] });
cq.reqNotify();
const ev = ch.getCqEvent(2000);
a.postSend({ wr_id: 0x1_0000_0001, opcode: v.IBV_WR_SEND, sg_list: [mr.sge(0, 4)] });
const t0 = b.now();
console.log("event cq", (await ev) === cq, (b.now() - t0).toFixed(2), "ms");
cq.ackEvents(1);
const wcs = await cq.pollWait(2, 1000);
console.log("wcs", wcs, mr.bytes.slice(2048, 2052));
console.log("rdma res", await rdmaResShowQp());
console.log("counters", ctx.queryCounters());
a.modify({ qp_state: v.IBV_QPS_SQD }, v.IBV_QP_STATE);
console.log("async", await ctx.getAsyncEvent(1000));
try {
  pd.dealloc();
} catch (e) {
  console.log("expected EBUSY:", e);
}
ctx.close();
try {
  a.postSend({ opcode: v.IBV_WR_SEND });
} catch (e) {
  console.log("after close:", e);
}
console.log("SMOKE OK");
