/**
 * The paused view shows the session's prediction, made before the gate with the port and GID
 * facts the session has; the renderer does not predict on its own (it has neither).
 */
import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../../../sim/index.js";
import { createSession } from "../../../session/session.js";
import type { PendingCall, Session } from "../../../session/session-types.js";
import type { VerbEvent } from "../../../session/transcript.js";
import type { Verbs } from "../../../session/verbs-api.js";
import * as c from "../../../../verbs/constants.js";
import { buildView } from "./reduce.js";

function nextPending(s: Session): Promise<PendingCall> {
  return new Promise((resolve) => {
    if (s.gate.pending) return resolve(s.gate.pending);
    const off = s.gate.subscribe((p) => {
      if (p) {
        off();
        resolve(p);
      }
    });
  });
}

/** One RC QP taken to INIT, then paused before INIT → RTR with GID index `sgid`. */
async function pausedBeforeRtr(sgid: number) {
  const s = createSession({ backend: createSimBackend({ seed: 1 }) });
  const program = async (verbs: Verbs) => {
    const ctx = await verbs.openDevice("rxe0");
    const gid = await ctx.queryGid(1, 0);
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(16);
    const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: c.IBV_QPT_RC });
    await qp.modify(
      { qp_state: c.IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: 0 },
      c.IBV_QP_STATE | c.IBV_QP_PKEY_INDEX | c.IBV_QP_PORT | c.IBV_QP_ACCESS_FLAGS,
    );
    s.gate.pause();
    await qp.modify(
      {
        qp_state: c.IBV_QPS_RTR,
        path_mtu: c.IBV_MTU_1024,
        dest_qp_num: qp.qp_num,
        rq_psn: 0,
        max_dest_rd_atomic: 1,
        min_rnr_timer: 12,
        ah_attr: { is_global: 1, port_num: 1, grh: { dgid: gid, sgid_index: sgid, hop_limit: 1 } },
      },
      c.IBV_QP_STATE |
        c.IBV_QP_AV |
        c.IBV_QP_PATH_MTU |
        c.IBV_QP_DEST_QPN |
        c.IBV_QP_RQ_PSN |
        c.IBV_QP_MAX_DEST_RD_ATOMIC |
        c.IBV_QP_MIN_RNR_TIMER,
    );
  };
  const run = s.run(program);
  const pending = await nextPending(s);
  return { s, run, pending };
}

describe("the paused view's prediction", () => {
  it("is the session's: INIT → RTR with a GID index the port lacks predicts ENODATA, as the call then fails", async () => {
    const { s, run, pending } = await pausedBeforeRtr(7);
    expect(pending.method).toBe("modify");
    expect(pending.prediction).toMatchObject({ outcome: "ENODATA" });
    const view = buildView({ events: s.events(), gate: { mode: "step", pending, stopped: false } });
    expect(view.qps[0]!.state).toBe(c.IBV_QPS_INIT);
    expect(view.qps[0]!.pending).toMatchObject({ outcome: "ENODATA" });
    s.gate.continue();
    await run;
    const modify = s.events().filter((e): e is VerbEvent => e.kind === "verb" && e.method === "modify")[1]!;
    expect(modify.error?.code).toBe("ENODATA");
    expect(modify.prediction).toEqual(pending.prediction);
  });
  it("with a GID index the port has, predicts RTR", async () => {
    const { s, run, pending } = await pausedBeforeRtr(0);
    const view = buildView({ events: s.events(), gate: { mode: "step", pending, stopped: false } });
    expect(view.qps[0]!.pending).toMatchObject({ outcome: "ok", state: c.IBV_QPS_RTR });
    s.gate.continue();
    await run;
  });
  it("is absent when the session sent none (the renderer does not guess)", async () => {
    const { s, run, pending } = await pausedBeforeRtr(7);
    const { prediction: _, ...bare } = pending;
    const view = buildView({ events: s.events(), gate: { mode: "step", pending: bare, stopped: false } });
    expect(view.qps[0]!.pending).toBeUndefined();
    s.gate.continue();
    await run;
  });
});
