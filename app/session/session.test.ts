import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../sim/index.js";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_QPS_ERR,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_RC,
  IBV_QP_ALT_PATH,
  IBV_QP_DEST_QPN,
  IBV_SEND_SIGNALED,
  IBV_WC_LOC_QP_OP_ERR,
  IBV_WR_SEND,
} from "../../verbs/constants.js";
import { VerbsError } from "../../verbs/errors.js";
import rcLoopback from "../cli/examples/rc-loopback.js";
import { goodModify } from "../../state-machines/qp-paths.js";
import { createSession } from "./session.js";
import { parseTranscript, type VerbEvent } from "./transcript.js";
import type { Verbs, VerbsQp } from "./verbs-api.js";

const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };

async function twoQps(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(8);
  const mr = await pd.regMr(256, IBV_ACCESS_LOCAL_WRITE);
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  return { ctx, gid, pd, cq, mr, a, b };
}

async function bringUp(qp: VerbsQp, peer: VerbsQp, dgid: string, to: number = IBV_QPS_RTS) {
  const p = { dgid, dest_qp_num: peer.qp_num };
  for (const [from, next] of [
    [IBV_QPS_RESET, IBV_QPS_INIT],
    [IBV_QPS_INIT, IBV_QPS_RTR],
    [IBV_QPS_RTR, IBV_QPS_RTS],
  ] as const) {
    if (from >= to) break;
    const m = goodModify(IBV_QPT_RC, from, next, p)!;
    await qp.modify(m.attr, m.mask);
  }
}

const verbEvents = (s: { events(): unknown[] }) =>
  s.events().filter((e) => (e as VerbEvent).kind === "verb") as VerbEvent[];

describe("the session", () => {
  it("records one event per verb, with created handles, and keeps facade identity", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 3 }) });
    const { cq, a } = await twoQps(s.verbs);
    expect(a.send_cq).toBe(cq);
    expect(a.qp_num).toBe(0x11);
    const evs = verbEvents(s);
    expect(evs.map((e) => e.verb)).toEqual([
      "ibv_open_device",
      "ibv_query_gid",
      "ibv_alloc_pd",
      "ibv_create_cq",
      "ibv_reg_mr",
      "ibv_create_qp",
      "ibv_create_qp",
    ]);
    expect(evs.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(evs[5]!.created![0]).toMatchObject({ $handle: 5, type: "qp", props: { qp_num: 0x11 } });
    // A new QP appears in the snapshots with no "before".
    expect(evs[5]!.qps[0]).toMatchObject({ qp: 5, before: null, after: { qp_state: IBV_QPS_RESET } });
  });

  it("snapshots ibv_query_qp before and after a modify with the changed fields, and checks the prediction", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 3 }) });
    const { gid, a, b } = await twoQps(s.verbs);
    await bringUp(a, b, gid, IBV_QPS_INIT);
    const e = verbEvents(s).at(-1)!;
    expect(e.verb).toBe("ibv_modify_qp");
    expect(e.prediction).toMatchObject({ outcome: "ok", state: IBV_QPS_INIT });
    expect(e.check).toMatchObject({ agree: true, expected: "RESET → INIT", actual: "RESET → INIT" });
    const snap = e.qps.find((q) => q.qp_num === a.qp_num)!;
    expect(snap.before!.qp_state).toBe(IBV_QPS_RESET);
    expect(snap.after!.qp_state).toBe(IBV_QPS_INIT);
    const fields = snap.changes.map((c) => c.field);
    expect(fields).toContain("qp_state");
    expect(fields).toContain("port_num");
    expect(snap.changes.find((c) => c.field === "qp_state")).toEqual({
      field: "qp_state",
      before: IBV_QPS_RESET,
      after: IBV_QPS_INIT,
    });
    // The other QP did not change, so it is not in the event.
    expect(e.qps.map((q) => q.qp_num)).toEqual([a.qp_num]);
  });

  it("records a failed verb as JSON, rethrows the VerbsError, and agrees with a predicted EINVAL", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 3 }) });
    const { gid, a, b } = await twoQps(s.verbs);
    await bringUp(a, b, gid, IBV_QPS_INIT);
    const m = goodModify(IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, { dgid: gid, dest_qp_num: b.qp_num })!;
    const err = await a.modify(m.attr, m.mask & ~IBV_QP_DEST_QPN).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(VerbsError);
    expect((err as VerbsError).code).toBe("EINVAL");
    const e = verbEvents(s).at(-1)!;
    expect(e.error).toMatchObject({ name: "VerbsError", code: "EINVAL", errno: 22 });
    expect(e.prediction).toMatchObject({ outcome: "EINVAL", attribute: "IBV_QP_DEST_QPN" });
    expect(e.check?.agree).toBe(true);
    expect(e.qps[0]!.changes).toEqual([]);
    expect(s.qps().find((q) => q.qp_num === a.qp_num)!.state).toBe(IBV_QPS_INIT);
  });

  it("records a disagreement when the backend refuses what the table allows (ALT_PATH on RoCE)", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 3 }) });
    const { gid, a, b } = await twoQps(s.verbs);
    await bringUp(a, b, gid, IBV_QPS_INIT);
    const m = goodModify(IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, { dgid: gid, dest_qp_num: b.qp_num })!;
    await expect(a.modify(m.attr, m.mask | IBV_QP_ALT_PATH)).rejects.toMatchObject({ code: "EINVAL" });
    const e = verbEvents(s).at(-1)!;
    expect(e.prediction?.outcome).toBe("ok");
    expect(e.check).toMatchObject({ agree: false, expected: "INIT → RTR" });
    expect(e.check?.actual).toMatch(/^EINVAL/);
    // The model follows reality afterwards.
    expect(s.qps().find((q) => q.qp_num === a.qp_num)!.state).toBe(IBV_QPS_INIT);
  });

  it("collects completions and counter deltas, and explains a move to ERR by an error completion", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 3 }) });
    const { gid, cq, mr, a, b } = await twoQps(s.verbs);
    await bringUp(a, b, gid);
    await bringUp(b, a, gid);
    await b.postRecv({ wr_id: 7, sg_list: [mr.sge(128, 64)] });
    await a.postSend({ wr_id: 8, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 16)] });
    const wcs = await cq.pollWait(2, 100);
    expect(wcs.map((w) => w.status)).toEqual([0, 0]);
    let e = verbEvents(s).at(-1)!;
    expect(e.verb).toBe("verbslab_poll_wait");
    expect(e.completions?.map((c) => c.wc.wr_id).sort()).toEqual([7, 8]);
    expect(e.completions?.every((c) => c.cq === 3)).toBe(true);
    const sendEv = verbEvents(s).find((x) => x.verb === "ibv_post_send")!;
    const counted = [...(sendEv.counters ?? []), ...(e.counters ?? [])].flatMap((c) => Object.keys(c.delta));
    expect(counted).toContain("sent_pkts");

    // A SEND with a bad lkey: LOC_QP_OP_ERR, and the QP moves to ERR without a modify.
    await a.postSend({
      wr_id: 9,
      opcode: IBV_WR_SEND,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [{ ...mr.sge(0, 16), lkey: 0xdead00 }],
    });
    const bad = await cq.pollWait(1, 100);
    expect(bad[0]!.status).toBe(IBV_WC_LOC_QP_OP_ERR);
    e = verbEvents(s).at(-1)!;
    const moves = verbEvents(s).flatMap((x) => x.moves ?? []);
    expect(moves).toHaveLength(1);
    expect(moves[0]).toMatchObject({ qp_num: a.qp_num, from: IBV_QPS_RTS, to: IBV_QPS_ERR });
    expect(s.qps().find((q) => q.qp_num === a.qp_num)).toMatchObject({ state: IBV_QPS_ERR, observed: IBV_QPS_ERR });
    void e;
  });

  it("predicts EINVAL for a post_send before RTS and agrees with the backend", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 3 }) });
    const { gid, mr, a, b } = await twoQps(s.verbs);
    await bringUp(a, b, gid, IBV_QPS_RTR);
    await expect(a.postSend({ opcode: IBV_WR_SEND, sg_list: [mr.sge(0, 8)] })).rejects.toMatchObject({
      code: "EINVAL",
    });
    const e = verbEvents(s).at(-1)!;
    expect(e.prediction?.outcome).toBe("EINVAL");
    expect(e.check?.agree).toBe(true);
  });

  it("reads and writes MR bytes, and copies the learner's buffer at registration", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 3 }) });
    const ctx = await s.verbs.openDevice("rxe0");
    const pd = await ctx.allocPd();
    const buf = new Uint8Array([1, 2, 3, 4]);
    const mr = await pd.regMr(buf, IBV_ACCESS_LOCAL_WRITE);
    buf[0] = 99;
    expect([...(await mr.read())]).toEqual([1, 2, 3, 4]);
    await mr.write(1, [9, 8]);
    expect([...(await mr.read(0, 4))]).toEqual([1, 9, 8, 4]);
    await expect(mr.read(2, 10)).rejects.toBeInstanceOf(RangeError);
    expect(mr.sge(1, 2)).toEqual({ addr: mr.addr + 1, length: 2, lkey: mr.lkey });
  });

  it("passes verbs on destroyed objects to the backend (EINVAL, recorded), but guards MR bytes", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 3 }) });
    const ctx = await s.verbs.openDevice("rxe0");
    const pd = await ctx.allocPd();
    const mr = await pd.regMr(16, IBV_ACCESS_LOCAL_WRITE);
    await mr.dereg();
    await expect(mr.dereg()).rejects.toMatchObject({ name: "VerbsError", code: "EINVAL" });
    expect(verbEvents(s).at(-1)).toMatchObject({ verb: "ibv_dereg_mr", error: { code: "EINVAL" } });
    await expect(mr.read()).rejects.toBeInstanceOf(TypeError);
    await pd.dealloc();
    await expect(pd.regMr(8, IBV_ACCESS_LOCAL_WRITE)).rejects.toMatchObject({ code: "EINVAL" });
  });

  it("writes every line to the sink as it goes, and the lines parse back", async () => {
    const lines: string[] = [];
    const s = createSession({
      backend: createSimBackend({ seed: 5 }),
      sink: { append: (l) => lines.push(l) },
      seed: 5,
    });
    let seenAtEvent = 0;
    s.subscribe(() => (seenAtEvent = lines.length));
    const r = await s.run(rcLoopback);
    expect(r.outcome).toBe("ok");
    expect(seenAtEvent).toBe(lines.length);
    expect(lines.every((l) => l.endsWith("\n"))).toBe(true);
    const t = parseTranscript(lines.join(""));
    expect(t.header).toMatchObject({ schema: "verbslab.transcript", version: 2, backend: "sim", seed: 5 });
    expect(t.events).toEqual(s.events());
    expect(t.events.at(-1)).toMatchObject({ kind: "end", outcome: "ok" });
    expect(t.events.filter((e) => e.kind === "log").map((e) => (e as { message: string }).message)).toContain(
      "RDMA WRITE landed: hello, rdma",
    );
    expect(verbEvents(s).every((e) => !e.check || e.check.agree)).toBe(true);
  });

  it("ends with outcome error (and the error) when the program throws", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 1 }) });
    const r = await s.run(async (v) => {
      await v.openDevice("mlx5_0");
    });
    expect(r.outcome).toBe("error");
    expect(s.events().at(-1)).toMatchObject({ kind: "end", outcome: "error", error: { code: "ENODEV" } });
  });

  it("takes numbered handles and refuses any other handle form with a TypeError", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 1 }) });
    const ctx = (await s.call(0, "openDevice", ["rxe0"])) as { $handle: number };
    const pd = (await s.call(ctx.$handle, "allocPd", [])) as { $handle: number; type: string };
    expect(pd).toMatchObject({ type: "pd", props: { context: { $handle: ctx.$handle, type: "context" } } });
    const cq = (await s.call(ctx.$handle, "createCq", [4])) as { $handle: number };
    const init = { recv_cq: cq, cap, qp_type: IBV_QPT_RC };
    await expect(
      s.call(pd.$handle, "createQp", [{ ...init, send_cq: { $handle: `cq${cq.$handle}`, type: "cq" } }]),
    ).rejects.toThrow(/"cq\d+" is not an object handle/);
    const qp = await s.call(pd.$handle, "createQp", [{ ...init, send_cq: cq }]);
    expect(qp).toMatchObject({ type: "qp", props: { qp_num: 0x11 } });
    await expect(s.call(99, "destroy", [])).rejects.toBeInstanceOf(TypeError);
    await expect(s.call(pd.$handle, "fly", [])).rejects.toBeInstanceOf(TypeError);
  });
});

describe("the session's counters", () => {
  it("count traffic that moved between two verbs: the run's deltas add up to the device's own change", async () => {
    // On rxe packets also move from kernel tasks while the program is between verbs; here a
    // second session on the same device sends them while the first is between two verbs.
    const backend = createSimBackend({ seed: 3 });
    const s = createSession({ backend });
    const ctx = await s.verbs.openDevice("rxe0");
    const before = { ...backend.openDevice("rxe0").queryCounters() };
    await s.verbs.sleep(1);
    await rcLoopback(createSession({ backend }).verbs);
    await s.verbs.sleep(1);
    const after = backend.openDevice("rxe0").queryCounters();
    const recorded: Record<string, number> = {};
    for (const e of verbEvents(s))
      for (const c of e.counters ?? [])
        for (const [k, d] of Object.entries(c.delta)) recorded[k] = (recorded[k] ?? 0) + d;
    expect(after.sent_pkts! - before.sent_pkts!).toBeGreaterThan(0);
    expect(recorded.sent_pkts).toBe(after.sent_pkts! - before.sent_pkts!);
    expect(recorded.rcvd_pkts).toBe(after.rcvd_pkts! - before.rcvd_pkts!);
    await ctx.close();
  });
});
