/**
 * The session at scale: verbs per second through a session (in-process, simulator) while it
 * holds N live QPs, the memory it holds, and transcript bytes per verb on disk. Each case runs in
 * its own child process (fork), so its RSS and heap are its own.
 *
 * A case: create `qps` RC QPs through the session (the rate of the last 1,000 creations is
 * createQp/s at that size), connect two of them, then run a traffic program of `verbs` verbs
 * (postRecv, postSend signaled, poll until both completions: a typical lesson loop) with the
 * transcript written to a file, as the app does.
 *
 *   tsx scripts/bench-scale.ts --case <qps> <verbs>   one case, its figures as one JSON line
 *   (npm run bench runs the cases: scaleCases() below)
 */
import { fork } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createSimBackend } from "../sim/index.js";
import { createSession } from "../app/session/session.js";
import { appendFileSink } from "../app/session/transcript-file.js";
import { goodModify } from "../state-machines/qp-paths.js";
import type { VerbsQp } from "../app/session/verbs-api.js";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_RC,
  IBV_SEND_SIGNALED,
  IBV_WR_SEND,
} from "../verbs/constants.js";

export interface ScaleFigures {
  live_qps: number;
  verbs: number;
  /** createQp calls per second over the last 1,000 created. */
  create_qp_per_sec: number;
  /** Traffic verbs per second through the session (wall time: the session awaits each call). */
  verbs_per_sec: number;
  rss_mb: number;
  heap_used_mb: number;
  transcript_bytes_per_verb: number;
  seconds: number;
}

const cap = { max_send_wr: 16, max_recv_wr: 16, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };

async function bringUp(qp: VerbsQp, dest_qp_num: number, dgid: string): Promise<void> {
  for (const [from, to] of [
    [IBV_QPS_RESET, IBV_QPS_INIT],
    [IBV_QPS_INIT, IBV_QPS_RTR],
    [IBV_QPS_RTR, IBV_QPS_RTS],
  ] as const) {
    const m = goodModify(IBV_QPT_RC, from, to, { dgid, dest_qp_num })!;
    await qp.modify(m.attr, m.mask);
  }
}

/** One case, in this process. */
export async function scaleCase(qps: number, verbs: number): Promise<ScaleFigures> {
  const t0 = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "verbslab-bench-"));
  const path = join(dir, "t.jsonl");
  try {
    const session = createSession({
      backend: createSimBackend({ seed: 1, packetLog: false }),
      sink: appendFileSink(path),
    });
    let events = 0;
    session.subscribe(() => events++);
    const v = session.verbs;
    const ctx = await v.openDevice("rxe0");
    const gid = await ctx.queryGid(1, 0);
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(4096);
    const mr = await pd.regMr(4096, IBV_ACCESS_LOCAL_WRITE);
    const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    const idleCq = await ctx.createCq(16);
    let tLast = performance.now();
    for (let i = 2; i < qps; i++) {
      if (i === qps - 1000) tLast = performance.now();
      await pd.createQp({ send_cq: idleCq, recv_cq: idleCq, cap, qp_type: IBV_QPT_RC });
    }
    const createRate = Math.min(1000, qps - 2) / ((performance.now() - tLast) / 1000);
    await bringUp(a, b.qp_num, gid);
    await bringUp(b, a.qp_num, gid);

    const start = events;
    const bytesBefore = statSync(path).size;
    const t1 = performance.now();
    const recv = { wr_id: 1, sg_list: [mr.sge(0, 64)] };
    const send = { wr_id: 2, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(64, 64)] };
    while (events - start < verbs) {
      await b.postRecv(recv);
      await a.postSend(send);
      let got = 0;
      while (got < 2) got += (await cq.poll(2)).length;
    }
    const seconds = (performance.now() - t1) / 1000;
    const done = events - start;
    const bytes = statSync(path).size - bytesBefore;
    // After a full collection (the child runs with --expose-gc): what the session holds, not garbage.
    (globalThis as { gc?: () => void }).gc?.();
    const mem = process.memoryUsage();
    session.end("ok");
    return {
      live_qps: qps,
      verbs: done,
      create_qp_per_sec: Math.round(createRate),
      verbs_per_sec: Math.round(done / seconds),
      rss_mb: Math.round(mem.rss / 2 ** 20),
      heap_used_mb: Math.round(mem.heapUsed / 2 ** 20),
      transcript_bytes_per_verb: Math.round(bytes / done),
      seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs one case in a child process (its own memory) and returns its figures. */
function inChild(qps: number, verbs: number): Promise<ScaleFigures> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ["--case", String(qps), String(verbs)], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      execArgv: [...process.execArgv, "--expose-gc"],
    });
    let got: ScaleFigures | undefined;
    child.on("message", (m) => (got = m as ScaleFigures));
    child.on("error", reject);
    child.on("exit", (code) =>
      got ? resolve(got) : reject(new Error(`bench: the scale case ${qps} QPs / ${verbs} verbs exited with ${code}`)),
    );
  });
}

/**
 * The cases: 1,000 and 10,000 live QPs with a 20,000-verb program, and a 100,000-verb program;
 * `full` (npm run bench -- --scale-full) adds 100,000 live QPs and a 1,000,000-verb program.
 */
export async function scaleCases(full: boolean): Promise<ScaleFigures[]> {
  const cases: [number, number][] = [
    [1000, 20_000],
    [10_000, 20_000],
    ...(full ? ([[100_000, 20_000]] as [number, number][]) : []),
    [1000, full ? 1_000_000 : 100_000],
  ];
  const out: ScaleFigures[] = [];
  for (const [q, n] of cases) out.push(await inChild(q, n));
  return out;
}

if (process.argv[2] === "--case") {
  const figures = await scaleCase(Number(process.argv[3]), Number(process.argv[4]));
  if (process.send) process.send(figures, () => process.disconnect());
  else console.log(JSON.stringify(figures));
}
