/**
 * The simulator's bandwidth-vs-size curve on a wire profile (sim/wire.ts), in virtual time:
 * RDMA WRITE rxe0 → rxe1 at path MTU 1024, ib_write_bw's loop (up to 128 WRs in flight, every
 * 64th signaled). With a JSON file from scripts/bench-rxe-curve.sh (real rxe in the lab VM),
 * compares the curve's shape: bandwidth at 4 KiB, 64 KiB and 1 MiB relative to 1 MiB, on
 * rxe and on the simulator's rxe profile, each within 20% of rxe's.
 *
 *   npx tsx scripts/bench-curve-sim.ts [--wire rxe|25GbE|100GbE] [rxe-curve.json]
 */
import { readFileSync } from "node:fs";
import { createSimBackend, type WireModel } from "../sim/index.js";
import { connectRc, ALL_ACCESS } from "../sim/testing.js";
import { IBV_QPT_RC, IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE, IBV_WC_SUCCESS } from "../verbs/constants.js";

const SIZES = [256, 1024, 4096, 16384, 65536, 262144, 1048576];
const SHAPE = [4096, 65536, 1048576];
const TX_DEPTH = 128;
const CQ_MOD = 64;

/** MB/s (10^6 bytes per virtual second) of `iters` WRITEs of `size` bytes. */
export function simBandwidth(wire: WireModel, size: number, iters: number): number {
  const b = createSimBackend({ seed: 1, packetLog: false, wire });
  const end = (dev: string) => {
    const ctx = b.openDevice(dev);
    const pd = ctx.allocPd();
    const cq = ctx.createCq(1024);
    const qp = pd.createQp({
      send_cq: cq,
      recv_cq: cq,
      qp_type: IBV_QPT_RC,
      cap: { max_send_wr: TX_DEPTH, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
    });
    const mr = pd.regMr(size, ALL_ACCESS);
    return { ctx, pd, cq, qp, mr };
  };
  const a = end("rxe0");
  const z = end("rxe1");
  connectRc(a, z, { timeout: 20 });
  connectRc(z, a, { timeout: 20 });
  let posted = 0;
  let completed = 0;
  const t0 = b.now();
  while (completed < iters) {
    while (posted - completed < TX_DEPTH && posted < iters) {
      const i = posted++;
      a.qp.postSend({
        wr_id: i,
        opcode: IBV_WR_RDMA_WRITE,
        send_flags: (i + 1) % CQ_MOD === 0 || i === iters - 1 ? IBV_SEND_SIGNALED : 0,
        sg_list: [a.mr.sge(0, size)],
        rdma: { remote_addr: z.mr.addr, rkey: z.mr.rkey },
      });
    }
    for (const wc of a.cq.poll(16)) {
      if (wc.status !== IBV_WC_SUCCESS) throw new Error(`WRITE ${wc.wr_id} failed: status ${wc.status}`);
      completed = wc.wr_id + 1;
    }
  }
  const ms = b.now() - t0;
  return (size * iters) / 1e3 / ms;
}

const args = process.argv.slice(2);
const wi = args.indexOf("--wire");
const wire = (wi >= 0 ? args.splice(wi, 2)[1] : "rxe") as WireModel;
const rxeFile = args[0];
const sim = SIZES.map((bytes) => ({
  bytes,
  mb_per_s: simBandwidth(wire, bytes, Math.max(64, Math.min(2000, Math.floor((8 << 20) / bytes)))),
}));
console.log(`simulator, wire ${wire}: ${sim.map((r) => `${r.bytes} B ${r.mb_per_s.toFixed(2)} MB/s`).join(", ")}`);
if (rxeFile) {
  const rxe = JSON.parse(readFileSync(rxeFile, "utf8").trim().split("\n").pop()!) as {
    sizes: { bytes: number; mb_per_s: number }[];
  };
  const at = (rows: { bytes: number; mb_per_s: number }[], n: number) => rows.find((r) => r.bytes === n)?.mb_per_s;
  const rxeTop = at(rxe.sizes, 1048576)!;
  const simTop = at(sim, 1048576)!;
  let ok = true;
  console.log("relative bandwidth (vs 1 MiB)   rxe    sim   sim/rxe");
  for (const n of SHAPE) {
    const r = at(rxe.sizes, n)! / rxeTop;
    const s = at(sim, n)! / simTop;
    const within = Math.abs(s / r - 1) <= 0.2;
    ok &&= within;
    console.log(
      `${String(n).padStart(8)} B                  ${r.toFixed(2)}   ${s.toFixed(2)}   ${(s / r).toFixed(2)}  ${within ? "within 20%" : "MISSED"}`,
    );
  }
  console.log(JSON.stringify({ wire, sim, rxe: rxe.sizes, shapeWithin20: ok }));
}
