/**
 * The native backend's figures on real rxe, measured the way perftest does (run inside the
 * lab VM by scripts/bench-rxe.sh, next to perftest's own runs; it runs this file bundled, in
 * plain Node, one measurement per process):
 *
 *  - `--part bw`: RDMA WRITE of 64 KiB from rxe0 to rxe1, 128 WRs in flight, every 64th
 *    signaled (ib_write_bw -s 65536). Reports MB/s (10^6 bytes/s), as perftest does.
 *  - `--part lat` / `lat-perftest-order` / `lat-one-thread`: 8-byte SEND ping-pong between
 *    rxe0 and rxe1 (ib_send_lat -s 8).
 *
 * The latency loops are shaped as perftest's ib_send_lat (run_iter_lat_send, perftest
 * 25.x): on each side, spin on the recv CQ, repost the recv, post the 8 B SEND and,
 * because ib_send_lat's TX depth is 1 (so its CQ moderation is 1), signal every SEND and spin
 * on the send CQ for its completion right after posting it. The SEND is not inline: perftest
 * does not know rxe ("Device not recognized to implement inline feature"), so its header
 * says "Max inline data : 0[B]" and it sends from its MR (bench-rxe.sh warns if that
 * changes). Each side posts one WR built once and changed in place (wr_id), as perftest does
 * with ctx->wr. The active side alone takes the timestamps, one right before each post
 * (perftest's tposted[]), and the figures are print_report_lat's: round trips are the
 * differences of consecutive timestamps, sorted, the largest 2 dropped; typical = median
 * (mean of the middle two when even), average over the rest, both halved (one-way). The clock
 * is performance.now (clock_gettime): the lab VM boots with clocksource=tsc so that is the
 * vDSO's rdtsc, as perftest's get_cycles, not a syscall to the emulated HPET. Every post, poll
 * and completion check goes through the VerbsBackend contract, one call per verb, as a lesson
 * makes them.
 *
 * --warmup round trips (default 10000) run untimed first. perftest's loop is compiled before
 * it starts; ours is compiled by V8 while it runs, and under the VM's emulation that takes
 * seconds (scripts/README.md gives the figures).
 *
 * `lat` (the goal's figure) has perftest's structure: the passive side (rxe1, perftest's
 * server process) runs in a worker_thread (its own V8 isolate and OS thread) and both sides
 * busy-poll. Each side does perftest's work per round trip (every SEND signaled and its
 * completion polled, every recv reposted) but answer-first (Order): only the poll that finds
 * the message and the post of the answer lie between a message's arrival and the answer;
 * the repost and the send completion are done while the peer works (128 recvs are posted,
 * so the later repost never meets an empty queue). `lat-perftest-order` is the same in
 * run_iter_lat_send's own order, for information; bench-rxe.sh runs the C twin
 * (native/tools/lat-probe.c) in both orders too.
 *
 * `lat-one-thread` runs both sides in turn on one thread (A posts, B's recv completes, B
 * reposts and answers, A's recv completes); rxe does a SEND's delivery inside the sender's
 * ibv_post_send, so this has nearly the same critical path without the cross-CPU hand-off,
 * but the ACK processing that perftest's receiver overlaps with its own work is serial here.
 * Reported for information. With two busy-polling threads on the VM's two vCPUs and a busy
 * host, round trips can wait for scheduler ticks, perftest's own too.
 *
 * Usage (inside the VM): node native/bench-rxe.bundle.mjs --part bw|lat|lat-perftest-order|
 *   lat-one-thread [--iters N] [--warmup N]   (bench-rxe.sh makes the bundle; npx tsx
 *   scripts/bench-rxe.ts ... runs the source, slower to settle)
 * Prints one JSON line.
 */
import { performance } from "node:perf_hooks";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import type { Cq } from "../verbs/backend.js";
import * as v from "../verbs/constants.js";
import type { Wc } from "../verbs/types.js";
import { loadNativeBackend } from "../native/index.js";
import { type Side, TX_DEPTH, connect, connectOne, openSide } from "../native/tools/rc-pair.js";

const args = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const PART = args.includes("--part") ? args[args.indexOf("--part") + 1] : "";
const ITERS_BW = opt("--iters", 500);
const ITERS_LAT = opt("--iters", 1000);
const WARMUP = opt("--warmup", 10_000);
const SIZE_BW = 65536;
const SIZE_LAT = 8;
const CQ_MOD = 64;
/** ib_send_lat's CQ moderation: its TX depth is 1, so every SEND is signaled (perftest caps cq_mod at tx_depth). */
const LAT_CQ_MOD = 1;
/** ib_send_lat's inline size on rxe (an unknown device to perftest): 0, so SENDs are not inline. */
const LAT_INLINE = 0;

const loaded = loadNativeBackend();
if (!("backend" in loaded)) {
  console.error(`bench-rxe: the native backend is unavailable: ${loaded.unavailable}`);
  process.exit(2);
}
const backend = loaded.backend;
const side = (dev: string, mrSize: number, maxInline: number) => openSide(backend, dev, mrSize, maxInline);

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

/**
 * One side of ib_send_lat's loop, shared by the active side (main thread) and the passive one
 * (worker): a pre-built send WR and recv WR, changed in place, and busy-polling that gives up
 * after 60 s without a completion (a peer that died must not hang the VM until its timeout).
 * The steps are separate so that the loops can order them (see Order).
 */
class LatSide {
  readonly s: Side;
  readonly #wr;
  readonly #rwr;
  #sends = 0;
  /** answer-first: a recv used by the last answer and not reposted yet. */
  owed = false;
  constructor(s: Side) {
    this.s = s;
    this.#wr = { wr_id: 0, opcode: v.IBV_WR_SEND, send_flags: 0, sg_list: [s.mr.sge(0, SIZE_LAT)] };
    this.#rwr = { wr_id: 0, sg_list: [s.mr.sge(0, 64)] };
  }
  postRecvs(n: number): void {
    for (let i = 0; i < n; i++) this.s.qp.postRecv(this.#rwr);
  }
  /** Posts the 8 B SEND; returns whether it is signaled (then its completion must be reaped). */
  post(): boolean {
    const sends = ++this.#sends;
    // As ib_send_lat: every LAT_CQ_MOD-th send signaled (with LAT_CQ_MOD 1: every one).
    const signaled = sends % LAT_CQ_MOD === 0;
    this.#wr.wr_id = sends;
    this.#wr.send_flags = (SIZE_LAT <= LAT_INLINE ? v.IBV_SEND_INLINE : 0) | (signaled ? v.IBV_SEND_SIGNALED : 0);
    this.s.qp.postSend(this.#wr);
    return signaled;
  }
  /** Spins on the send CQ for the SEND's completion. */
  reap(): void {
    check(spin(this.s.scq));
  }
  /** Spins on the recv CQ for the peer's message. */
  await(): void {
    check(spin(this.s.rcq));
  }
  /** Reposts the recv a message used. */
  repost(): void {
    this.s.qp.postRecv(this.#rwr);
  }
  /** perftest's send step: post, and (signaled) wait for the completion right away. */
  send(): void {
    if (this.post()) this.reap();
  }
  /** perftest's receive step: wait for the message, repost its recv. */
  receive(): void {
    this.await();
    this.repost();
  }
}

/**
 * How each side orders its work in one round trip (the same work either way: every SEND
 * signaled and its completion polled, every recv reposted, the same WRs and polls):
 *  - "perftest": run_iter_lat_send's order. Active: post, reap, await, repost. Passive:
 *    await, repost, post, reap. The repost lies between a message's arrival and the answer.
 *  - "answer-first": only what must come between "message arrived" and "answer posted"
 *    stays there. Passive: await, post, then repost and reap while the peer works. Active:
 *    post, then repost the recv the previous answer used and reap while the peer works,
 *    then await. 128 recvs are posted, so a late repost never meets an empty queue (no RNR).
 */
type Order = "perftest" | "answer-first";

/** One round trip of the active side (its timestamp is taken by the caller right before). */
function activeRound(lat: LatSide, order: Order): void {
  if (order === "perftest") {
    lat.send();
    lat.receive();
    return;
  }
  const signaled = lat.post();
  if (lat.owed) lat.repost();
  if (signaled) lat.reap();
  lat.await();
  lat.owed = true;
}

/** One round trip of the passive side. */
function passiveRound(lat: LatSide, order: Order): void {
  if (order === "perftest") {
    lat.receive();
    lat.send();
    return;
  }
  lat.await();
  const signaled = lat.post();
  lat.repost();
  if (signaled) lat.reap();
}

function spin(cq: Cq): Wc[] {
  let deadline = 0;
  for (let n = 1; ; n++) {
    const wcs = cq.poll(1);
    if (wcs.length > 0) return wcs;
    if ((n & 4095) === 0) {
      const now = performance.now();
      if (deadline === 0) deadline = now + 60_000;
      else if (now > deadline) throw new Error("no completion for 60 s: the peer is gone");
    }
  }
}

interface Peer {
  qpn: number;
  gid: string;
}
type FromWorker = { peer: Peer } | { ready: true } | { done: true } | { error: string };
type LatJob = { order: Order; rounds: number };

/** The passive side (perftest's server) in a worker: answers every SEND with a SEND. */
function passiveSide(job: LatJob): void {
  const port = parentPort!;
  const b = side("rxe1", 4096, LAT_INLINE);
  const lat = new LatSide(b);
  port.postMessage({ peer: { qpn: b.qp.qp_num, gid: b.gid.gid } } satisfies FromWorker);
  port.once("message", (peer: Peer) => {
    try {
      connectOne(b, peer.qpn, peer.gid);
      lat.postRecvs(TX_DEPTH);
      port.postMessage({ ready: true } satisfies FromWorker);
      for (let r = 0; r < job.rounds; r++) passiveRound(lat, job.order);
      close(b);
      port.postMessage({ done: true } satisfies FromWorker);
    } catch (e) {
      port.postMessage({ error: String(e instanceof Error ? e.stack : e) } satisfies FromWorker);
    }
  });
}

/**
 * Starts this file again in a worker: the bundle that bench-rxe.sh runs directly, the
 * TypeScript source with tsx's loader (which workers do not inherit).
 */
function startWorker(job: LatJob): Worker {
  if (import.meta.url.endsWith(".mjs")) return new Worker(new URL(import.meta.url), { workerData: job });
  const url = JSON.stringify(import.meta.url);
  return new Worker(`import("tsx/esm/api").then((m) => { m.register(); return import(${url}); })`, {
    eval: true,
    workerData: job,
  });
}

function nextMessage(w: Worker): Promise<FromWorker> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: FromWorker) => {
      w.off("error", onError);
      if ("error" in m) reject(new Error(`passive side: ${m.error}`));
      else resolve(m);
    };
    const onError = (e: Error) => {
      w.off("message", onMessage);
      reject(e);
    };
    w.once("message", onMessage);
    w.once("error", onError);
  });
}

type LatStats = { typical: number; avg: number; min: number; samples: number };

/**
 * Two threads, as perftest: timestamp, one round trip, repeat; RTT = next timestamp − this
 * one. WARMUP round trips first, untimed, then ITERS_LAT timed ones.
 */
async function sendLat(order: Order): Promise<LatStats> {
  const rounds = WARMUP + ITERS_LAT;
  const worker = startWorker({ order, rounds });
  const a = side("rxe0", 4096, LAT_INLINE);
  try {
    const hello = await nextMessage(worker);
    if (!("peer" in hello)) throw new Error("passive side: expected its QP number");
    connectOne(a, hello.peer.qpn, hello.peer.gid);
    const lat = new LatSide(a);
    lat.postRecvs(TX_DEPTH);
    const ready = nextMessage(worker);
    worker.postMessage({ qpn: a.qp.qp_num, gid: a.gid.gid } satisfies Peer);
    await ready;
    const done = nextMessage(worker);
    const ts = new Float64Array(ITERS_LAT + 1);
    for (let r = 0; r < rounds; r++) {
      if (r >= WARMUP) ts[r - WARMUP] = performance.now();
      activeRound(lat, order);
    }
    ts[ITERS_LAT] = performance.now();
    await done;
    return stats(ts);
  } finally {
    close(a);
    await worker.terminate();
  }
}

/**
 * perftest's print_report_lat over timestamps taken right before each post (ms): one-way
 * latencies (µs) = consecutive differences / 2, sorted, the largest LAT_MEASURE_TAIL (2)
 * dropped; typical = median (mean of the middle two when even), avg over the rest.
 */
function stats(tsMs: Float64Array): LatStats {
  const rtts: number[] = [];
  for (let k = 0; k + 1 < tsMs.length; k++) rtts.push(tsMs[k + 1] - tsMs[k]);
  return statsOf(rtts);
}

/** The same over round trips (ms). */
function statsOf(rttMs: number[]): LatStats {
  const us = rttMs.map((ms) => (ms * 1000) / 2);
  us.sort((x, y) => x - y);
  const n = us.length > 2 ? us.length - 2 : us.length;
  const typical = n % 2 === 0 ? (us[n / 2] + us[n / 2 - 1]) / 2 : us[(n - 1) / 2];
  let sum = 0;
  for (let k = 0; k < n; k++) sum += us[k];
  return { typical, avg: sum / n, min: us[0], samples: us.length };
}

/** ib_send_lat's loop with both sides on one thread: A sends, B's recv completes, B answers, A's recv completes. */
function sendLatSerial(): LatStats {
  const a = side("rxe0", 4096, LAT_INLINE);
  const b = side("rxe1", 4096, LAT_INLINE);
  try {
    connect(a, b);
    const la = new LatSide(a);
    const lb = new LatSide(b);
    la.postRecvs(TX_DEPTH);
    lb.postRecvs(TX_DEPTH);
    const ts = new Float64Array(ITERS_LAT + 1);
    for (let i = 0; i < WARMUP + ITERS_LAT; i++) {
      const k = i - WARMUP;
      if (k >= 0) ts[k] = performance.now();
      la.send();
      lb.receive();
      lb.send();
      la.receive();
    }
    ts[ITERS_LAT] = performance.now();
    return stats(ts);
  } finally {
    close(a, b);
  }
}

async function main(): Promise<unknown> {
  if (PART === "bw") {
    const bw = writeBw();
    return { size: SIZE_BW, iters: ITERS_BW, mb_per_s: bw.mbps, seconds: bw.seconds };
  }
  const orders: Record<string, Order> = { lat: "answer-first", "lat-perftest-order": "perftest" };
  const t =
    PART === "lat-one-thread" ? sendLatSerial() : Object.hasOwn(orders, PART) ? await sendLat(orders[PART]) : null;
  if (!t) throw new Error(`bench-rxe: --part must be bw, lat, lat-perftest-order or lat-one-thread (got "${PART}")`);
  return {
    size: SIZE_LAT,
    iters: t.samples,
    warmup: WARMUP,
    cq_mod: LAT_CQ_MOD,
    inline: LAT_INLINE,
    order: PART === "lat" ? "answer-first" : "perftest",
    t_typical_us: t.typical,
    t_avg_us: t.avg,
    t_min_us: t.min,
  };
}

if (isMainThread) console.log(JSON.stringify(await main()));
else passiveSide(workerData as LatJob);
