/**
 * Run by gc.test.ts as `node --expose-gc --import tsx native/test/gc-child.ts` in the lab VM.
 * Uses the raw addon so that nothing but the native MR holds the ArrayBuffer, and prints one
 * JSON line of observations for the test to judge.
 */
import * as v from "../../verbs/constants.js";
import { VerbsError } from "../../verbs/errors.js";
import { loadAddon, type NativeCq } from "../addon.js";
import { rdmaResShowQp } from "../rdma-res.js";
import { ACCESS, connectRc } from "../tools/rc-pair.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");
const loaded = loadAddon();
if (!("addon" in loaded)) throw new Error(loaded.missing);
const addon = loaded.addon;
addon.init({ VerbsError });

/** Several full collections with turns of the event loop between them (finalizers run there). */
async function collect(): Promise<void> {
  for (let i = 0; i < 8; i++) {
    gc!();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 5));
  }
}

const CAP = { max_send_wr: 8, max_recv_wr: 8, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };

async function waitStatus(cq: NativeCq): Promise<number> {
  const out = new Uint32Array(addon.WC_WORDS);
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (cq.poll(1, out) === 1) return out[2];
    await new Promise((r) => setTimeout(r, 1));
  }
  return -1;
}

const ctx = addon.openDevice("rxe0");
const gid = ctx.queryGidTable().find((g) => g.gid.startsWith("fe80"))!;
const pd = ctx.allocPd();
const cq = ctx.createCq(16, null, 0);
const a = pd.createQp({ send_cq: cq, recv_cq: cq, cap: CAP, qp_type: v.IBV_QPT_RC });
const b = pd.createQp({ send_cq: cq, recv_cq: cq, cap: CAP, qp_type: v.IBV_QPT_RC });
// A short timeout and one retry: a failure shows within seconds, not minutes.
connectRc(a, b.qp_num, gid, gid.gid, { access: ACCESS, timeout: 10, retry: 1 });
connectRc(b, a.qp_num, gid, gid.gid, { access: ACCESS, timeout: 10, retry: 1 });
const srcBuf = new Uint8Array(64).fill(0xab);
const src = pd.regMr(srcBuf.buffer, 0, 64, ACCESS);

// 1. Registered memory nothing else references stays alive, and the NIC writes into it.
let weak: WeakRef<ArrayBuffer> | undefined;
const target: { addr: number; rkey: number; mr?: unknown } = { addr: 0, rkey: 0 };
(() => {
  const buf = new ArrayBuffer(4096);
  weak = new WeakRef(buf);
  const mr = pd.regMr(buf, 0, 4096, ACCESS);
  Object.assign(target, { addr: mr.addr, rkey: mr.rkey, mr });
})();
await collect();
const aliveWhileRegistered = weak!.deref() !== undefined;
const write = (wr_id: number) =>
  a.postSend([
    {
      wr_id,
      opcode: v.IBV_WR_RDMA_WRITE,
      send_flags: v.IBV_SEND_SIGNALED,
      sg_list: [{ addr: src.addr, length: 64, lkey: src.lkey }],
      rdma: { remote_addr: target.addr, rkey: target.rkey },
    },
  ]);
write(1);
const firstStatus = await waitStatus(cq);
const landed = Array.from(new Uint8Array(weak!.deref() ?? new ArrayBuffer(0), 0, 4));

// 2. Once the MR is unreachable, its finalizer deregisters it before V8 may free the memory:
// the buffer is collected, and a write to the old address and rkey is refused by the NIC.
target.mr = undefined;
await collect();
await collect();
const collectedAfterDrop = weak!.deref() === undefined;
write(2);
const secondStatus = await waitStatus(cq);

// 3. A whole graph dropped at once: finalizers run in any order, parents never go first.
let droppedQpn = 0;
(() => {
  const c2 = addon.openDevice("rxe0");
  const p2 = c2.allocPd();
  const ch2 = c2.createCompChannel();
  const q2cq = c2.createCq(4, ch2, 0);
  const q2 = p2.createQp({ send_cq: q2cq, recv_cq: q2cq, cap: CAP, qp_type: v.IBV_QPT_RC });
  p2.regMr(new ArrayBuffer(128), 0, 128, ACCESS);
  droppedQpn = q2.qp_num;
})();
const listedBefore = (await rdmaResShowQp())?.some((q) => q.lqpn === droppedQpn) ?? null;
await collect();
await collect();
const listedAfter = (await rdmaResShowQp())?.some((q) => q.lqpn === droppedQpn) ?? null;

console.log(
  JSON.stringify({
    aliveWhileRegistered,
    firstStatus,
    landed,
    collectedAfterDrop,
    secondStatus,
    droppedQpn,
    listedBefore,
    listedAfter,
  }),
);
ctx.close();
