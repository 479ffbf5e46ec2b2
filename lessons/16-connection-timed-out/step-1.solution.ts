import type { Verbs, VerbsContext, VerbsCq, VerbsMr, VerbsQp } from "verbslab";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_MTU_1024,
  IBV_MTU_4096,
  IBV_PORT_ACTIVE,
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
  IBV_WC_SUCCESS,
  IBV_WR_SEND,
  readCounter,
} from "verbslab";

/** What each scene breaks, in order. Your checklist sees only the two sides, never this list. */
const INJECTED = [
  "none",
  "udp_4791_blocked",
  "mtu_mismatch",
  "wrong_dest_qp_num",
  "wrong_psn",
  "wrong_gid_index",
] as const;

/**
 * The checklist for "Connection timed out", cheapest and most common causes first. Returns the
 * first thing found wrong, or "none" when the link and both QPs are fine.
 */
async function diagnose(s: Scene): Promise<string> {
  const { a, b } = s;
  // 1. Both ports ACTIVE (ibv_devinfo: "state: PORT_ACTIVE").
  const pa = await a.ctx.queryPort(1);
  const pb = await b.ctx.queryPort(1);
  if (pa.state !== IBV_PORT_ACTIVE || pb.state !== IBV_PORT_ACTIVE) return "port_down";

  // 2. GIDs: each side's sgid_index is an entry of its own table, and its dgid is in the peer's.
  for (const [me, peer] of [
    [a, b],
    [b, a],
  ] as const) {
    const mine = await me.ctx.queryGidTable();
    const theirs = await peer.ctx.queryGidTable();
    if (!mine.some((g) => g.gid_index === me.plan.sgid_index)) return "wrong_gid_index";
    if (!theirs.some((g) => g.gid === me.plan.dgid)) return "wrong_gid_index";
  }

  // 3. Both QPs in RTS, pointing at each other, with matching PSNs (ibv_query_qp on both sides).
  const qa = (await a.qp.query()).attr;
  const qb = (await b.qp.query()).attr;
  if (qa.qp_state !== IBV_QPS_RTS || qb.qp_state !== IBV_QPS_RTS) return "qp_not_rts";
  if (qa.dest_qp_num !== b.qp.qp_num || qb.dest_qp_num !== a.qp.qp_num) return "wrong_dest_qp_num";
  if (qa.sq_psn !== qb.rq_psn || qb.sq_psn !== qa.rq_psn) return "wrong_psn";

  // 4. The path MTU fits both ports.
  const smaller = Math.min(pa.active_mtu, pb.active_mtu);
  if (qa.path_mtu > smaller || qb.path_mtu > smaller) return "mtu_mismatch";

  // 5. Everything on both hosts is right: send one small message. If it times out and the
  //    peer's device received nothing at all, something between the hosts drops RoCE (UDP 4791).
  const p = await s.probe();
  if (p.status === IBV_WC_SUCCESS) return "none";
  if (p.peerRcvdPkts === 0) return "udp_4791_blocked";
  return "unknown";
}

export default async function main(verbs: Verbs) {
  const rxe0 = await verbs.openDevice("rxe0");
  const rxe1 = await verbs.openDevice("rxe1");
  const found: string[] = [];
  for (const fault of INJECTED) {
    const scene = await stage(verbs, rxe0, rxe1, fault);
    try {
      found.push(await diagnose(scene));
    } finally {
      await verbs.lab.clearLink();
    }
    // What the checklist said about this scene (scene_1 … scene_6), beside what was injected.
    await verbs.log(`scene_${found.length}`, found[found.length - 1]);
    await verbs.log(`injected_${found.length}`, fault);
  }
  await verbs.log("found", found);
}

// ---- The lab bench: builds one scene with one fault. You do not need to change anything below. ----

/** What a side was told to connect with: its own GID index and the peer's address, QPN and PSNs. */
interface Plan {
  sgid_index: number;
  dgid: string;
  dest_qp_num: number;
  sq_psn: number;
  rq_psn: number;
  path_mtu: number;
}

interface Side {
  name: string;
  ctx: VerbsContext;
  qp: VerbsQp;
  cq: VerbsCq;
  mr: VerbsMr;
  plan: Plan;
}

interface Scene {
  a: Side;
  b: Side;
  /** One 64-byte SEND a → b: its completion status, and how many packets b's device received meanwhile. */
  probe(): Promise<{ status: number | "no_completion" | "not_rts"; peerRcvdPkts: number }>;
}

async function stage(verbs: Verbs, rxe0: VerbsContext, rxe1: VerbsContext, fault: string): Promise<Scene> {
  const a = await side(rxe0, "rxe0");
  const b = await side(rxe1, "rxe1");
  const gidA = await rxe0.queryGid(1, 0);
  const gidB = await rxe1.queryGid(1, 0);
  a.plan = {
    sgid_index: 0,
    dgid: gidB,
    dest_qp_num: b.qp.qp_num,
    sq_psn: 0x1000,
    rq_psn: 0x2000,
    path_mtu: IBV_MTU_1024,
  };
  b.plan = {
    sgid_index: 0,
    dgid: gidA,
    dest_qp_num: a.qp.qp_num,
    sq_psn: 0x2000,
    rq_psn: 0x1000,
    path_mtu: IBV_MTU_1024,
  };
  if (fault === "udp_4791_blocked") await verbs.lab.setLink({ blockRoceUdp: true });
  if (fault === "mtu_mismatch") {
    // Jumbo frames on one host only, and a path MTU taken from that host's port.
    await verbs.lab.setLink({ mtu: { rxe0: 9000, rxe1: 1500 } });
    a.plan.path_mtu = b.plan.path_mtu = IBV_MTU_4096;
  }
  // Above rxe's QP numbers (its pool ends at index 0x20000): no QP on rxe1 can have it.
  if (fault === "wrong_dest_qp_num") a.plan.dest_qp_num = b.qp.qp_num + 0x20000;
  if (fault === "wrong_psn") b.plan.rq_psn = 0x1100;
  if (fault === "wrong_gid_index") a.plan.sgid_index = 3;
  for (const s of [a, b]) {
    try {
      await connect(s);
    } catch (e) {
      await verbs.log(`${s.name} could not connect`, String(e));
    }
  }
  return {
    a,
    b,
    async probe() {
      const state = (await a.qp.query()).attr.qp_state;
      if (state !== IBV_QPS_RTS) return { status: "not_rts", peerRcvdPkts: 0 };
      const before = readCounter(await rxe1.queryCounters(), rxe1.device, "rcvd_pkts") ?? 0;
      await b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(0, 64)] });
      await a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 64)] });
      const [wc] = await a.cq.pollWait(1, 5000);
      await b.cq.pollWait(1, 100);
      const after = readCounter(await rxe1.queryCounters(), rxe1.device, "rcvd_pkts") ?? 0;
      return { status: wc ? wc.status : "no_completion", peerRcvdPkts: after - before };
    },
  };
}

async function side(ctx: VerbsContext, name: string): Promise<Side> {
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(8);
  const cap = { max_send_wr: 2, max_recv_wr: 2, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const mr = await pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
  return { name, ctx, qp, cq, mr, plan: undefined as unknown as Plan };
}

/** RESET → INIT → RTR → RTS with the side's plan; timeout 14 (67 ms) and retry_cnt 2, so a dead path fails in ~0.2 s. */
async function connect(s: Side) {
  const p = s.plan;
  await s.qp.modify(
    { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: 0 },
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
  );
  await s.qp.modify(
    {
      qp_state: IBV_QPS_RTR,
      path_mtu: p.path_mtu,
      dest_qp_num: p.dest_qp_num,
      rq_psn: p.rq_psn,
      max_dest_rd_atomic: 1,
      min_rnr_timer: 12,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid: p.dgid, sgid_index: p.sgid_index, hop_limit: 1 } },
    },
    IBV_QP_STATE |
      IBV_QP_AV |
      IBV_QP_PATH_MTU |
      IBV_QP_DEST_QPN |
      IBV_QP_RQ_PSN |
      IBV_QP_MAX_DEST_RD_ATOMIC |
      IBV_QP_MIN_RNR_TIMER,
  );
  await s.qp.modify(
    { qp_state: IBV_QPS_RTS, timeout: 14, retry_cnt: 2, rnr_retry: 7, sq_psn: p.sq_psn, max_rd_atomic: 1 },
    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
  );
}
