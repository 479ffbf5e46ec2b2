/**
 * Model-based tests: paths generated from the QP model by xstate/graph, replayed on the
 * simulator. At every step the model's state, the backend's outcome and ibv_query_qp must
 * agree. Then, from every reachable state, every target with right and wrong masks (and the
 * RoCE value pitfalls) is predicted and tried: prediction and backend must agree.
 */
import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import { createSimBackend } from "../sim/index.js";
import type { Context, Qp, VerbsBackend } from "../verbs/backend.js";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_QPS_INIT,
  IBV_QPS_RTR,
  IBV_QPS_SQD,
  IBV_QPT_RC,
  IBV_QPT_UC,
  IBV_QPT_UD,
  IBV_QP_STATE,
  IBV_SEND_SIGNALED,
  IBV_WR_SEND,
  ibv_qp_state,
  nameOf,
} from "../verbs/constants.js";
import { VerbsError } from "../verbs/errors.js";
import { QP_TRANSITIONS, type TableQpType } from "../verbs/qp-transitions.js";
import type { QpAttrInput } from "../verbs/types.js";
import {
  KNOWN_BITS,
  goodModify,
  shortestPathsToEveryState,
  simplePathsToEveryState,
  type PeerAddress,
} from "./qp-paths.js";
import {
  QP_STATE_NAMES,
  predictModify,
  qpMachine,
  snapshotQpState,
  type PredictContext,
  type QpModelEvent,
} from "./qp.js";

const TYPES: TableQpType[] = [IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD];
const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };

/**
 * The backend under test: the simulator, or real rxe when VERBSLAB_BACKEND=native (run
 * inside the lab VM: scripts/rxe-vm/run.sh -- env VERBSLAB_BACKEND=native npx vitest run state-machines).
 */
const NATIVE = process.env.VERBSLAB_BACKEND === "native";
let native: VerbsBackend | undefined;
if (NATIVE) {
  const r = (await import("../native/index.js")).loadNativeBackend();
  if ("unavailable" in r) throw new Error(`VERBSLAB_BACKEND=native but ${r.unavailable}`);
  native = r.backend;
}

/** A fresh backend (or fresh objects on the native one) with the QP under test and a peer. */
function world(qpType: TableQpType) {
  const backend = native ?? createSimBackend({ seed: 11 });
  const ctx = backend.openDevice("rxe0");
  const pd = ctx.allocPd();
  const cq = ctx.createCq(16);
  const mr = pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
  const qp = pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: qpType });
  const peerQp = pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: qpType });
  const peer: PeerAddress = { dgid: ctx.queryGid(1, 0), dest_qp_num: peerQp.qp_num };
  return { backend, ctx, pd, cq, mr, qp, peerQp, peer };
}

function predictContext(ctx: Context, qps: Qp[]): PredictContext {
  const port = ctx.queryPort(1);
  return {
    link_layer: port.link_layer,
    active_mtu: port.active_mtu,
    max_mtu: port.max_mtu,
    gid_indices: ctx.queryGidTable().map((g) => g.gid_index),
    known_qpns: qps.map((q) => q.qp_num),
  };
}

const state = (qp: Qp) => qp.query().attr.qp_state;
const label = (s: number) => nameOf(ibv_qp_state, s);

/** Performs one model event on the simulator. */
/**
 * Waits, as a program would (spinning on ibv_query_qp), until the SQ has drained: rxe drains
 * in a kernel task, and until it has, every modify but to ERR is EINVAL (sim/RXE-FACTS.md §2.3;
 * seen in the loaded lab VM as SQD → RESET refused right after RTS → SQD).
 */
async function drained(qp: Qp): Promise<void> {
  for (let i = 0; qp.query().attr.sq_draining; i++) {
    if (i > 2000) throw new Error("the SQ did not drain within 2 s of RTS → SQD");
    await new Promise((r) => setTimeout(r, 1));
  }
}

async function perform(w: ReturnType<typeof world>, e: QpModelEvent): Promise<void> {
  if (e.type === "MODIFY") {
    w.qp.modify(e.attr, e.mask);
    if (e.attr.qp_state === IBV_QPS_SQD) await drained(w.qp);
    return;
  }
  if (e.type === "COMPLETION_ERROR") {
    // A SEND whose SGE names no MR: the requester completes with LOC_QP_OP_ERR and goes to ERR.
    const ud =
      w.qp.qp_type === IBV_QPT_UD
        ? {
            ud: {
              ah: w.pd.createAh({ is_global: 1, port_num: 1, grh: { dgid: w.peer.dgid, sgid_index: 0 } }),
              remote_qpn: w.peer.dest_qp_num,
              remote_qkey: 0x11111111,
            },
          }
        : {};
    w.qp.postSend({
      wr_id: 99,
      opcode: IBV_WR_SEND,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [{ ...w.mr.sge(0, 8), lkey: 0xbad00 }],
      ...ud,
    });
    const wcs = await w.cq.pollWait(1, 1000);
    expect(wcs[0]?.status, "the bad-lkey send completes in error").toBe(e.status);
    return;
  }
  throw new Error(`no way to cause ${e.type} on the simulator`);
}

describe.each(TYPES)("QP type %i: model and simulator agree", (qpType) => {
  const pathsFor = (peer: PeerAddress) => simplePathsToEveryState(qpType, peer);

  it("on every simple path xstate/graph generates, at every step", { timeout: NATIVE ? 900_000 : 30_000 }, async () => {
    const count = pathsFor(world(qpType).peer).length;
    expect(count).toBeGreaterThanOrEqual(10);
    const reached = new Set<string>();
    for (let i = 0; i < count; i++) {
      const w = world(qpType);
      // Generated again for this world's peer (QPNs differ per world on real rxe); the order is the same.
      const path = pathsFor(w.peer)[i]!;
      const model = createActor(qpMachine, { input: { qp_type: qpType } }).start();
      expect(state(w.qp)).toBe(snapshotQpState(model.getSnapshot().value));
      reached.add(label(state(w.qp)));
      for (const e of path) {
        if (e.type === "MODIFY") {
          const p = predictModify(qpType, state(w.qp), e.attr, e.mask, predictContext(w.ctx, [w.qp, w.peerQp]));
          expect(p.ok, p.ok ? "" : p.reason).toBe(true);
        }
        await perform(w, e);
        model.send(e);
        const m = snapshotQpState(model.getSnapshot().value);
        expect(label(state(w.qp)), `after ${e.type} on path ${path.map((x) => x.type).join(" ")}`).toBe(label(m));
        reached.add(label(m));
      }
    }
    expect([...reached].sort()).toEqual([
      "IBV_QPS_ERR",
      "IBV_QPS_INIT",
      "IBV_QPS_RESET",
      "IBV_QPS_RTR",
      "IBV_QPS_RTS",
      "IBV_QPS_SQD",
    ]);
  });

  // On real rxe in the lab VM (software-emulated) each fresh world costs real syscalls: allow minutes.
  it(
    "on every modify from every reachable state: right masks, missing and extra bits",
    { timeout: NATIVE ? 900_000 : 30_000 },
    async () => {
      const probe = world(qpType);
      let tried = 0;
      for (const name of shortestPathsToEveryState(qpType, probe.peer).keys()) {
        const from = QP_STATE_NAMES.indexOf(name);
        const candidates: { attr: QpAttrInput; mask: number; what: string }[] = [];
        for (let to = 0; to < QP_STATE_NAMES.length; to++) {
          const legal = goodModify(qpType, from, to, probe.peer);
          const base = legal ?? {
            attr: { ...goodModify(qpType, 0, 1, probe.peer)!.attr, qp_state: to },
            mask: IBV_QP_STATE,
          };
          candidates.push({ ...base, what: `${name} → ${QP_STATE_NAMES[to]}` });
          const rule = QP_TRANSITIONS[from]?.[to];
          if (!rule) continue;
          const req = rule.req[qpType];
          const firstReq = KNOWN_BITS.find((b) => req & b);
          if (firstReq)
            candidates.push({
              ...base,
              mask: base.mask & ~firstReq,
              what: `${name} → ${QP_STATE_NAMES[to]} missing 0x${firstReq.toString(16)}`,
            });
          const extra = KNOWN_BITS.find((b) => !((req | rule.opt[qpType]) & b));
          if (extra)
            candidates.push({
              ...base,
              mask: base.mask | extra,
              what: `${name} → ${QP_STATE_NAMES[to]} plus 0x${extra.toString(16)}`,
            });
        }
        if (from === IBV_QPS_INIT && qpType !== IBV_QPT_UD) {
          const rtr = goodModify(qpType, IBV_QPS_INIT, IBV_QPS_RTR, probe.peer)!;
          const ah = rtr.attr.ah_attr!;
          candidates.push(
            { ...rtr, attr: { ...rtr.attr, ah_attr: { ...ah, is_global: 0 } }, what: "RTR with is_global 0" },
            {
              ...rtr,
              attr: { ...rtr.attr, ah_attr: { ...ah, grh: { ...ah.grh, sgid_index: 7 } } },
              what: "RTR with sgid_index 7",
            },
            { ...rtr, attr: { ...rtr.attr, path_mtu: 6 }, what: "RTR with path_mtu 6" },
          );
        }
        for (const c of candidates) {
          const w = world(qpType);
          // Re-aim the candidate at this world's peer (the same on the simulator, new QPNs on rxe).
          if (c.attr.dest_qp_num !== undefined) c.attr = { ...c.attr, dest_qp_num: w.peer.dest_qp_num };
          for (const e of shortestPathsToEveryState(qpType, w.peer).get(name)!) await perform(w, e);
          expect(state(w.qp)).toBe(from);
          const p = predictModify(qpType, from, c.attr, c.mask, predictContext(w.ctx, [w.qp, w.peerQp]));
          let code = "ok";
          try {
            w.qp.modify(c.attr, c.mask);
          } catch (err) {
            if (!(err instanceof VerbsError)) throw err;
            code = err.code;
          }
          expect(p.ok ? "ok" : p.code, `${c.what}: ${p.ok ? "predicted ok" : p.reason}`).toBe(code);
          expect(label(state(w.qp)), c.what).toBe(label(p.ok ? p.to : from));
          tried++;
        }
      }
      expect(tried).toBeGreaterThan(40);
    },
  );
});
