/**
 * Long RC WRITEs and SENDs across the timed wire, paced by the requester's in-flight window
 * (64 out, on again at 15: qp.ts skbTimer), with the packet log off (trains, fast-path.ts, and
 * spinFor's shortcuts, world.ts) and on (every packet alone, the reference). The same seeded
 * sessions must leave the same completions at the same virtual times, the same sq_psn and
 * counters wherever the program looks in the middle of a stream, and the same memory. Every
 * loop is bounded, so a fast path that stops making progress fails the test instead of
 * hanging it.
 */
import { describe, expect, it } from "vitest";
import {
  IBV_MTU_256,
  IBV_MTU_4096,
  IBV_QPS_ERR,
  IBV_QPT_RC,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
  IBV_SEND_SIGNALED,
  IBV_WR_RDMA_WRITE,
  IBV_WR_RDMA_WRITE_WITH_IMM,
  IBV_WR_SEND,
} from "../verbs/constants.js";
import type { Context } from "../verbs/backend.js";
import type { SendWr } from "../verbs/types.js";
import { trainStats } from "./fast-path.js";
import { createSimBackend } from "./index.js";
import { ALL_ACCESS, connectRc, makeEnd, type End } from "./testing.js";
import type { WireModel } from "../verbs/lab.js";
import { holdNs, wireProfile } from "./wire.js";

/** mulberry32: the workload's own generator (independent of the simulator's seed). */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MR_BYTES = 1 << 20;
/** Most polls a spinning loop makes before the test calls it a hang. */
const MOST_POLLS = 10_000;

function fnv(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}

function end(ctx: Context): End {
  const pd = ctx.allocPd();
  const cq = ctx.createCq(1024);
  const qp = pd.createQp({
    send_cq: cq,
    recv_cq: cq,
    qp_type: IBV_QPT_RC,
    cap: { max_send_wr: 256, max_recv_wr: 256, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
  });
  const mr = pd.regMr(MR_BYTES, ALL_ACCESS);
  return { ctx, pd, cq, qp, mr };
}

/** One scripted session; everything the program observed, with the virtual time, as JSON. */
async function session(seed: number, packetLog: boolean): Promise<string> {
  const rnd = generator(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const wire = pick<WireModel>(["rxe", "100GbE", "25GbE"]);
  const b = createSimBackend({ seed: 11, packetLog, wire });
  const c0 = b.openDevice("rxe0");
  const c1 = b.openDevice("rxe1");
  const mtuEnum = IBV_MTU_256 + Math.floor(rnd() * (IBV_MTU_4096 - IBV_MTU_256 + 1));
  const mtu = 128 << mtuEnum;
  // How long one full packet holds the link (ms): mid-stream pauses are a few of these.
  const pktMs = holdNs(wireProfile(wire), mtu) / 1e6;
  const a = end(c0);
  const z = end(c1);
  // A second pair whose small SENDs cross the stream (other traffic on both links).
  const a2 = end(c0);
  const z2 = end(c1);
  for (let i = 0; i < MR_BYTES; i++) a.mr.bytes[i] = (rnd() * 256) | 0;
  const opts = { path_mtu: mtuEnum, timeout: pick([14, 18]), retry_cnt: 7, rnr_retry: 7 };
  connectRc(a, z, opts);
  connectRc(z, a, opts);
  connectRc(a2, z2, opts);
  connectRc(z2, a2, opts);
  const seen: unknown[] = [];
  const record = (what: string, v: unknown) => seen.push([what, b.now(), v]);
  const look = () =>
    record("look", {
      sq_psn: [a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn, z.qp.query(IBV_QP_SQ_PSN).attr.sq_psn],
      counters: [c0.queryCounters(), c1.queryCounters()],
    });
  let wrId = 0;
  let signaled = 0;
  let z2Recvs = 0;
  for (let step = 0; step < 8; step++) {
    const n = 1 + Math.floor(rnd() * 12);
    const wrs: SendWr[] = [];
    let recvs = 0;
    for (let i = 0; i < n; i++) {
      const opcode = pick([IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND]);
      // Mostly more packets than the window holds, sometimes a few.
      const pkts = rnd() < 0.2 ? 1 + Math.floor(rnd() * 4) : 30 + Math.floor(rnd() * 140);
      const len = Math.min(MR_BYTES / 4, pkts * mtu - (rnd() < 0.5 ? 0 : Math.floor(rnd() * mtu)));
      const sig = i === n - 1 || rnd() < 0.3;
      if (sig) signaled++;
      if (opcode !== IBV_WR_RDMA_WRITE) recvs++;
      const at = Math.floor(rnd() * (MR_BYTES - len));
      wrs.push({
        wr_id: wrId++,
        opcode,
        send_flags: sig ? IBV_SEND_SIGNALED : 0,
        imm_data: wrId,
        sg_list: [a.mr.sge(at, len)],
        rdma: { remote_addr: z.mr.addr + Math.floor(rnd() * (MR_BYTES - len)), rkey: z.mr.rkey },
      });
    }
    for (let i = 0; i < recvs; i++) z.qp.postRecv({ wr_id: 1000 + i, sg_list: [z.mr.sge(0, MR_BYTES)] });
    a.qp.postSend(wrs);
    const r = rnd();
    if (r < 0.3) {
      // Look in the middle of the stream: a pause, then sq_psn, counters and a poll.
      await b.sleep(pktMs * (1 + Math.floor(rnd() * 150)));
      look();
      const got = a.cq.poll(64);
      signaled -= got.length;
      record("poll", [got, z.cq.poll(64)]);
    } else if (r < 0.5) {
      // The other pair's SEND crosses the stream, and its completion ends the poll.
      z2.qp.postRecv({ wr_id: 7, sg_list: [z2.mr.sge(0, 64)] });
      z2Recvs++;
      a2.qp.postSend({ wr_id: 8, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a2.mr.sge(0, 64)] });
      let got = 0;
      for (let polls = 0; got < 1 && polls < MOST_POLLS; polls++) got += a2.cq.poll(1).length;
      record("a2", got);
      look();
    } else if (r < 0.6) {
      const got = await a.cq.pollWait(1, 10_000);
      signaled -= got.length;
      record("pollWait", got);
      look();
    }
    // Spin on poll until every signaled WRITE/SEND so far completed, as a benchmark does.
    const wcs = [];
    for (let polls = 0; signaled > 0 && polls < MOST_POLLS; polls++) {
      const got = a.cq.poll(signaled);
      signaled -= got.length;
      if (got.length) wcs.push([b.now(), got]);
    }
    record("spun", [signaled, wcs, z.cq.poll(256)]);
    look();
  }
  await b.sleep(200);
  record("end", {
    wcs: [a.cq.poll(1024), z.cq.poll(1024), a2.cq.poll(64), z2.cq.poll(64).length === z2Recvs],
    qps: [a.qp.query(), z.qp.query()],
    mrs: [fnv(z.mr.bytes)],
    counters: [c0.queryCounters(), c1.queryCounters()],
  });
  return JSON.stringify(seen, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
}

/**
 * The benchmark's shape (scripts/bench.ts writeRunner): batches of equal multi-packet WRITEs,
 * unsignaled but the last, each batch spun on until its completion, and between or within
 * batches what a program may do: read sq_psn and counters mid-stream, a timer (sleep),
 * pollWait, the other pair's SEND crossing, and once in a while a modify to ERR mid-stream.
 */
async function benchSession(seed: number, packetLog: boolean): Promise<string> {
  const rnd = generator(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const wire = pick<WireModel>(["rxe", "100GbE", "25GbE"]);
  const b = createSimBackend({ seed: 5, packetLog, wire });
  const c0 = b.openDevice("rxe0");
  const c1 = b.openDevice("rxe1");
  const mtuEnum = IBV_MTU_256 + Math.floor(rnd() * (IBV_MTU_4096 - IBV_MTU_256 + 1));
  const mtu = 128 << mtuEnum;
  const pktMs = holdNs(wireProfile(wire), mtu) / 1e6;
  const a = end(c0);
  const z = end(c1);
  const a2 = end(c0);
  const z2 = end(c1);
  for (let i = 0; i < MR_BYTES; i++) a.mr.bytes[i] = (rnd() * 256) | 0;
  const opts = { path_mtu: mtuEnum, timeout: pick([14, 18]), retry_cnt: 7, rnr_retry: 7 };
  connectRc(a, z, opts);
  connectRc(z, a, opts);
  connectRc(a2, z2, opts);
  connectRc(z2, a2, opts);
  const seen: unknown[] = [];
  const record = (what: string, v: unknown) => seen.push([what, b.now(), v]);
  const look = () =>
    record("look", {
      sq_psn: [a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn, z.qp.query(IBV_QP_SQ_PSN).attr.sq_psn],
      counters: [c0.queryCounters(), c1.queryCounters()],
    });
  // Messages of 64 packets (the in-flight window's size), or around it.
  const pkts = pick([64, 64, 64, 16, 65, 100, 130]);
  const len = Math.min(MR_BYTES / 16, pkts * mtu - (rnd() < 0.7 ? 0 : Math.floor(rnd() * mtu)));
  const count = 4 + Math.floor(rnd() * 13);
  const wrs: SendWr[] = [];
  for (let i = 0; i < count; i++)
    wrs.push({
      wr_id: i,
      opcode: IBV_WR_RDMA_WRITE,
      send_flags: i === count - 1 ? IBV_SEND_SIGNALED : 0,
      sg_list: [a.mr.sge(i * len, len)],
      rdma: { remote_addr: z.mr.addr + i * len, rkey: z.mr.rkey },
    });
  let errored = false;
  for (let batch = 0; batch < 6 && !errored; batch++) {
    a.qp.postSend(wrs);
    const r = rnd();
    if (r < 0.15) {
      await b.sleep(pktMs * (1 + Math.floor(rnd() * 400)));
      look();
    } else if (r < 0.25) {
      z2.qp.postRecv({ wr_id: 7, sg_list: [z2.mr.sge(0, 64)] });
      a2.qp.postSend({ wr_id: 8, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a2.mr.sge(0, 64)] });
      let got = 0;
      for (let polls = 0; got < 1 && polls < MOST_POLLS; polls++) got += a2.cq.poll(1).length;
      record("a2", [got, z2.cq.poll(4).length]);
      look();
    } else if (r < 0.32) {
      record("pollWait", await a.cq.pollWait(1, pktMs * (1 + Math.floor(rnd() * 300))));
      look();
    } else if (r < 0.38 && batch >= 2) {
      await b.sleep(pktMs * (1 + Math.floor(rnd() * 300)));
      a.qp.modify({ qp_state: IBV_QPS_ERR }, IBV_QP_STATE);
      errored = true;
      look();
    }
    const wcs = [];
    for (let polls = 0; polls < MOST_POLLS; polls++) {
      const got = a.cq.poll(count);
      if (got.length) wcs.push([b.now(), got]);
      if (got.some((wc) => wc.wr_id === count - 1)) break;
      if (errored && got.length === 0 && polls > 100) break;
    }
    record("spun", wcs);
    look();
  }
  await b.sleep(200);
  record("end", {
    wcs: [a.cq.poll(1024), z.cq.poll(1024)],
    qps: [a.qp.query(), z.qp.query()],
    mrs: [fnv(z.mr.bytes)],
    counters: [c0.queryCounters(), c1.queryCounters()],
  });
  return JSON.stringify(seen, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
}

describe("streams paced by the in-flight window (packet log off) match the packet-by-packet path (log on)", () => {
  it("leaves the same completions, times, sq_psn, counters and memory", async () => {
    const before = { ...trainStats };
    for (let seed = 1; seed <= 16; seed++) {
      const on = await session(seed, true);
      const off = await session(seed, false);
      expect(off, `seed ${seed}`).toBe(on);
      // Nothing was left unfinished (no "spun" record with a completion still missing).
      expect(on).not.toMatch(/"spun",[0-9.e+-]+,\[[1-9]/);
    }
    expect(trainStats.whole - before.whole).toBeGreaterThan(100);
  }, 240_000);

  it("the benchmark's shape (batches of equal WRITEs, the last signaled) leaves the same, looked at or not", async () => {
    const before = { ...trainStats };
    for (let seed = 1; seed <= 24; seed++) {
      const on = await benchSession(seed, true);
      const off = await benchSession(seed, false);
      expect(off, `seed ${seed}`).toBe(on);
    }
    expect(trainStats.whole - before.whole).toBeGreaterThan(100);
    // Trains of one message sent at the window's reopenings travel as one record.
    expect(trainStats.joined - before.joined).toBeGreaterThan(100);
  }, 240_000);

  for (const wire of ["rxe", "100GbE"] as const)
    it(`a program waking at the very instant a train's packet arrives sees it received (${wire} wire)`, async () => {
      const w = wireProfile(wire);
      for (const k of [0, 1, 30]) {
        const seen = [];
        for (const packetLog of [true, false]) {
          const b = createSimBackend({ packetLog, wire });
          const a = makeEnd(b.openDevice("rxe0"));
          const z = makeEnd(b.openDevice("rxe1"));
          connectRc(a, z);
          connectRc(z, a);
          const src = a.pd.regMr(65536, ALL_ACCESS);
          const dst = z.pd.regMr(65536, ALL_ACCESS);
          src.bytes.fill(9);
          a.qp.postSend({
            wr_id: 1,
            opcode: IBV_WR_RDMA_WRITE,
            send_flags: IBV_SEND_SIGNALED,
            sg_list: [src.sge(0, 40 * 1024)],
            rdma: { remote_addr: dst.addr, rkey: dst.rkey },
          });
          // Packet k of the 40 arrives (k + 1) holds and the latency after the post.
          await b.sleep(((k + 1) * holdNs(w, 1024) + w.latencyNs) / 1e6);
          seen.push([z.ctx.queryCounters().rcvd_pkts, dst.bytes[k * 1024], dst.bytes[(k + 1) * 1024]]);
        }
        expect(seen, `packet ${k}`).toEqual([
          [k + 1, 9, 0],
          [k + 1, 9, 0],
        ]);
      }
    });
});
