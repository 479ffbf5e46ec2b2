/**
 * Where the JS side of the 8 B SEND ping-pong spends its time (lab VM only):
 * `npx tsx native/tools/lat-probe.ts [out.json]`. Times single calls in loops (now(), an empty
 * poll, postRecv, postSend) and splits the serial ping-pong of scripts/bench-rxe.ts into its
 * phases, then prints (or writes) medians in µs. A diagnostic, not a benchmark: every phase
 * is bracketed by performance.now(), whose own cost is reported first.
 */
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import * as v from "../../verbs/constants.js";
import { loadAddon } from "../addon.js";
import { loadNativeBackend } from "../index.js";
import { type Side, connect, openSide } from "./rc-pair.js";

const loaded = loadNativeBackend();
if (!("backend" in loaded)) throw new Error(loaded.unavailable);
const backend = loaded.backend;
const ITERS = Number(process.env.PROBE_ITERS ?? 1000);
const side = (dev: string) => openSide(backend, dev, 4096, 8);

const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[Math.floor(xs.length / 2)];
const us = (ms: number) => Math.round(ms * 1000 * 100) / 100;
const out: Record<string, unknown> = {};

const a = side("rxe0");
const b = side("rxe1");
connect(a, b);

// The raw addon: a bare method call (this check only), an empty poll as a method on the CQ
// (napi_unwrap for `this`, the out array read per call) and through the function
// bindPollOut returns (bound to the CQ and the array); the contract's empty poll.
const raw = loadAddon();
if (!("addon" in raw)) throw new Error(raw.missing);
const rawCtx = raw.addon.openDevice("rxe0");
const rawCq = rawCtx.createCq(16, null, 0);
const rawOut = new Uint32Array(16 * raw.addon.WC_WORDS);
const rawPoll = rawCq.bindPollOut(rawOut);
const calls: Record<string, () => unknown> = {
  noop_us: () => undefined,
  perf_now_us: () => performance.now(),
  now_us: () => backend.now(),
  raw_ack_events0_us: () => rawCq.ackEvents(0),
  raw_poll_method_empty_us: () => rawCq.poll(1, rawOut),
  raw_poll_bound_empty_us: () => rawPoll(1),
  poll_empty_us: () => a.rcq.poll(1),
};
// Interleaved rounds (the host's speed drifts): the median of 15 rounds of 1000 calls each.
const rounds: Record<string, number[]> = {};
for (const [name, fn] of Object.entries(calls)) {
  rounds[name] = [];
  for (let i = 0; i < 2000; i++) fn(); // warm-up
}
for (let r = 0; r < 15; r++) {
  for (const [name, fn] of Object.entries(calls)) {
    const t0 = performance.now();
    for (let i = 0; i < 1000; i++) fn();
    rounds[name].push((performance.now() - t0) / 1000);
  }
}
for (const [name, xs] of Object.entries(rounds)) out[name] = us(median(xs));
rawCtx.close();

// Phases of the serial ping-pong (as scripts/bench-rxe.ts runs it).
const ph: Record<string, number[]> = { sendA: [], waitB: [], recvB: [], sendB: [], waitA: [], recvA: [], rtt: [] };
const polls: number[] = [];
for (let i = 0; i < 128; i++) {
  a.qp.postRecv({ wr_id: 0, sg_list: [a.mr.sge(0, 64)] });
  b.qp.postRecv({ wr_id: 0, sg_list: [b.mr.sge(0, 64)] });
}
let sends = 0;
const send = (s: Side) => {
  sends++;
  const signaled = sends % 64 === 0;
  s.qp.postSend({
    wr_id: sends,
    opcode: v.IBV_WR_SEND,
    send_flags: v.IBV_SEND_INLINE | (signaled ? v.IBV_SEND_SIGNALED : 0),
    sg_list: [s.mr.sge(0, 8)],
  });
  if (signaled) while (s.scq.poll(1).length === 0);
};
const wait = (s: Side) => {
  let n = 0;
  while (s.rcq.poll(1).length === 0) n++;
  polls.push(n);
};
const repost = (s: Side) => s.qp.postRecv({ wr_id: 0, sg_list: [s.mr.sge(0, 64)] });
for (let i = 0; i < ITERS; i++) {
  const t0 = performance.now();
  send(a);
  const t1 = performance.now();
  wait(b);
  const t2 = performance.now();
  repost(b);
  const t3 = performance.now();
  send(b);
  const t4 = performance.now();
  wait(a);
  const t5 = performance.now();
  repost(a);
  const t6 = performance.now();
  ph.sendA.push(t1 - t0);
  ph.waitB.push(t2 - t1);
  ph.recvB.push(t3 - t2);
  ph.sendB.push(t4 - t3);
  ph.waitA.push(t5 - t4);
  ph.recvA.push(t6 - t5);
  ph.rtt.push(t6 - t0);
}
for (const [k, xs] of Object.entries(ph)) out[`median_${k}_us`] = us(median(xs.slice(ITERS / 2)));
out.median_polls_per_wait = median(polls);
out.max_polls_per_wait = Math.max(...polls);
a.ctx.close();
b.ctx.close();
const text = JSON.stringify(out, null, 1);
if (process.argv[2]) writeFileSync(process.argv[2], text);
console.log(text);
