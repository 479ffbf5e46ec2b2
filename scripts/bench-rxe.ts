/**
 * The native backend's figures on real rxe, measured the way perftest does (run inside the
 * lab VM by scripts/bench-rxe.sh, next to perftest's own runs):
 *
 *  - write_bw: RDMA WRITE of 64 KiB from rxe0 to rxe1, 128 WRs in flight, every 64th
 *    signaled (ib_write_bw -s 65536). Reports MB/s (10^6 bytes/s), as perftest does.
 *  - send_lat: 8-byte inline SEND ping-pong between rxe0 and rxe1 (ib_send_lat -s 8).
 *    One-way latency = round trip / 2, as perftest reports it; typical = median.
 *
 * Both latency loops do what perftest's ib_send_lat does on each side: spin on the recv CQ,
 * repost the recv, send the reply; each side posts one WR built once and changed in place
 * (wr_id, the signaled flag), as perftest does with ctx->wr. The active side alone takes the
 * timestamps, one per iteration right before its post, and a round trip is the difference
 * between consecutive ones (perftest's tstamp[]): in the lab VM a clock read costs 15-100 µs
 * (the guest's clocksource is the emulated HPET; perftest reads the TSC instead), so one
 * read per round trip, not two. --warmup round trips (default 200) run untimed first so
 * that V8 has compiled the loop, as perftest's is compiled before it starts. Every post,
 * poll and completion check goes through the VerbsBackend contract, one call per verb, as a
 * lesson makes them.
 *
 * send_lat runs both sides in turn on one thread: A posts, B's recv completes, B reposts and
 * answers, A's recv completes. rxe does a SEND's whole delivery inside the sender's
 * ibv_post_send (the receiver's completion is there when it returns: native/tools/lat-probe
 * measures 0 empty polls, in C and in JS), so this loop has the same critical path as
 * perftest's two busy-polling processes, minus the cross-CPU hand-off.
 *
 * send_lat_two_threads mirrors perftest's structure too: the passive side (rxe1) runs in a
 * worker_thread (its own V8 isolate and OS thread) and both sides busy-poll. It is reported
 * for information only: with two busy-polling threads on the VM's two vCPUs and a busy host,
 * round trips wait for scheduler ticks. Measured in three boots: two JS threads 8.9, 9.8 and
 * 3.5 ms typical; one JS thread 0.69, 0.66 and 0.39 ms; perftest's own two processes 0.10,
 * 0.14 and — in the third boot — 7.3 ms. So perftest's figure is itself unstable here, and a
 * ratio against it says as much about the host's load as about the verbs.
 *
 * Usage (inside the VM): npx tsx scripts/bench-rxe.ts [--iters-bw N] [--iters-lat N] [--warmup N] [--json]
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
const ITERS_BW = opt("--iters-bw", 500);
const ITERS_LAT = opt("--iters-lat", 1000);
const WARMUP = opt("--warmup", 200);
const SIZE_BW = 65536;
const SIZE_LAT = 8;
const CQ_MOD = 64;

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
 */
class LatSide {
  readonly s: Side;
  readonly #wr;
  readonly #rwr;
  #sends = 0;
  constructor(s: Side) {
    this.s = s;
    this.#wr = { wr_id: 0, opcode: v.IBV_WR_SEND, send_flags: 0, sg_list: [s.mr.sge(0, SIZE_LAT)] };
    this.#rwr = { wr_id: 0, sg_list: [s.mr.sge(0, 64)] };
  }
  postRecvs(n: number): void {
    for (let i = 0; i < n; i++) this.s.qp.postRecv(this.#rwr);
  }
  send(): void {
    const sends = ++this.#sends;
    // Unsignaled sends need a signaled one now and then, or the SQ never frees.
    const signaled = sends % CQ_MOD === 0;
    this.#wr.wr_id = sends;
    this.#wr.send_flags = v.IBV_SEND_INLINE | (signaled ? v.IBV_SEND_SIGNALED : 0);
    this.s.qp.postSend(this.#wr);
    if (signaled) check(spin(this.s.scq));
  }
  /** Waits for the peer's message and reposts the recv it used. */
  receive(): void {
    check(spin(this.s.rcq));
    this.s.qp.postRecv(this.#rwr);
  }
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

/** The passive side (perftest's server) in a worker: answer every SEND with a SEND. */
function passiveSide(total: number): void {
  const port = parentPort!;
  const b = side("rxe1", 4096, SIZE_LAT);
  const lat = new LatSide(b);
  port.postMessage({ peer: { qpn: b.qp.qp_num, gid: b.gid.gid } } satisfies FromWorker);
  port.once("message", (a: Peer) => {
    try {
      connectOne(b, a.qpn, a.gid);
      lat.postRecvs(TX_DEPTH);
      port.postMessage({ ready: true } satisfies FromWorker);
      for (let i = 0; i < total; i++) {
        lat.receive();
        lat.send();
      }
      close(b);
      port.postMessage({ done: true } satisfies FromWorker);
    } catch (e) {
      port.postMessage({ error: String(e instanceof Error ? e.stack : e) } satisfies FromWorker);
    }
  });
}

/** Starts this file again in a worker (with tsx's loader, which workers do not inherit). */
function startWorker(data: unknown): Worker {
  const url = JSON.stringify(import.meta.url);
  return new Worker(`import("tsx/esm/api").then((m) => { m.register(); return import(${url}); })`, {
    eval: true,
    workerData: data,
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

/** Two threads, as perftest: timestamp, send, wait for the answer, repost; RTT = next timestamp − this one. */
async function sendLat(): Promise<{ typical: number; avg: number; min: number }> {
  const total = WARMUP + ITERS_LAT;
  const worker = startWorker({ role: "passive", total });
  const a = side("rxe0", 4096, SIZE_LAT);
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
    for (let i = 0; i < total; i++) {
      const k = i - WARMUP;
      if (k >= 0) ts[k] = performance.now();
      lat.send();
      lat.receive();
    }
    ts[ITERS_LAT] = performance.now();
    await done;
    const rtts: number[] = [];
    for (let k = 0; k < ITERS_LAT; k++) rtts.push(ts[k + 1] - ts[k]);
    return stats(rtts);
  } finally {
    close(a);
    await worker.terminate();
  }
}

function stats(rttsMs: number[]): { typical: number; avg: number; min: number } {
  const us = rttsMs.map((ms) => (ms * 1000) / 2).sort((x, y) => x - y);
  return { typical: us[Math.floor(us.length / 2)], avg: us.reduce((s, x) => s + x, 0) / us.length, min: us[0] };
}

/** ib_send_lat's loop on one thread: A sends, B's recv completes, B answers, A's recv completes. */
function sendLatSerial(): { typical: number; avg: number; min: number } {
  const a = side("rxe0", 4096, SIZE_LAT);
  const b = side("rxe1", 4096, SIZE_LAT);
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
    const rtts: number[] = [];
    for (let k = 0; k < ITERS_LAT; k++) rtts.push(ts[k + 1] - ts[k]);
    return stats(rtts);
  } finally {
    close(a, b);
  }
}

async function main(): Promise<void> {
  const bw = writeBw();
  const serial = sendLatSerial();
  const twoThreads = await sendLat();
  const result = {
    write_bw: { size: SIZE_BW, iters: ITERS_BW, mb_per_s: bw.mbps, seconds: bw.seconds },
    send_lat: {
      size: SIZE_LAT,
      iters: ITERS_LAT,
      t_typical_us: serial.typical,
      t_avg_us: serial.avg,
      t_min_us: serial.min,
    },
    send_lat_two_threads: {
      size: SIZE_LAT,
      iters: ITERS_LAT,
      warmup: WARMUP,
      t_typical_us: twoThreads.typical,
      t_avg_us: twoThreads.avg,
      t_min_us: twoThreads.min,
    },
  };
  if (args.includes("--json")) console.log(JSON.stringify(result));
  else console.log(result);
}

if (isMainThread) {
  await main();
} else {
  passiveSide((workerData as { total: number }).total);
}
