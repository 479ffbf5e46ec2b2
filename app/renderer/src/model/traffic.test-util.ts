/** Real transcripts for model tests: programs run through a session on the simulator. */
// eslint-disable-next-line no-restricted-imports -- a test fixture (only *.test.ts import it): real transcripts from the simulator
import { createSimBackend, type SimBackend } from "../../../../sim/index.js";
import { goodModify } from "../../../../state-machines/qp-paths.js";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_RC,
} from "../../../../verbs/constants.js";
import { createSession } from "../../../session/session.js";
import type { Session } from "../../../session/session-types.js";
import type { Verbs, VerbsQp } from "../../../session/verbs-api.js";

/** Two RC QPs on rxe0 connected to each other (loopback), one CQ, one 8 KiB MR. */
export async function loopback(verbs: Verbs, cap = { max_send_wr: 8, max_recv_wr: 8 }) {
  const ctx = await verbs.openDevice("rxe0");
  const dgid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(32);
  const mr = await pd.regMr(8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  const qpCap = { ...cap, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap: qpCap, qp_type: IBV_QPT_RC });
  const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap: qpCap, qp_type: IBV_QPT_RC });
  const up = async (qp: VerbsQp, peer: VerbsQp) => {
    for (const [from, to] of [
      [IBV_QPS_RESET, IBV_QPS_INIT],
      [IBV_QPS_INIT, IBV_QPS_RTR],
      [IBV_QPS_RTR, IBV_QPS_RTS],
    ] as const) {
      const m = goodModify(IBV_QPT_RC, from, to, { dgid, dest_qp_num: peer.qp_num })!;
      await qp.modify(m.attr, m.mask);
    }
  };
  await up(a, b);
  await up(b, a);
  return { ctx, pd, cq, mr, a, b };
}

/**
 * One RC QP on rxe0 and one on rxe1, connected to each other: both get QP number 0x11 (each
 * device numbers its own). Each end has its CQ and a 4 KiB MR with remote write.
 */
export async function twoDevices(verbs: Verbs) {
  const end = async (dev: string) => {
    const ctx = await verbs.openDevice(dev);
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(8);
    const mr = await pd.regMr(4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    return { cq, mr, qp, gid: await ctx.queryGid(1, 0) };
  };
  const a = await end("rxe0");
  const b = await end("rxe1");
  for (const [me, peer] of [
    [a, b],
    [b, a],
  ] as const)
    for (const [from, to] of [
      [IBV_QPS_RESET, IBV_QPS_INIT],
      [IBV_QPS_INIT, IBV_QPS_RTR],
      [IBV_QPS_RTR, IBV_QPS_RTS],
    ] as const) {
      const m = goodModify(IBV_QPT_RC, from, to, { dgid: peer.gid, dest_qp_num: peer.qp.qp_num })!;
      await me.qp.modify(m.attr, m.mask);
    }
  return { a, b };
}

/** Runs `program` in a fresh session on a fresh simulator; returns both. */
export async function record(
  program: (verbs: Verbs, session: Session, sim: SimBackend) => Promise<void>,
): Promise<{ session: Session; sim: SimBackend }> {
  const sim = createSimBackend({ seed: 3 });
  const session = createSession({ backend: sim, seed: 3 });
  const r = await session.run((verbs) => program(verbs, session, sim));
  if (r.outcome !== "ok") throw r.error;
  return { session, sim };
}
