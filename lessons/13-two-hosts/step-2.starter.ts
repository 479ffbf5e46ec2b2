import type { Verbs, VerbsQp, VerbsCq, VerbsMr } from "verbslab";
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
  IBV_SEND_SIGNALED,
  IBV_WR_SEND,
} from "verbslab";

export default async function main(verbs: Verbs) {
  const a = await openHost(verbs, "rxe0", 0x1a2b3c);
  const b = await openHost(verbs, "rxe1", 0x4d5e6f);
  await connectTo(a, fromWire(toWire({ lid: 0, qpn: b.qp.qp_num, psn: b.psn, gid: b.gid })));
  await connectTo(b, fromWire(toWire({ lid: 0, qpn: a.qp.qp_num, psn: a.psn, gid: a.gid })));

  // ibv_rc_pingpong keeps its receive queue full (rx_depth 500; 32 here) and re-posts as it goes.
  for (const h of [a, b]) for (let i = 0; i < 32; i++) await h.qp.postRecv({ wr_id: 1, sg_list: [h.mr.sge(0, 4096)] });

  const iters = 10;
  const t0 = await verbs.now();
  for (let i = 0; i < iters; i++) {
    // TODO: one round trip: a SENDs 4096 bytes to b (wr_id 2) and waits for its send completion; b waits for the receive,
    // re-posts a receive, and SENDs 4096 bytes back; a waits for both its receive and b's send to complete.
  }
  const ms = (await verbs.now()) - t0;
  await verbs.log("iters", iters);
  // ibv_rc_pingpong prints "8192000 bytes in X seconds" and "N iters in X seconds = Y usec/iter".
  await verbs.log("usec_per_iter", Math.round((ms * 1000) / iters));
}

/** What each side tells the other: ibv_rc_pingpong's struct pingpong_dest. */
interface Dest {
  lid: number;
  qpn: number;
  psn: number;
  gid: string;
}

/** sprintf(msg, "%04x:%06x:%06x:%s", lid, qpn, psn, wire_gid) */
function toWire(d: Dest): string {
  // TODO: format the message exactly like ibv_rc_pingpong: lid as 4 hex digits, qpn and psn as 6, then the 32-digit GID.
  return "";
}

/** sscanf(msg, "%x:%x:%x:%s", &lid, &qpn, &psn, wire_gid) */
function fromWire(msg: string): Dest {
  // TODO: parse the four fields back (parseInt(…, 16)) and the GID with hexToGid(); throw on a malformed message.
  throw new Error(`fromWire is still a TODO: cannot parse ${JSON.stringify(msg)} yet`);
}

interface Host {
  name: string;
  cq: VerbsCq;
  qp: VerbsQp;
  mr: VerbsMr;
  gid: string;
  psn: number;
}

/** What one host sets up on its own device, as ibv_rc_pingpong does before it talks to anyone. */
async function openHost(verbs: Verbs, name: string, psn: number): Promise<Host> {
  const ctx = await verbs.openDevice(name);
  const gid = await ctx.queryGid(1, 0); // ibv_rc_pingpong -g 0
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(64);
  const cap = { max_send_wr: 1, max_recv_wr: 32, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const mr = await pd.regMr(4096, IBV_ACCESS_LOCAL_WRITE);
  await qp.modify(
    { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: 0 },
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
  );
  return { name, cq, qp, mr, gid, psn };
}

/** pp_connect_ctx: RTR toward the peer's QPN/PSN/GID, then RTS with our own PSN. */
async function connectTo(h: Host, peer: Dest) {
  await h.qp.modify(
    {
      qp_state: IBV_QPS_RTR,
      path_mtu: IBV_MTU_1024,
      dest_qp_num: peer.qpn,
      rq_psn: peer.psn,
      max_dest_rd_atomic: 1,
      min_rnr_timer: 12,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid: peer.gid, sgid_index: 0, hop_limit: 1 } },
    },
    IBV_QP_STATE |
      IBV_QP_AV |
      IBV_QP_PATH_MTU |
      IBV_QP_DEST_QPN |
      IBV_QP_RQ_PSN |
      IBV_QP_MAX_DEST_RD_ATOMIC |
      IBV_QP_MIN_RNR_TIMER,
  );
  await h.qp.modify(
    { qp_state: IBV_QPS_RTS, timeout: 14, retry_cnt: 7, rnr_retry: 7, sq_psn: h.psn, max_rd_atomic: 1 },
    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
  );
}

/** The 16 GID bytes as 32 hex digits (gid_to_wire_gid), and back (wire_gid_to_gid). */
function gidToHex(gid: string): string {
  const [head = "", tail] = gid.split("::");
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t];
  return groups.map((g) => g.padStart(4, "0")).join("");
}
function hexToGid(hex: string): string {
  const groups = (hex.match(/.{4}/g) ?? []).map((g) => parseInt(g, 16).toString(16));
  return groups.join(":").replace(/(^|:)0(:0)+(:|$)/, "::");
}
