/**
 * The native backend's figures on real rxe, measured the way perftest does (run inside the
 * lab VM by scripts/bench-rxe.sh, next to perftest's own runs):
 *
 *  - write_bw: RDMA WRITE of 64 KiB from rxe0 to rxe1, 128 WRs in flight, every 64th
 *    signaled (ib_write_bw -s 65536). Reports MB/s (10^6 bytes/s), as perftest does.
 *  - send_lat: 8-byte inline SEND ping-pong between rxe0 and rxe1 (ib_send_lat -s 8).
 *    One-way latency = round trip / 2, as perftest reports it; typical = median.
 *
 * Usage (inside the VM): npx tsx scripts/bench-rxe.ts [--iters-bw N] [--iters-lat N] [--json]
 */
import type { Context, Cq, Mr, Pd, Qp } from "../verbs/backend.js";
import * as v from "../verbs/constants.js";
import type { GidEntry } from "../verbs/types.js";
import { loadNativeBackend } from "../native/index.js";

const args = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const ITERS_BW = opt("--iters-bw", 500);
const ITERS_LAT = opt("--iters-lat", 1000);
const SIZE_BW = 65536;
const SIZE_LAT = 8;
const TX_DEPTH = 128;
const CQ_MOD = 64;

const loaded = loadNativeBackend();
if (!("backend" in loaded)) {
  console.error(`bench-rxe: the native backend is unavailable: ${loaded.unavailable}`);
  process.exit(2);
}
const backend = loaded.backend;
const ACCESS = v.IBV_ACCESS_LOCAL_WRITE | v.IBV_ACCESS_REMOTE_WRITE | v.IBV_ACCESS_REMOTE_READ;

interface Side {
  ctx: Context;
  pd: Pd;
  scq: Cq;
  rcq: Cq;
  qp: Qp;
  mr: Mr;
  gid: GidEntry;
}

function side(dev: string, mrSize: number, maxInline: number): Side {
  const ctx = backend.openDevice(dev);
  const pd = ctx.allocPd();
  const scq = ctx.createCq(TX_DEPTH * 2);
  const rcq = ctx.createCq(TX_DEPTH * 2);
  const qp = pd.createQp({
    send_cq: scq,
    recv_cq: rcq,
    qp_type: v.IBV_QPT_RC,
    sq_sig_all: 0,
    cap: { max_send_wr: TX_DEPTH, max_recv_wr: TX_DEPTH, max_send_sge: 1, max_recv_sge: 1, max_inline_data: maxInline },
  });
  const mr = pd.regMr(mrSize, ACCESS);
  const gid = ctx.queryGidTable().find((g) => g.gid.startsWith("fe80"));
  if (!gid) throw new Error(`${dev} has no link-local GID`);
  return { ctx, pd, scq, rcq, qp, mr, gid };
}

function connect(a: Side, b: Side): void {
  for (const [x, y] of [
    [a, b],
    [b, a],
  ] as const) {
    x.qp.modify(
      { qp_state: v.IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: ACCESS },
      v.IBV_QP_STATE | v.IBV_QP_PKEY_INDEX | v.IBV_QP_PORT | v.IBV_QP_ACCESS_FLAGS,
    );
    x.qp.modify(
      {
        qp_state: v.IBV_QPS_RTR,
        path_mtu: v.IBV_MTU_1024,
        dest_qp_num: y.qp.qp_num,
        rq_psn: 0,
        max_dest_rd_atomic: 1,
        min_rnr_timer: 12,
        ah_attr: { is_global: 1, port_num: 1, grh: { dgid: y.gid.gid, sgid_index: x.gid.gid_index, hop_limit: 64 } },
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
  for (const x of [a, b]) {
    x.qp.modify(
      { qp_state: v.IBV_QPS_RTS, sq_psn: 0, timeout: 20, retry_cnt: 7, rnr_retry: 7, max_rd_atomic: 1 },
      v.IBV_QP_STATE |
        v.IBV_QP_TIMEOUT |
        v.IBV_QP_RETRY_CNT |
        v.IBV_QP_RNR_RETRY |
        v.IBV_QP_SQ_PSN |
        v.IBV_QP_MAX_QP_RD_ATOMIC,
    );
  }
}

function close(...sides: Side[]): void {
  for (const s of sides) s.ctx.close();
}

function check(wcs: { status: number; wr_id: number }[]): void {
  for (const wc of wcs) {
    if (wc.status !== v.IBV_WC_SUCCESS) throw new Error(`completion ${wc.wr_id} failed: status ${wc.status}`);
  }
}

/** ib_write_bw's loop: keep TX_DEPTH WRITEs in flight, signal every CQ_MOD-th, count completions. */
function writeBw(): { mbps: number; seconds: number } {
  const a = side("rxe0", SIZE_BW, 0);
  const b = side("rxe1", SIZE_BW, 0);
  try {
    connect(a, b);
    const wr = (i: number) => ({
      wr_id: i,
      opcode: v.IBV_WR_RDMA_WRITE,
      send_flags: (i + 1) % CQ_MOD === 0 || i === ITERS_BW - 1 ? v.IBV_SEND_SIGNALED : 0,
      sg_list: [a.mr.sge(0, SIZE_BW)],
      rdma: { remote_addr: b.mr.addr, rkey: b.mr.rkey },
    });
    let posted = 0;
    let completed = 0; // WRs known complete (a signaled WC covers the unsignaled ones before it)
    const start = backend.now();
    while (completed < ITERS_BW) {
      const room = Math.min(TX_DEPTH - (posted - completed), ITERS_BW - posted);
      if (room > 0) {
        const batch = [];
        for (let i = 0; i < room; i++) batch.push(wr(posted + i));
        a.qp.postSend(batch);
        posted += room;
      }
      const wcs = a.scq.poll(16);
      check(wcs);
      for (const wc of wcs) completed = wc.wr_id + 1;
    }
    const seconds = (backend.now() - start) / 1000;
    return { mbps: (ITERS_BW * SIZE_BW) / seconds / 1e6, seconds };
  } finally {
    close(a, b);
  }
}

/** ib_send_lat's loop: A sends, B's recv completes, B answers, A's recv completes. */
function sendLat(): { typical: number; avg: number; min: number } {
  const a = side("rxe0", 4096, SIZE_LAT);
  const b = side("rxe1", 4096, SIZE_LAT);
  try {
    connect(a, b);
    const recv = (s: Side) => ({ wr_id: 0, sg_list: [s.mr.sge(0, 64)] });
    for (let i = 0; i < TX_DEPTH; i++) {
      a.qp.postRecv(recv(a));
      b.qp.postRecv(recv(b));
    }
    let sends = 0;
    const send = (s: Side) => {
      sends++;
      // Unsignaled sends need a signaled one now and then, or the SQ never frees.
      const signaled = sends % CQ_MOD === 0;
      s.qp.postSend({
        wr_id: sends,
        opcode: v.IBV_WR_SEND,
        send_flags: v.IBV_SEND_INLINE | (signaled ? v.IBV_SEND_SIGNALED : 0),
        sg_list: [s.mr.sge(0, SIZE_LAT)],
      });
      if (signaled) {
        let wcs;
        do wcs = s.scq.poll(1);
        while (wcs.length === 0);
        check(wcs);
      }
    };
    const waitRecv = (s: Side) => {
      let wcs;
      do wcs = s.rcq.poll(1);
      while (wcs.length === 0);
      check(wcs);
      s.qp.postRecv(recv(s));
    };
    const rtts: number[] = [];
    for (let i = 0; i < ITERS_LAT; i++) {
      const t0 = backend.now();
      send(a);
      waitRecv(b);
      send(b);
      waitRecv(a);
      rtts.push(backend.now() - t0);
    }
    const us = rtts.map((ms) => (ms * 1000) / 2).sort((x, y) => x - y);
    return { typical: us[Math.floor(us.length / 2)], avg: us.reduce((s, x) => s + x, 0) / us.length, min: us[0] };
  } finally {
    close(a, b);
  }
}

const bw = writeBw();
const lat = sendLat();
const result = {
  write_bw: { size: SIZE_BW, iters: ITERS_BW, mb_per_s: bw.mbps, seconds: bw.seconds },
  send_lat: { size: SIZE_LAT, iters: ITERS_LAT, t_typical_us: lat.typical, t_avg_us: lat.avg, t_min_us: lat.min },
};
if (args.includes("--json")) console.log(JSON.stringify(result));
else console.log(result);
