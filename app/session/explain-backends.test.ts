/**
 * Each remote failure through the session, on the simulator (the responder's exact reason)
 * and on a backend that gives none, as native (inferred from both sides' objects by the one
 * inference function): the status a learner polls, and a reason that names the cause.
 */
import { wcReasonText } from "../../verbs/wc-reason.js";
import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../sim/index.js";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_READ,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_RC,
  IBV_SEND_SIGNALED,
  IBV_WC_LOC_PROT_ERR,
  IBV_WC_REM_ACCESS_ERR,
  IBV_WC_REM_INV_REQ_ERR,
  IBV_WC_REM_OP_ERR,
  IBV_WC_RETRY_EXC_ERR,
  IBV_WR_RDMA_WRITE,
  IBV_WR_SEND,
  ibv_wc_status,
  nameOf,
} from "../../verbs/constants.js";
import type { VerbsBackend } from "../../verbs/backend.js";
import type { QpAttrInput } from "../../verbs/types.js";
import { goodModify } from "../../state-machines/qp-paths.js";
import { BACKEND_KIND, getBackend } from "../../verbs/conformance/harness.js";
import { createSession } from "./session.js";
import type { VerbEvent } from "./transcript.js";
import type { Verbs, VerbsMr, VerbsQp } from "./verbs-api.js";

function withoutReasons(): VerbsBackend {
  const sim = createSimBackend({ seed: 4 });
  return {
    kind: "sim",
    getDeviceList: () => sim.getDeviceList(),
    openDevice: (n) => sim.openDevice(n),
    now: () => sim.now(),
    sleep: (ms) => sim.sleep(ms),
  };
}

interface Setup {
  /** Attribute overrides for QP a (the sender) and b, per target state. */
  a?: Partial<Record<number, QpAttrInput>>;
  b?: Partial<Record<number, QpAttrInput>>;
}

async function scenario(
  verbs: Verbs,
  setup: Setup,
  act: (x: { a: VerbsQp; b: VerbsQp; mr: VerbsMr; ro: VerbsMr }) => Promise<void>,
) {
  const ctx = await verbs.openDevice("rxe0");
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(16);
  const mr = await pd.regMr(256, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  const ro = await pd.regMr(256, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
  const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  for (const [qp, peer, over] of [
    [a, b, setup.a],
    [b, a, setup.b],
  ] as const)
    for (const [from, to] of [
      [IBV_QPS_RESET, IBV_QPS_INIT],
      [IBV_QPS_INIT, IBV_QPS_RTR],
      [IBV_QPS_RTR, IBV_QPS_RTS],
    ] as const) {
      const m = goodModify(IBV_QPT_RC, from, to, { dgid: gid, dest_qp_num: peer.qp_num })!;
      await qp.modify({ ...m.attr, ...(to === IBV_QPS_RTS && { retry_cnt: 1 }), ...over?.[to] }, m.mask);
    }
  await act({ a, b, mr, ro });
  // The sender's completion (the receiver's may come first on the shared CQ).
  for (let i = 0; i < 3; i++) {
    const [wc] = await cq.pollWait(1, 10_000);
    if (wc?.qp_num === a.qp_num) return wc;
  }
  throw new Error("no completion for the sender");
}

const write = (x: { a: VerbsQp; mr: VerbsMr }, target: { addr: number; rkey: number }, length = 16) =>
  x.a.postSend({
    wr_id: 1,
    opcode: IBV_WR_RDMA_WRITE,
    send_flags: IBV_SEND_SIGNALED,
    sg_list: [x.mr.sge(0, length)],
    rdma: { remote_addr: target.addr, rkey: target.rkey },
  });

const CASES: {
  name: string;
  status: number;
  setup?: Setup;
  act: Parameters<typeof scenario>[2];
  simulator: RegExp;
  inferred: RegExp;
}[] = [
  {
    name: "a WRITE past the MR's end",
    status: IBV_WC_REM_ACCESS_ERR,
    act: (x) => write(x, { addr: x.mr.addr + 240, rkey: x.mr.rkey }, 64),
    simulator: /\(64 bytes\) is outside the MR/,
    inferred: /\(64 bytes\) is outside mr0 .*48 bytes past its end/,
  },
  {
    name: "a WRITE with rkey 0",
    status: IBV_WC_REM_ACCESS_ERR,
    act: (x) => write(x, { addr: x.mr.addr, rkey: 0 }),
    simulator: /rkey 0 names no MR/,
    inferred: /^rkey 0 names no MR/,
  },
  {
    name: "a WRITE into an MR without REMOTE_WRITE",
    status: IBV_WC_REM_ACCESS_ERR,
    act: (x) => write(x, { addr: x.ro.addr, rkey: x.ro.rkey }),
    simulator: /lacks IBV_ACCESS_REMOTE_WRITE/,
    inferred: /^mr1 \(rkey 0x[0-9a-f]+\) lacks IBV_ACCESS_REMOTE_WRITE/,
  },
  {
    name: "a WRITE to a QP without REMOTE_WRITE",
    status: IBV_WC_REM_INV_REQ_ERR,
    setup: { b: { [IBV_QPS_INIT]: { qp_access_flags: IBV_ACCESS_REMOTE_READ } } },
    act: (x) => write(x, { addr: x.mr.addr, rkey: x.mr.rkey }),
    simulator: /qp_access_flags lack IBV_ACCESS_REMOTE_WRITE/,
    inferred: /qp_access_flags lack IBV_ACCESS_REMOTE_WRITE/,
  },
  {
    name: "a wrong dest_qp_num",
    status: IBV_WC_RETRY_EXC_ERR,
    // Above rxe's highest QP number (its QP pool ends at index 0x20000), so no QP has it on native either.
    setup: { a: { [IBV_QPS_RTR]: { dest_qp_num: 0xabcde } } },
    act: (x) => write(x, { addr: x.mr.addr, rkey: x.mr.rkey }),
    simulator: /dropped its packets: no QP 0xabcde/,
    inferred: /dest_qp_num is 703710, and no QP in this session has that number/,
  },
  {
    name: "an sq_psn the peer's rq_psn does not expect",
    status: IBV_WC_RETRY_EXC_ERR,
    setup: { a: { [IBV_QPS_RTS]: { sq_psn: 100 } } },
    act: (x) => write(x, { addr: x.mr.addr, rkey: x.mr.rkey }),
    simulator: /expected PSN 0x0 and got 0x64/,
    inferred: /sq_psn was set to 100 and QP \d+ on rxe0's rq_psn to 0/,
  },
  {
    name: "a SEND longer than the peer's receive",
    status: IBV_WC_REM_OP_ERR,
    act: async (x) => {
      await x.b.postRecv({ wr_id: 5, sg_list: [x.mr.sge(0, 8)] });
      await x.a.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [x.mr.sge(0, 32)] });
    },
    simulator: /the message is longer than its receive WQE \(8 bytes\)/,
    inferred: /the SEND carries 32 bytes, and QP \d+ on rxe0's receive WQE holds 8/,
  },
  {
    name: "a local SGE past its MR",
    status: IBV_WC_LOC_PROT_ERR,
    act: async (x) => {
      await x.b.postRecv({ wr_id: 5, sg_list: [x.mr.sge(0, 64)] });
      const sge = { ...x.mr.sge(0, 16), addr: x.mr.addr + 250 };
      await x.a.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [sge] });
    },
    simulator: /sg_list\[0\] \[0x[0-9a-f]+, 0x[0-9a-f]+\) is outside its MR/,
    inferred: /sg_list\[0\] \[0x[0-9a-f]+, 0x[0-9a-f]+\) is outside mr0/,
  },
];

// On real rxe (VERBSLAB_BACKEND=native, in the lab VM: npm run test:rxe) the reasons are inferred
// from what the device did; here, from the simulator with its own reasons taken away.
const native = await getBackend();
const BACKENDS: [string, "simulator" | "inferred", () => VerbsBackend | undefined][] =
  BACKEND_KIND === "native"
    ? [["real rxe", "inferred", () => ("backend" in native ? native.backend : undefined)]]
    : [
        ["the simulator", "simulator", () => createSimBackend({ seed: 4 })],
        ["a backend without reasons (native)", "inferred", withoutReasons],
      ];

describe.each(BACKENDS)("remote failures explained on %s", (_name, source, backend) => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", async (_n, c) => {
    const b = backend();
    if (!b) throw new Error(`the native backend is unavailable: ${"unavailable" in native ? native.unavailable : ""}`);
    const s = createSession({ backend: b });
    const wc = await scenario(s.verbs, c.setup ?? {}, c.act);
    expect(nameOf(ibv_wc_status, wc.status)).toBe(nameOf(ibv_wc_status, c.status));
    const polled = (s.events() as VerbEvent[]).flatMap((e) => e.completions ?? []);
    const why = polled.find((p) => p.wc === wc || p.wc.qp_num === wc.qp_num)!.why!;
    expect(why.source).toBe(source);
    expect(wcReasonText(why.reason)).toMatch(source === "simulator" ? c.simulator : c.inferred);
  });
});
