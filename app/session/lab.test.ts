/**
 * The lab link's faults through the session (verbs/lab.ts): `verbs.lab.setLink` is a call like
 * any other, recorded in the transcript as verbslab_set_link, and a learner's program sees the
 * fault (here a cross-device SEND that can never arrive ends in IBV_WC_RETRY_EXC_ERR).
 */
import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../sim/index.js";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_RC,
  IBV_WC_RETRY_EXC_ERR,
  IBV_WR_SEND,
} from "../../verbs/constants.js";
import { VerbsError } from "../../verbs/errors.js";
import { CLEAN_LINK } from "../../verbs/lab.js";
import { goodModify } from "../../state-machines/qp-paths.js";
import { toC } from "./export/c.js";
import { createSession } from "./session.js";
import type { VerbEvent } from "./transcript.js";
import type { VerbsQp } from "./verbs-api.js";

const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };

async function bringUp(qp: VerbsQp, peer: VerbsQp, dgid: string) {
  for (const [from, next] of [
    [IBV_QPS_RESET, IBV_QPS_INIT],
    [IBV_QPS_INIT, IBV_QPS_RTR],
    [IBV_QPS_RTR, IBV_QPS_RTS],
  ] as const) {
    const m = goodModify(IBV_QPT_RC, from, next, { dgid, dest_qp_num: peer.qp_num })!;
    if (next === IBV_QPS_RTS) Object.assign(m.attr, { timeout: 12, retry_cnt: 1 });
    await qp.modify(m.attr, m.mask);
  }
}

describe("verbs.lab through the session", () => {
  it("setLink is recorded as verbslab_set_link with its result; loss 1 between rxe0 and rxe1 gives RETRY_EXC_ERR", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 5 }) });
    const v = s.verbs;
    const state = await v.lab.setLink({ loss: 1 });
    expect(state).toEqual({ ...CLEAN_LINK, loss: 1 });
    const ends = [];
    for (const dev of ["rxe0", "rxe1"]) {
      const ctx = await v.openDevice(dev);
      const pd = await ctx.allocPd();
      const cq = await ctx.createCq(8);
      const mr = await pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
      const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
      ends.push({ gid: await ctx.queryGid(1, 1), cq, mr, qp });
    }
    const [a, b] = ends as [(typeof ends)[0], (typeof ends)[0]];
    await bringUp(a.qp, b.qp, b.gid);
    await bringUp(b.qp, a.qp, a.gid);
    await a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)], send_flags: 2 });
    const [wc] = await a.cq.pollWait(1, 2000);
    expect(wc?.status).toBe(IBV_WC_RETRY_EXC_ERR);
    expect(await v.lab.clearLink()).toEqual(CLEAN_LINK);
    const evs = s.events().filter((e) => (e as VerbEvent).kind === "verb") as VerbEvent[];
    const set = evs.find((e) => e.method === "setLink")!;
    expect(set.verb).toBe("verbslab_set_link");
    expect(set.args).toEqual([{ loss: 1 }]);
    expect(set.result).toMatchObject({ loss: 1, blockRoceUdp: false });
    expect(evs.at(-1)!.verb).toBe("verbslab_clear_link");
    // The C export says where the fault came from, instead of calling something that is not C.
    const c = toC(s.transcript());
    expect(c).toContain('/* verbslab_set_link({"loss":1}): outside C, as root on the lab\'s veth pair: tc qdisc');
    expect(c).not.toContain("no C equivalent */");
  });

  it("a bad fault is a VerbsError naming the field, recorded as a failed call", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 5 }) });
    const err = await s.verbs.lab.setLink({ delay: -1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VerbsError);
    expect(err).toMatchObject({ code: "EINVAL", attribute: "delay" });
    const e = s.events().at(-1) as VerbEvent;
    expect(e.error).toMatchObject({ code: "EINVAL" });
    expect(await s.verbs.lab.getLink()).toEqual(CLEAN_LINK);
  });

  it("faults a program set end with its session, even when it threw before clearing them", async () => {
    // One backend serves many sessions, as in lessons:check on native and in the app.
    const backend = createSimBackend({ seed: 5 });
    const first = createSession({ backend });
    const run = await first.run(async (v) => {
      await v.lab.setLink({ blockRoceUdp: true, loss: 0.05 });
      throw new Error("the learner's program failed before its clearLink");
    });
    expect(run.outcome).toBe("error");
    expect(backend.lab!.getLink()).toMatchObject({ blockRoceUdp: true, loss: 0.05 });
    first.release();
    expect(backend.lab!.getLink()).toEqual(CLEAN_LINK);
    // A session that only read the link leaves alone faults someone else set.
    backend.lab!.setLink({ delay: 3 });
    const second = createSession({ backend });
    await second.verbs.lab.getLink();
    second.release();
    expect(backend.lab!.getLink()).toMatchObject({ delay: 3 });
  });
});
