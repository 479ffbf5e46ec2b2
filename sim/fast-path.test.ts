/**
 * The fast path (packet trains, fast-path.ts) is only taken with the packet log off; the
 * packet-by-packet path, used with the log on, is the reference. The same randomized
 * sessions run both ways must leave identical completions, errors, hw counters, query_qp
 * results, async events, memory and virtual clock.
 */
import { describe, expect, it } from "vitest";
import {
  IBV_MTU_256,
  IBV_MTU_4096,
  IBV_QPT_RC,
  IBV_SEND_INLINE,
  IBV_SEND_SIGNALED,
  IBV_SEND_SOLICITED,
  IBV_WR_RDMA_READ,
  IBV_WR_RDMA_WRITE,
  IBV_WR_RDMA_WRITE_WITH_IMM,
  IBV_WR_SEND,
  IBV_WR_SEND_WITH_IMM,
} from "../verbs/constants.js";
import type { CompChannel, Context, Mr } from "../verbs/backend.js";
import type { SendWr, Sge } from "../verbs/types.js";
import { trainStats } from "./fast-path.js";
import { createSimBackend } from "./index.js";
import { ALL_ACCESS, connectRc, type End } from "./testing.js";

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

const MR_BYTES = 256 * 1024;

function fnv(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}

function end(ctx: Context, shared: Uint8Array | null, cqDepth = 512): End {
  const pd = ctx.allocPd();
  const cq = ctx.createCq(cqDepth, { channel: ctx.createCompChannel() });
  const qp = pd.createQp({
    send_cq: cq,
    recv_cq: cq,
    qp_type: IBV_QPT_RC,
    cap: { max_send_wr: 64, max_recv_wr: 64, max_send_sge: 3, max_recv_sge: 3, max_inline_data: 256 },
  });
  const mr = pd.regMr(shared ?? MR_BYTES, ALL_ACCESS);
  return { ctx, pd, cq, qp, mr };
}

/** `len` bytes at `off` of `mr`, split into up to `most` SGEs (some possibly empty). */
function sges(rnd: () => number, mr: Mr, off: number, len: number, most = 3): Sge[] {
  const n = 1 + Math.floor(rnd() * most);
  const out: Sge[] = [];
  let left = len;
  for (let k = 0; k < n; k++) {
    const take = k === n - 1 ? left : Math.floor(rnd() * (left + 1));
    out.push({ addr: mr.addr + off, length: take, lkey: mr.lkey });
    off += take;
    left -= take;
  }
  return out;
}

async function cqEvents(e: End): Promise<number> {
  const ch = (e.cq as unknown as { channel: CompChannel }).channel;
  let n = 0;
  while (await ch.getCqEvent(0)) n++;
  return n;
}

/** One scripted session; everything a program could observe, as JSON. */
async function session(seed: number, packetLog: boolean): Promise<string> {
  const rnd = generator(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  // A fast wire: with the rxe model's slow link, the random 4 ms ACK timeouts with endless
  // retries below resend whole windows while the first copies are still queued (go-back-N),
  // which is what such a program would do but makes this comparison run for minutes.
  const b = createSimBackend({ seed: 3, packetLog, wire: "100GbE" });
  const c0 = b.openDevice("rxe0");
  const c1 = b.openDevice("rxe1");
  const seen: unknown[] = [];
  const record = (what: string, v: unknown) => seen.push([what, b.now(), v]);
  for (let scenario = 0; scenario < 3; scenario++) {
    const mtuEnum = IBV_MTU_256 + Math.floor(rnd() * (IBV_MTU_4096 - IBV_MTU_256 + 1));
    const mtu = 128 << mtuEnum;
    const loopback = rnd() < 0.3;
    const a = end(c0, null);
    // Loopback may register the sender's own memory again: sources and targets overlap.
    const z = end(loopback ? c0 : c1, loopback && rnd() < 0.6 ? a.mr.bytes : null);
    for (const e of [a, z]) for (let i = 0; i < e.mr.bytes.length; i++) e.mr.bytes[i] = (rnd() * 256) | 0;
    const opts = () => ({
      path_mtu: mtuEnum,
      timeout: pick([1, 2, 14]),
      retry_cnt: pick([0, 1, 7]),
      rnr_retry: pick([0, 2, 7]),
      min_rnr_timer: pick([1, 4, 12]),
    });
    connectRc(a, z, opts());
    connectRc(z, a, opts());
    const sizes = [0, 1, 64, mtu - 1, mtu, mtu + 1, 2 * mtu, 3 * mtu + 5, 64 * mtu, 65 * mtu, 66 * mtu + 3, 130 * mtu];
    const size = () => Math.min(100_000, rnd() < 0.2 ? Math.floor(rnd() * 100_000) : pick(sizes));
    let wrId = 0;
    for (let step = 0; step < 40; step++) {
      const [from, to] = rnd() < 0.7 ? [a, z] : [z, a];
      const r = rnd();
      try {
        if (r < 0.25) {
          const n = 1 + Math.floor(rnd() * 8);
          const wrs = [];
          for (let i = 0; i < n; i++) {
            const len = rnd() < 0.1 ? 16 : size();
            wrs.push({ wr_id: wrId++, sg_list: sges(rnd, to.mr, Math.floor(rnd() * (MR_BYTES - len)), len) });
          }
          to.qp.postRecv(wrs);
        } else if (r < 0.75) {
          const n = 1 + Math.floor(rnd() * 16);
          const wrs: SendWr[] = [];
          for (let i = 0; i < n; i++) {
            const opcode = pick([
              IBV_WR_SEND,
              IBV_WR_SEND_WITH_IMM,
              IBV_WR_RDMA_WRITE,
              IBV_WR_RDMA_WRITE,
              IBV_WR_RDMA_WRITE_WITH_IMM,
              IBV_WR_RDMA_READ,
            ]);
            const len = size();
            const inline = len <= 256 && opcode !== IBV_WR_RDMA_READ && rnd() < 0.3;
            let remote = to.mr.addr + Math.floor(rnd() * (MR_BYTES - len));
            if (rnd() < 0.03) remote = to.mr.addr + MR_BYTES - Math.floor(len / 2); // runs off the end
            wrs.push({
              wr_id: wrId++,
              opcode,
              send_flags:
                (rnd() < 0.5 ? IBV_SEND_SIGNALED : 0) |
                (inline ? IBV_SEND_INLINE : 0) |
                (rnd() < 0.2 ? IBV_SEND_SOLICITED : 0),
              imm_data: wrId,
              sg_list: sges(rnd, from.mr, Math.floor(rnd() * (MR_BYTES - len)), len),
              rdma: { remote_addr: remote, rkey: rnd() < 0.02 ? to.mr.rkey ^ 0x100 : to.mr.rkey },
            });
          }
          from.qp.postSend(wrs);
        } else if (r < 0.83) {
          await b.sleep(pick([1, 5, 30]));
        } else if (r < 0.91 && !loopback) {
          // An outage long enough for some retransmits (retry_cnt 1 gives up on the second).
          b.setLinkState("rxe0", false);
          await b.sleep(pick([1, 10, 20]));
          b.setLinkState("rxe0", true);
        } else if (r < 0.95) {
          record("query", [a.qp.query().attr, z.qp.query().attr]);
        } else {
          // Arm both CQs; which completions raise an event depends on the solicited bits.
          const solicitedOnly = rnd() < 0.7;
          a.cq.reqNotify(solicitedOnly);
          z.cq.reqNotify(solicitedOnly);
        }
      } catch (e) {
        record("error", (e as { code?: string }).code ?? String(e));
      }
      record("poll", [a.cq.poll(512), z.cq.poll(512), await cqEvents(a), await cqEvents(z)]);
    }
    await b.sleep(200);
    record("end", {
      wcs: [a.cq.poll(512), z.cq.poll(512)],
      qps: [a.qp.query(), z.qp.query()],
      mrs: [fnv(a.mr.bytes), fnv(z.mr.bytes)],
      counters: [c0.queryCounters(), c1.queryCounters()],
      cqEvents: [await cqEvents(a), await cqEvents(z)],
    });
  }
  const events = [];
  for (const c of [c0, c1]) for (let e = await c.getAsyncEvent(0); e; e = await c.getAsyncEvent(0)) events.push(e);
  record("events", events);
  return JSON.stringify(seen, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
}

/**
 * Batches of small SENDs, as a ping-pong or the benchmark posts them (SEND runs): receives
 * that run out or are too short, a bad lkey or an oversized SEND inside a batch, inline and
 * empty SENDs, WRITEs in between, a CQ small enough to overflow, link outages. With
 * `oneSge` every WR has one SGE (what respondSendRun handles without the general scatter),
 * and the receiver, on the same device, may use the sender's memory (overlapping copies).
 */
async function bursts(seed: number, packetLog: boolean, oneSge = false): Promise<string> {
  const rnd = generator(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const b = createSimBackend({ seed: 7, packetLog, wire: "100GbE" });
  const c0 = b.openDevice("rxe0");
  const c1 = b.openDevice("rxe1");
  const most = oneSge ? 1 : 3;
  const a = end(c0, null);
  const loopback = oneSge && rnd() < 0.3;
  const z = end(loopback ? c0 : c1, loopback ? a.mr.bytes : null, rnd() < (oneSge ? 0.1 : 0.3) ? 16 : 512);
  // The memory comparison at the end needs bytes that differ from the zeros they land on.
  if (oneSge) for (let i = 0; i < MR_BYTES; i++) a.mr.bytes[i] = (rnd() * 256) | 0;
  // With one SGE, WRs pick one of two MRs on each side (consecutive WQEs name different keys).
  const a2 = oneSge ? a.pd.regMr(MR_BYTES, ALL_ACCESS) : a.mr;
  const z2 = oneSge ? z.pd.regMr(MR_BYTES, ALL_ACCESS) : z.mr;
  if (oneSge) for (let i = 0; i < MR_BYTES; i++) a2.bytes[i] = (rnd() * 256) | 0;
  const opts = { path_mtu: IBV_MTU_256, timeout: pick([1, 14]), rnr_retry: pick([1, 7, 7]), min_rnr_timer: 1 };
  connectRc(a, z, opts);
  connectRc(z, a, opts);
  const seen: unknown[] = [];
  const record = (what: string, v: unknown) => seen.push([what, b.now(), v]);
  let wrId = 0;
  for (let step = 0; step < 30; step++) {
    if (rnd() < (oneSge ? 0.8 : 0.3)) z.cq.reqNotify(rnd() < 0.5);
    const sends = 1 + Math.floor(rnd() * 64);
    try {
      // Usually a receive for every SEND; sometimes too few (RNR NAKs partway through a run).
      const recvs = [];
      for (let i = rnd() < 0.2 ? Math.floor(rnd() * sends) : sends; i > 0; i--) {
        const len = rnd() < (oneSge ? 0.0005 : 0.005) ? 8 : 256;
        const at = Math.floor(rnd() * (MR_BYTES - len));
        const sg = sges(rnd, oneSge && rnd() < 0.5 ? z2 : z.mr, oneSge && rnd() < 0.8 ? at & ~3 : at, len, most);
        if (oneSge && rnd() < 0.0003) sg[0] = { ...sg[0], lkey: sg[0].lkey ^ 0x100 };
        recvs.push({ wr_id: wrId++, sg_list: sg });
      }
      if (recvs.length) z.qp.postRecv(recvs);
    } catch (e) {
      record("error", (e as { code?: string }).code ?? String(e));
    }
    try {
      const wrs: SendWr[] = [];
      for (let i = sends; i > 0; i--) {
        const r = rnd();
        const opcode = r < 0.9 ? IBV_WR_SEND : r < 0.95 ? IBV_WR_SEND_WITH_IMM : IBV_WR_RDMA_WRITE;
        const len = rnd() < (oneSge ? 0.002 : 0.02) ? 300 : pick([0, 4, 61, 64, 255, 256]);
        // Mostly word-aligned offsets with one SGE (as real buffers are), else any.
        const at = Math.floor(rnd() * (MR_BYTES - len));
        const sg = sges(rnd, oneSge && rnd() < 0.5 ? a2 : a.mr, oneSge && rnd() < 0.8 ? at & ~3 : at, len, most);
        if (rnd() < 0.003 && sg.length) sg[0] = { ...sg[0], lkey: sg[0].lkey ^ 0x100 };
        // A source that runs off the end of the MR (LOC_PROT_ERR).
        if (oneSge && rnd() < 0.002) sg[0] = { ...sg[0], addr: a.mr.addr + MR_BYTES - 2 };
        wrs.push({
          wr_id: wrId++,
          opcode,
          send_flags:
            (rnd() < 0.3 ? IBV_SEND_SIGNALED : 0) |
            (rnd() < 0.1 ? IBV_SEND_INLINE : 0) |
            (rnd() < 0.1 ? IBV_SEND_SOLICITED : 0),
          imm_data: wrId,
          sg_list: sg,
          rdma: { remote_addr: z.mr.addr + Math.floor(rnd() * (MR_BYTES - len)), rkey: z.mr.rkey },
        });
      }
      a.qp.postSend(wrs);
    } catch (e) {
      record("error", (e as { code?: string }).code ?? String(e));
    }
    const r = rnd();
    if (r < 0.2) await b.sleep(pick([1, 5, 30]));
    else if (r < 0.25) {
      b.setLinkState("rxe1", false);
      await b.sleep(pick([1, 10]));
      b.setLinkState("rxe1", true);
    }
    record("poll", [a.cq.poll(512), z.cq.poll(512), await cqEvents(a), await cqEvents(z)]);
  }
  await b.sleep(200);
  record("end", {
    wcs: [a.cq.poll(512), z.cq.poll(512)],
    qps: [a.qp.query(), z.qp.query()],
    mrs: [fnv(a.mr.bytes), fnv(z.mr.bytes), fnv(z2.bytes)],
    counters: [c0.queryCounters(), c1.queryCounters()],
  });
  const events = [];
  for (const c of [c0, c1])
    for (let e = await c.getAsyncEvent(0); e; e = await c.getAsyncEvent(0))
      events.push([e.event_type, e.cq === z.cq, e.qp_num, e.port_num]);
  record("events", events);
  return JSON.stringify(seen);
}

/** A simulator with one RC pair, rxe0 ↔ rxe1, connected both ways with `attrs`. */
function connectedPair(seed: number, packetLog: boolean, attrs: Parameters<typeof connectRc>[2]) {
  const b = createSimBackend({ seed, packetLog });
  const a = end(b.openDevice("rxe0"), null);
  const z = end(b.openDevice("rxe1"), null);
  connectRc(a, z, attrs);
  connectRc(z, a, attrs);
  return { b, a, z };
}

/** Outages, each costing two retransmits, with retry_cnt 2: the ACK after each must restore the count. */
async function outages(packetLog: boolean): Promise<string> {
  const { b, a, z } = connectedPair(5, packetLog, { timeout: 1, retry_cnt: 2 });
  const seen: unknown[] = [];
  for (let round = 0; round < 3; round++) {
    for (const len of [64, 5000]) {
      b.setLinkState("rxe0", false);
      a.qp.postSend({
        wr_id: round,
        opcode: IBV_WR_RDMA_WRITE,
        send_flags: IBV_SEND_SIGNALED,
        sg_list: [a.mr.sge(0, len)],
        rdma: { remote_addr: z.mr.addr, rkey: z.mr.rkey },
      });
      await b.sleep(10);
      b.setLinkState("rxe0", true);
      seen.push(await a.cq.pollWait(1, 100), a.qp.query().attr.qp_state, b.now());
    }
  }
  return JSON.stringify(seen);
}

/**
 * Batches of SENDs acknowledged at once (ACK trains), then, a little later, a SEND lost to
 * an outage: its retransmit time shows whether the ACKs left the timer stopped.
 */
async function ackTrainsThenLoss(packetLog: boolean): Promise<string> {
  const { b, a, z } = connectedPair(9, packetLog, { timeout: 12, retry_cnt: 7 });
  const seen: unknown[] = [];
  for (const [count, pause] of [
    [8, 3],
    [1, 9],
    [40, 1],
    [3, 0],
  ]) {
    const recvs = [];
    const sends: SendWr[] = [];
    for (let i = 0; i < count; i++) {
      recvs.push({ wr_id: i, sg_list: [z.mr.sge(i * 64, 64)] });
      sends.push({ wr_id: i, opcode: IBV_WR_SEND, send_flags: 0, sg_list: [a.mr.sge(i * 64, 64)] });
    }
    z.qp.postRecv(recvs);
    a.qp.postSend(sends);
    await b.sleep(pause);
    b.setLinkState("rxe0", false);
    z.qp.postRecv({ wr_id: 99, sg_list: [z.mr.sge(0, 64)] });
    a.qp.postSend({ wr_id: 99, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 64)] });
    await b.sleep(1);
    b.setLinkState("rxe0", true);
    seen.push(await a.cq.pollWait(1, 1000), b.now(), z.cq.poll(64).length);
  }
  return JSON.stringify(seen);
}

describe("packet trains (packet log off) match the packet-by-packet path (log on)", () => {
  it("leaves the same observable state on randomized RC workloads", async () => {
    const before = { ...trainStats };
    for (let seed = 1; seed <= 24; seed++) {
      const on = await session(seed, true);
      const off = await session(seed, false);
      expect(off, `seed ${seed}`).toBe(on);
    }
    // Both the whole-train path and the split fallback were exercised.
    expect(trainStats.whole - before.whole).toBeGreaterThan(50);
    expect(trainStats.split - before.split).toBeGreaterThan(0);
    expect(trainStats.ackTrains - before.ackTrains).toBeGreaterThan(0);
  }, 120_000);

  it("leaves the same observable state on bursts of small SENDs", async () => {
    const before = { ...trainStats };
    for (let seed = 1; seed <= 24; seed++) {
      const on = await bursts(seed, true);
      const off = await bursts(seed, false);
      expect(off, `seed ${seed}`).toBe(on);
    }
    // SEND runs were taken whole and also left midway for the reference path.
    expect(trainStats.runsWhole - before.runsWhole).toBeGreaterThan(50);
    expect(trainStats.runsSplit - before.runsSplit).toBeGreaterThan(10);
  }, 120_000);

  it("leaves the same observable state on bursts of one-SGE SENDs", async () => {
    const before = { ...trainStats };
    for (let seed = 1; seed <= 24; seed++) {
      const on = await bursts(seed, true, true);
      const off = await bursts(seed, false, true);
      expect(off, `seed ${seed}`).toBe(on);
    }
    // respondSendRun's one-SGE loop ran, and also gave packets to the general code.
    expect(trainStats.runPackets - before.runPackets).toBeGreaterThan(1000);
    expect(trainStats.runsSplit - before.runsSplit).toBeGreaterThan(10);
  }, 120_000);

  it("leaves the retransmit timer after an ACK train as the reference path does", async () => {
    expect(await ackTrainsThenLoss(false)).toBe(await ackTrainsThenLoss(true));
  });

  it("restores the retry count on a plain ACK as the reference path does", async () => {
    expect(await outages(false)).toBe(await outages(true));
  });
});
