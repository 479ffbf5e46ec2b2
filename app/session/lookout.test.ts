/**
 * What the session adds across calls (lookout.ts): failed completions carry why (the
 * simulator's exact reason, or one inferred from both sides' objects where the backend gives
 * none, as native), a CQ destroy that would hang libibverbs is refused before the backend is
 * called, and silent beginner mistakes earn a notice.
 */
import { wcReasonText } from "../../verbs/wc-reason.js";
import { describe, expect, it, vi } from "vitest";
import { createSimBackend } from "../../sim/index.js";
import { SimCq } from "../../sim/cq.js";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_ATOMIC,
  IBV_ACCESS_REMOTE_READ,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_RC,
  IBV_SEND_SIGNALED,
  IBV_WC_REM_ACCESS_ERR,
  IBV_WC_SUCCESS,
  IBV_WR_ATOMIC_FETCH_AND_ADD,
  IBV_WR_RDMA_READ,
  IBV_WR_RDMA_WRITE,
  IBV_WR_SEND,
} from "../../verbs/constants.js";
import type { VerbsBackend } from "../../verbs/backend.js";
import { VerbsError } from "../../verbs/errors.js";
import { goodModify } from "../../state-machines/qp-paths.js";
import { createSession } from "./session.js";
import { toC, toHtml, toMarkdown } from "./export/index.js";
import type { VerbEvent } from "./transcript.js";
import type { Verbs, VerbsQp } from "./verbs-api.js";

/** The simulator without its exact reasons: what the session has on the native backend. */
function withoutReasons(): VerbsBackend {
  const sim = createSimBackend({ seed: 2 });
  return {
    kind: "sim",
    getDeviceList: () => sim.getDeviceList(),
    openDevice: (n) => sim.openDevice(n),
    now: () => sim.now(),
    sleep: (ms) => sim.sleep(ms),
  };
}

async function bringUp(qp: VerbsQp, peer: VerbsQp, dgid: string) {
  for (const [from, to] of [
    [IBV_QPS_RESET, IBV_QPS_INIT],
    [IBV_QPS_INIT, IBV_QPS_RTR],
    [IBV_QPS_RTR, IBV_QPS_RTS],
  ] as const) {
    const m = goodModify(IBV_QPT_RC, from, to, { dgid, dest_qp_num: peer.qp_num })!;
    await qp.modify(m.attr, m.mask);
  }
}

async function loopback(verbs: Verbs, cqe = 16, cap = { max_send_wr: 4, max_recv_wr: 4 }) {
  const ctx = await verbs.openDevice("rxe0");
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(cqe);
  const mr = await pd.regMr(256, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  const full = { ...cap, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap: full, qp_type: IBV_QPT_RC });
  const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap: full, qp_type: IBV_QPT_RC });
  await bringUp(a, b, gid);
  await bringUp(b, a, gid);
  return { ctx, pd, cq, mr, a, b };
}

const verbEvents = (s: { events(): unknown[] }) =>
  s.events().filter((e) => (e as VerbEvent).kind === "verb") as VerbEvent[];

async function writePastTheEnd(verbs: Verbs) {
  const { cq, mr, a } = await loopback(verbs);
  await a.postSend({
    wr_id: 9,
    opcode: IBV_WR_RDMA_WRITE,
    send_flags: IBV_SEND_SIGNALED,
    sg_list: [mr.sge(0, 64)],
    rdma: { remote_addr: mr.addr + mr.length - 16, rkey: mr.rkey },
  });
  const [wc] = await cq.pollWait(1, 1000);
  return { wc: wc!, mr };
}

describe("failed completions carry why", () => {
  it("on the simulator: the responder's exact reason, labelled as the simulator's", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 2 }) });
    const { wc } = await writePastTheEnd(s.verbs);
    expect(wc.status).toBe(IBV_WC_REM_ACCESS_ERR);
    const polled = verbEvents(s).find((e) => e.method === "pollWait")!.completions![0]!;
    expect(polled.why).toMatchObject({ source: "simulator", posted: "IBV_WR_RDMA_WRITE" });
    expect(polled.why!.reason).toMatchObject({ kind: "outside-mr", n: 64 });
    expect(wcReasonText(polled.why!.reason)).toMatch(/outside the MR/);
  });

  it("without the backend's reason (native): inferred from the MR the session knows", async () => {
    const s = createSession({ backend: withoutReasons() });
    const { wc, mr } = await writePastTheEnd(s.verbs);
    expect(wc.status).toBe(IBV_WC_REM_ACCESS_ERR);
    const polled = verbEvents(s).find((e) => e.method === "pollWait")!.completions![0]!;
    const end = mr.addr + mr.length;
    expect(polled.why).toEqual({
      source: "inferred",
      posted: "IBV_WR_RDMA_WRITE",
      reason: { kind: "outside-mr", mr: "mr0", va: end - 16, n: 64, mrAddr: mr.addr, mrLen: mr.length },
    });
    expect(wcReasonText(polled.why!.reason)).toBe(
      `[0x${(end - 16).toString(16)}, 0x${(end + 48).toString(16)}) (64 bytes) is outside mr0 ` +
        `[0x${mr.addr.toString(16)}, 0x${end.toString(16)}): 48 bytes past its end`,
    );
  });

  it("the Markdown and HTML exports keep why", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 2 }) });
    await writePastTheEnd(s.verbs);
    expect(toMarkdown(s.transcript())).toMatch(
      /IBV_WC_REM_ACCESS_ERR.* — why \(simulator\): QP 0x[0-9a-f]+ on rxe0: .*outside the MR/,
    );
    expect(toHtml(s.transcript())).toMatch(/ — why \(simulator\): QP 0x[0-9a-f]+ on rxe0: /);
    // rxe's opcode 0 on an error completion is not printed as IBV_WC_SEND.
    expect(toMarkdown(s.transcript())).toMatch(/IBV_WC_REM_ACCESS_ERR, opcode 0 \(not set on an error completion\)/);
  });

  it("a success carries nothing", async () => {
    const s = createSession({ backend: withoutReasons() });
    const { cq, mr, a } = await loopback(s.verbs);
    await a.postSend({
      wr_id: 1,
      opcode: IBV_WR_RDMA_WRITE,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [mr.sge(0, 8)],
      rdma: { remote_addr: mr.addr, rkey: mr.rkey },
    });
    const [wc] = await cq.pollWait(1, 1000);
    expect(wc!.status).toBe(IBV_WC_SUCCESS);
    expect(verbEvents(s).find((e) => e.method === "pollWait")!.completions![0]!.why).toBeUndefined();
  });
});

describe("ibv_destroy_cq with completion events not acknowledged", () => {
  it("the session refuses (EBUSY, the count) before the backend is called; after ackEvents it goes", async () => {
    const backend = withoutReasons();
    const s = createSession({ backend });
    const ctx = await s.verbs.openDevice("rxe0");
    const ch = await ctx.createCompChannel();
    const cq = await ctx.createCq(4, { channel: ch });
    const pd = await ctx.allocPd();
    const mr = await pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
    const gid = await ctx.queryGid(1, 0);
    const cap = { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    await bringUp(a, b, gid);
    await bringUp(b, a, gid);
    await b.postRecv({ wr_id: 1, sg_list: [mr.sge(0, 8)] });
    await cq.reqNotify();
    await a.postSend({ wr_id: 2, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 8)] });
    expect(await ch.getCqEvent(100)).toBe(cq);
    await cq.poll(4);
    await a.destroy();
    await b.destroy();

    // The backend's own destroy: the session must not reach it.
    const backendCq = vi.spyOn(SimCq.prototype, "destroy");
    const err = await cq.destroy().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VerbsError);
    expect(err).toMatchObject({ verb: "ibv_destroy_cq", code: "EBUSY" });
    expect((err as VerbsError).reason).toMatch(/would wait for ever: 1 completion event not acknowledged/);
    expect(backendCq).not.toHaveBeenCalled();
    const refused = verbEvents(s).at(-1)!;
    expect(refused).toMatchObject({ method: "destroy", error: { code: "EBUSY" } });

    // The C export does not call the destroy that would hang: it reports what VerbsLab did.
    const c = toC(s.transcript());
    const step = `"${refused.seq}. ibv_destroy_cq"`;
    expect(c).toContain(`report(${step}, EBUSY);`);
    expect(c).not.toContain(`report(${step}, ibv_destroy_cq(`);

    await cq.ackEvents(1);
    await cq.destroy();
    expect(backendCq).toHaveBeenCalledOnce();
    expect(verbEvents(s).at(-1)!.error).toBeUndefined();
    backendCq.mockRestore();
  });
});

describe("beginner mistakes that pass silently get a notice", () => {
  it("a CQ of 10 for 10 sends + 5 receives: works only because rxe rounds it up to 15", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 2 }) });
    const ctx = await s.verbs.openDevice("rxe0");
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(10);
    expect(cq.cqe).toBe(15);
    const cap = { max_send_wr: 10, max_recv_wr: 5, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    const notices = verbEvents(s).at(-1)!.notices!;
    expect(notices.map((n) => n.id)).toEqual(["cq_rounded_up"]);
    expect(notices[0]!.text).toMatch(/created with cqe 10, and rxe0 returned cqe 15/);
    expect(notices[0]!.text).toMatch(/15 WRs can complete into it \(QP 0x[0-9a-f]+: 10 sends \+ 5 receives\)/);
    expect(notices[0]).toMatchObject({
      asked: 10,
      actual: 15,
      device: "rxe0",
      wrs: 15,
      users: [{ send: 10, recv: 5 }],
    });
  });

  it("a CQ big enough as asked gets none, nor one the rounding does not save either (lessons size CQs so)", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 2 }) });
    await loopback(s.verbs, 16, { max_send_wr: 4, max_recv_wr: 4 });
    await loopback(s.verbs, 32, { max_send_wr: 16, max_recv_wr: 16 });
    expect(verbEvents(s).flatMap((e) => e.notices ?? [])).toEqual([]);
  });

  it.each([
    ["an RDMA READ's local buffer", IBV_WR_RDMA_READ, 0, "RDMA_READ"],
    ["an atomic's result buffer", IBV_WR_ATOMIC_FETCH_AND_ADD, 0, "ATOMIC_FETCH_AND_ADD"],
    ["an atomic's target", IBV_WR_ATOMIC_FETCH_AND_ADD, 128, "ATOMIC_FETCH_AND_ADD"],
  ] as const)("reading %s before polling: a notice", async (_n, opcode, at, name) => {
    const s = createSession({ backend: createSimBackend({ seed: 2 }) });
    const ctx = await s.verbs.openDevice("rxe0");
    const gid = await ctx.queryGid(1, 0);
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(16);
    const all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
    const mr = await pd.regMr(256, all);
    const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    for (const [qp, peer] of [
      [a, b],
      [b, a],
    ] as const)
      for (const [from, to] of [
        [IBV_QPS_RESET, IBV_QPS_INIT],
        [IBV_QPS_INIT, IBV_QPS_RTR],
        [IBV_QPS_RTR, IBV_QPS_RTS],
      ] as const) {
        const m = goodModify(IBV_QPT_RC, from, to, { dgid: gid, dest_qp_num: peer.qp_num })!;
        await qp.modify({ ...m.attr, ...(to === IBV_QPS_INIT && { qp_access_flags: all & ~1 }) }, m.mask);
      }
    const remote = { remote_addr: mr.addr + 128, rkey: mr.rkey };
    await a.postSend({
      wr_id: 6,
      opcode,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [mr.sge(0, 8)],
      ...(opcode === IBV_WR_RDMA_READ ? { rdma: remote } : { atomic: { ...remote, compare_add: 1n } }),
    });
    await mr.read(at, 8);
    const notices = verbEvents(s).at(-1)!.notices ?? [];
    expect(notices.map((n) => n.id)).toEqual(["read_before_poll"]);
    expect(notices[0]!.text).toContain(`reads bytes that an ${name} (wr_id 6`);
    const [wc] = await cq.pollWait(1, 1000);
    expect(wc!.status).toBe(IBV_WC_SUCCESS);
    await mr.read(at, 8);
    expect(verbEvents(s).at(-1)!.notices).toBeUndefined();
  });

  it("reading an RDMA WRITE's target before polling its completion; none once it is polled", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 2 }) });
    const { cq, mr, a } = await loopback(s.verbs);
    await mr.write(0, [1, 2, 3, 4]);
    await a.postSend({
      wr_id: 5,
      opcode: IBV_WR_RDMA_WRITE,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [mr.sge(0, 4)],
      rdma: { remote_addr: mr.addr + 128, rkey: mr.rkey },
    });
    expect(Array.from(await mr.read(128, 4))).toEqual([1, 2, 3, 4]); // final already: that hides the race
    expect(
      verbEvents(s)
        .at(-1)!
        .notices?.map((n) => n.id),
    ).toEqual(["read_before_poll"]);
    expect(verbEvents(s).at(-1)!.notices![0]!.text).toMatch(/mr0\.read\(128, 4\) reads bytes that an RDMA_WRITE/);
    await mr.read(0, 4); // the source, not the target
    expect(verbEvents(s).at(-1)!.notices).toBeUndefined();
    await cq.pollWait(1, 1000);
    await mr.read(128, 4);
    expect(verbEvents(s).at(-1)!.notices).toBeUndefined();
  });
});

describe("a RECV's buffer read before its completion, and a CQ too small for what is posted", () => {
  it("reading where a posted RECV lands, before polling it, gets a notice; after the poll none", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 2 }) });
    const { cq, mr, a, b } = await loopback(s.verbs);
    await mr.write(0, "hello");
    await b.postRecv({ wr_id: 200, sg_list: [mr.sge(64, 64)] });
    await a.postSend({ wr_id: 100, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 5)] });
    await mr.read(64, 5);
    const [notice] = verbEvents(s).at(-1)!.notices ?? [];
    expect(notice).toMatchObject({ id: "read_before_poll", recv: true, wr_id: 200, qpn: b.qp_num });
    expect(notice!.text).toMatch(/^mr0\.read\(64, 5\) reads bytes that a posted RECV \(wr_id 200 on QP 0x12\)/);
    await mr.read(0, 5); // the SEND's source: nothing lands there
    expect(verbEvents(s).at(-1)!.notices).toBeUndefined();
    expect((await cq.pollWait(2, 1000)).length).toBe(2);
    await mr.read(64, 5);
    expect(verbEvents(s).at(-1)!.notices).toBeUndefined();
  });

  it("a CQ of 1 with a RECV and a signaled SEND posted before any poll: cq_overflow, and a completion is lost", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 2 }) });
    const { cq, mr, a, b } = await loopback(s.verbs, 1);
    await b.postRecv({ wr_id: 200, sg_list: [mr.sge(64, 64)] });
    expect(verbEvents(s).at(-1)!.notices).toBeUndefined();
    await a.postSend({ wr_id: 100, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 5)] });
    const [notice] = verbEvents(s).at(-1)!.notices ?? [];
    expect(notice).toMatchObject({ id: "cq_overflow", cq: "cq0", cqe: 1, pending: 2 });
    expect(notice!.text).toContain("IBV_EVENT_CQ_ERR");
    // What the notice foretold: one of the two completions never arrives.
    expect((await cq.pollWait(2, 100)).length).toBe(1);
  });

  it("the same CQ polled between the posts, and unsignaled sends, earn none", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 2 }) });
    const { cq, mr, a, b } = await loopback(s.verbs, 1);
    await b.postRecv({ wr_id: 200, sg_list: [mr.sge(64, 64)] });
    await a.postSend({
      wr_id: 1,
      opcode: IBV_WR_RDMA_WRITE,
      sg_list: [mr.sge(0, 4)],
      rdma: { remote_addr: mr.addr + 128, rkey: mr.rkey },
    });
    await a.postSend({ wr_id: 100, opcode: IBV_WR_SEND, sg_list: [mr.sge(0, 5)] });
    expect((await cq.pollWait(1, 1000)).length).toBe(1);
    await b.postRecv({ wr_id: 201, sg_list: [mr.sge(64, 64)] });
    await a.postSend({ wr_id: 101, opcode: IBV_WR_SEND, sg_list: [mr.sge(0, 5)] });
    expect((await cq.pollWait(1, 1000)).map((wc) => wc.wr_id)).toEqual([201]);
    const notices = verbEvents(s)
      .flatMap((e) => e.notices ?? [])
      .map((n) => n.id);
    expect(notices).not.toContain("cq_overflow");
  });
});

describe("two devices whose QPs share a number (rxe0's and rxe1's first QPs are both 0x11)", () => {
  async function twoDevices(verbs: Verbs) {
    const end = async (dev: string) => {
      const ctx = await verbs.openDevice(dev);
      const pd = await ctx.allocPd();
      const cq = await ctx.createCq(16);
      const mr = await pd.regMr(256, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
      const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
      const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
      return { ctx, cq, mr, qp, gid: await ctx.queryGid(1, 0) };
    };
    const a = await end("rxe0");
    const b = await end("rxe1");
    expect(a.qp.qp_num).toBe(b.qp.qp_num);
    await bringUp(a.qp, b.qp, b.gid);
    await bringUp(b.qp, a.qp, a.gid);
    return { a, b };
  }

  it("a completion polled on rxe0 retires rxe0's WRITE: reading its target after the poll earns no notice", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 2 }) });
    const { a, b } = await twoDevices(s.verbs);
    await a.mr.write(0, [1, 2, 3, 4]);
    await a.qp.postSend({
      wr_id: 1,
      opcode: IBV_WR_RDMA_WRITE,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [a.mr.sge(0, 4)],
      rdma: { remote_addr: b.mr.addr, rkey: b.mr.rkey },
    });
    const [wc] = await a.cq.pollWait(1, 1000);
    expect(wc!.status).toBe(IBV_WC_SUCCESS);
    expect(Array.from(await b.mr.read(0, 4))).toEqual([1, 2, 3, 4]);
    expect(verbEvents(s).at(-1)!.notices).toBeUndefined();
  });

  it("a failed completion on rxe0 is explained from rxe0's QP and its peer on rxe1", async () => {
    const s = createSession({ backend: withoutReasons() });
    const { a, b } = await twoDevices(s.verbs);
    await a.qp.postSend({
      wr_id: 2,
      opcode: IBV_WR_RDMA_WRITE,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [a.mr.sge(0, 8)],
      rdma: { remote_addr: b.mr.addr + 252, rkey: b.mr.rkey },
    });
    const [wc] = await a.cq.pollWait(1, 1000);
    expect(wc!.status).toBe(IBV_WC_REM_ACCESS_ERR);
    const why = verbEvents(s).at(-1)!.completions![0]!.why;
    expect(why?.source).toBe("inferred");
    expect(why?.reason).toMatchObject({ kind: "outside-mr" });
  });
});

describe("re-arming a CQ after draining it", () => {
  async function eventLoop(rearmFirst: boolean) {
    const s = createSession({ backend: createSimBackend({ seed: 2 }) });
    const verbs = s.verbs;
    const ctx = await verbs.openDevice("rxe0");
    const gid = await ctx.queryGid(1, 0);
    const pd = await ctx.allocPd();
    const channel = await ctx.createCompChannel();
    const cq = await ctx.createCq(16, { channel });
    const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    await bringUp(a, b, gid);
    await bringUp(b, a, gid);
    const mr = await pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
    await cq.reqNotify();
    await b.postRecv({ wr_id: 2, sg_list: [mr.sge(32, 32)] });
    await a.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 32)] });
    expect(await channel.getCqEvent(1000)).not.toBeNull();
    await cq.ackEvents(1);
    if (rearmFirst) await cq.reqNotify();
    while ((await cq.poll(16)).length > 0);
    if (!rearmFirst) await cq.reqNotify();
    return verbEvents(s).at(-1)!;
  }

  it("after the drain: a notice says a completion in between raises no event", async () => {
    const e = await eventLoop(false);
    expect(e.method).toBe("reqNotify");
    expect(e.notices).toEqual([expect.objectContaining({ id: "late_rearm", cq: "cq0", lastPoll: 2 })]);
    expect(e.notices![0]!.text).toMatch(/raises no event.*Re-arm first, then poll until empty/);
  });

  it("before the drain (the loop lesson 4 teaches): none", async () => {
    const e = await eventLoop(true);
    expect(e.method).toBe("poll");
    expect(e.notices).toBeUndefined();
  });
});
