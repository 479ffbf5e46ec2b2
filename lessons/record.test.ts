import { expect, it } from "vitest";
import { createSession } from "../app/session/session.js";
import { createSimBackend } from "../sim/index.js";
import { RDMA_PS_UDP, RDMA_UDP_QKEY } from "../verbs/cm.js";
import { IBV_ACCESS_LOCAL_WRITE, IBV_QPT_UD, IBV_WR_SEND } from "../verbs/constants.js";
import { evaluateCheck } from "./checks.js";
import { recordFromTranscript } from "./record.js";

it("a wait for a CQ event that timed out does not count as a call that succeeded", async () => {
  const s = createSession({ backend: createSimBackend({ seed: 1 }) });
  const ctx = await s.verbs.openDevice("rxe0");
  const channel = await ctx.createCompChannel();
  await ctx.createCq(16, { channel });
  // Never armed: no event comes, and the wait returns null after its timeout.
  expect(await channel.getCqEvent(10)).toBeNull();
  const run = recordFromTranscript(s.events());
  expect(run.calls.find((c) => c.verb === "ibv_get_cq_event")).toMatchObject({ ok: false });
  const goal = { kind: "verb_count", verb: "ibv_get_cq_event", ok: true, count: { min: 1 } } as const;
  expect(evaluateCheck(goal, run).passed).toBe(false);
  expect(evaluateCheck({ ...goal, ok: false }, run).passed).toBe(true);
});

it("a completion belongs to the rdma_create_qp QP whose CQ it came from, when two QPs share a QPN", async () => {
  const s = createSession({ backend: createSimBackend({ seed: 1 }) });
  const ch = await s.verbs.cm.createEventChannel();
  const ends = [];
  for (const [src, dst] of [
    ["10.77.0.1", "10.77.0.2"],
    ["10.77.0.2", "10.77.0.1"],
  ]) {
    const id = await ch.createId(RDMA_PS_UDP);
    await id.resolveAddr({ addr: src!, port: 0 }, { addr: dst!, port: 7000 }, 100);
    await (await ch.getEvent(100))!.ack();
    const pd = await id.verbs!.allocPd();
    const cq = await id.verbs!.createCq(8);
    const cap = { max_send_wr: 2, max_recv_wr: 2, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    const qp = await id.createQp(pd, { send_cq: cq, recv_cq: cq, qp_type: IBV_QPT_UD, cap });
    ends.push({ pd, cq, qp, mr: await pd.regMr(64, IBV_ACCESS_LOCAL_WRITE) });
  }
  const [a, b] = ends as [(typeof ends)[0], (typeof ends)[0]];
  // Each device numbers its QPs alike: only the CQ tells the two apart.
  expect(a.qp.qp_num).toBe(b.qp.qp_num);
  await b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge()] });
  const ah = await a.pd.createAh({ is_global: 1, port_num: 1, grh: { dgid: "::ffff:10.77.0.2", sgid_index: 1 } });
  await a.qp.postSend({
    wr_id: 2,
    opcode: IBV_WR_SEND,
    sg_list: [a.mr.sge(0, 4)],
    ud: { ah, remote_qpn: b.qp.qp_num, remote_qkey: RDMA_UDP_QKEY },
  });
  expect((await b.cq.pollWait(1, 1000)).length).toBe(1);
  const run = recordFromTranscript(s.events());
  expect(run.wcs.map((w) => [w.wr_id, w.qp_index])).toEqual([[1, 1]]);
});

it("records the device each QP lives on, so two devices' QP 0x11 are told apart", async () => {
  const s = createSession({ backend: createSimBackend({ seed: 1 }) });
  for (const dev of ["rxe0", "rxe1"]) {
    const ctx = await s.verbs.openDevice(dev);
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(8);
    const cap = { max_send_wr: 2, max_recv_wr: 2, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    await pd.createQp({ send_cq: cq, recv_cq: cq, qp_type: IBV_QPT_UD, cap });
  }
  expect(recordFromTranscript(s.events()).qps.map(({ qp_num, device }) => ({ qp_num, device }))).toEqual([
    { qp_num: 0x11, device: "rxe0" },
    { qp_num: 0x11, device: "rxe1" },
  ]);
});
