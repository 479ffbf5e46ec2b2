/**
 * sim/RXE-FACTS.md §2.3 and §7: SQD and IBV_EVENT_SQ_DRAINED, CQ overflow, the absence of QP
 * async events, and completion channels.
 */
import { expect, it } from "vitest";
import type { Context } from "../backend.js";
import {
  IBV_EVENT_CQ_ERR,
  IBV_EVENT_SQ_DRAINED,
  IBV_QPS_ERR,
  IBV_QPS_RTS,
  IBV_QPS_SQD,
  IBV_QP_EN_SQD_ASYNC_NOTIFY,
  IBV_QP_STATE,
  IBV_SEND_SIGNALED,
  IBV_SEND_SOLICITED,
  IBV_WC_SUCCESS,
  ibv_wc_status,
  IBV_WR_RDMA_WRITE,
  IBV_WR_SEND,
  ibv_event_type,
  nameOf,
} from "../constants.js";
import { VerbsError } from "../errors.js";
import {
  B,
  LOOPBACK,
  type Scope,
  endpoint,
  expectNoWc,
  expectState,
  pair,
  recordMeasured,
  scope,
  stateName,
  stateOf,
  suite,
  toState,
  waitWc,
  CROSS,
  connect,
  ALL_REMOTE,
} from "./harness.js";

async function noAsyncEvent(ctx: Context, ms = 50) {
  const ev = await ctx.getAsyncEvent(ms);
  expect(ev ? nameOf(ibv_event_type, ev.event_type) : null).toBe(null);
}

suite("SQD and IBV_EVENT_SQ_DRAINED (§2.3)", () => {
  it.each([
    ["without EN_SQD_ASYNC_NOTIFY", 0],
    ["with EN_SQD_ASYNC_NOTIFY", 1],
  ])(
    "RTS→SQD %s raises SQ_DRAINED for the QP; with an empty SQ it reads SQD, sq_draining 0 at once",
    async (_n, notify) => {
      const s = scope();
      const { a } = pair(s, LOOPBACK);
      a.qp.modify(
        { qp_state: IBV_QPS_SQD, en_sqd_async_notify: notify },
        IBV_QP_STATE | (notify ? IBV_QP_EN_SQD_ASYNC_NOTIFY : 0),
      );
      expect(a.qp.query().attr).toMatchObject({ qp_state: IBV_QPS_SQD, sq_draining: 0 });
      const ev = await a.ctx.getAsyncEvent(200);
      expect(ev && nameOf(ibv_event_type, ev.event_type)).toBe("IBV_EVENT_SQ_DRAINED");
      expect(ev?.qp_num).toBe(a.qp.qp_num);
      await noAsyncEvent(a.ctx);
    },
  );

  // Back to RTS only after SQ_DRAINED: rxe finishes the drain in its requester tasklet, so an
  // SQD→RTS issued before that tasklet ran is refused with EINVAL (seen on a loaded lab VM).
  it("SQD→RTS after each SQ_DRAINED is accepted, again and again, and the QP still moves data", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK);
    for (let i = 0; i < 3; i++) {
      toState(a.qp, IBV_QPS_SQD);
      const ev = await a.ctx.getAsyncEvent(1000);
      expect(ev && nameOf(ibv_event_type, ev.event_type)).toBe("IBV_EVENT_SQ_DRAINED");
      toState(a.qp, IBV_QPS_RTS);
    }
    await noAsyncEvent(a.ctx);
    b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(0, 64)] });
    a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] });
    expect((await waitWc(a.scq))[0].status).toBe(IBV_WC_SUCCESS);
  });
});

suite("post_send in SQD (§2.3)", () => {
  // rxe_post_send accepts in SQD (req.state is DRAINED, not below READY) and kicks the
  // requester, which takes no new WQE while draining or drained; SQD→RTS kicks nothing.
  it("post_send in SQD returns 0 and runs nothing; after SQD→RTS it runs with the next post, in order", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK);
    b.qp.postRecv([1, 2].map((i) => ({ wr_id: 600 + i, sg_list: [b.mr.sge(0, 64)] })));
    toState(a.qp, IBV_QPS_SQD);
    expect(nameOf(ibv_event_type, (await a.ctx.getAsyncEvent(1000))?.event_type ?? -1)).toBe("IBV_EVENT_SQ_DRAINED");
    a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] });
    await expectNoWc(a.scq, 50);
    await expectNoWc(b.rcq, 1);
    toState(a.qp, IBV_QPS_RTS);
    await expectNoWc(a.scq, 50);
    a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] });
    expect((await waitWc(a.scq, 2)).map((w) => [w.wr_id, w.status])).toEqual([
      [1, IBV_WC_SUCCESS],
      [2, IBV_WC_SUCCESS],
    ]);
    expect((await waitWc(b.rcq, 2)).map((w) => w.wr_id)).toEqual([601, 602]);
  });
});

suite("Async events: rxe raises no QP events (§7)", () => {
  it("none after RNR_RETRY_EXC_ERR, REM_ACCESS_ERR, LOC_QP_OP_ERR or a flush, on either side", async () => {
    const s = scope();
    // RNR retry exceeded.
    const p1 = pair(s, CROSS, { a_rts: { rnr_retry: 0 } });
    p1.a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [p1.a.mr.sge(0, 8)] });
    await waitWc(p1.a.scq);
    // Remote access error (bad rkey), which puts both sides in ERR.
    const p2 = pair(s, CROSS);
    p2.a.qp.postSend({
      wr_id: 2,
      opcode: IBV_WR_RDMA_WRITE,
      sg_list: [p2.a.mr.sge(0, 8)],
      rdma: { remote_addr: p2.b.mr.addr, rkey: p2.b.mr.rkey ^ 0x1 },
    });
    await waitWc(p2.a.scq);
    expectState(p2.b.qp, IBV_QPS_ERR);
    // Local error (bad lkey) and a flush.
    const p3 = pair(s, CROSS);
    p3.a.qp.postSend({ wr_id: 3, opcode: IBV_WR_SEND, sg_list: [{ ...p3.a.mr.sge(0, 8), lkey: 0 }] });
    await waitWc(p3.a.scq);
    p3.b.qp.postRecv({ wr_id: 4, sg_list: [p3.b.mr.sge(0, 8)] });
    toState(p3.b.qp, IBV_QPS_ERR);
    await waitWc(p3.b.rcq);
    for (const e of [p1.a, p1.b, p2.a, p2.b, p3.a, p3.b]) await noAsyncEvent(e.ctx, 20);
  });

  it("a CQ overflow raises IBV_EVENT_CQ_ERR naming that CQ; the CQ holds exactly cqe completions", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { a: { cqe: 1 } });
    expect(a.scq.cqe).toBe(1);
    b.qp.postRecv([1, 2].map((i) => ({ wr_id: i, sg_list: [b.mr.sge(64 * i, 64)] })));
    a.qp.postSend(
      [1, 2].map((i) => ({ wr_id: i, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 8)] })),
    );
    await waitWc(b.rcq, 2);
    const ev = await a.ctx.getAsyncEvent(200);
    expect(ev && nameOf(ibv_event_type, ev.event_type)).toBe(nameOf(ibv_event_type, IBV_EVENT_CQ_ERR));
    expect(ev?.cq).toBe(a.scq);
    expect(a.scq.poll(4).length).toBe(1);
  });
});

suite("CQ overflow (§7)", () => {
  // rxe_cq_post on a full CQ raises CQ_ERR and drops the CQE. The completer ignores that
  // (the send side carries on); the responder takes it as RESPST_ERR_CQ_OVERFLOW and moves
  // the receiving QP to ERR.
  it("send CQ of 1, three signaled SENDs: one CQ_ERR per dropped CQE (2), the CQ keeps the first, A stays RTS", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { a: { cqe: 1 } });
    b.qp.postRecv([1, 2, 3].map((i) => ({ wr_id: i, sg_list: [b.mr.sge(64 * i, 64)] })));
    a.qp.postSend([1, 2, 3].map((i) => ({ wr_id: i, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] })));
    expect((await waitWc(b.rcq, 3)).map((w) => w.status)).toEqual([0, 0, 0]);
    await B().sleep(20);
    const events = await drainAsync(a.ctx);
    recordMeasured("send CQ overflow, 3 SENDs into cqe 1: async events", events);
    expect(events).toEqual(["IBV_EVENT_CQ_ERR", "IBV_EVENT_CQ_ERR"]);
    expect(a.scq.poll(4).map((w) => w.wr_id)).toEqual([1]);
    expectState(a.qp, IBV_QPS_RTS);
    expectState(b.qp, IBV_QPS_RTS);
  });

  it("recv CQ of 1, two SENDs: the second receive's CQE overflows: CQ_ERR (and one more for the flush), B goes to ERR; A's second SEND is never acknowledged (RETRY_EXC_ERR)", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { b: { cqe: 1 }, a_rts: { timeout: 10, retry_cnt: 1 } });
    b.qp.postRecv([1, 2, 3].map((i) => ({ wr_id: i, sg_list: [b.mr.sge(64 * i, 64)] })));
    a.qp.postSend([1, 2].map((i) => ({ wr_id: i, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] })));
    const aw = await a.scq.pollWait(2, 500);
    await B().sleep(20);
    const events = await drainAsync(b.ctx);
    const got = b.rcq.poll(4);
    recordMeasured("recv CQ overflow, 2 SENDs into cqe 1: A's WCs, B's events, B's WCs, states", {
      a: aw.map((w) => [w.wr_id, nameOf(ibv_wc_status, w.status)]),
      events,
      b: got.map((w) => [w.wr_id, nameOf(ibv_wc_status, w.status)]),
      states: [stateName(stateOf(a.qp)), stateName(stateOf(b.qp))],
    });
    expect(aw.map((w) => [w.wr_id, nameOf(ibv_wc_status, w.status)])).toEqual([
      [1, "IBV_WC_SUCCESS"],
      [2, "IBV_WC_RETRY_EXC_ERR"],
    ]);
    // One for the receive that overflowed, one for the flush of the third when B entered ERR.
    expect(events).toEqual(["IBV_EVENT_CQ_ERR", "IBV_EVENT_CQ_ERR"]);
    expect(got.map((w) => [w.wr_id, w.status])).toEqual([[1, IBV_WC_SUCCESS]]);
    expectState(b.qp, IBV_QPS_ERR);
    expectState(a.qp, IBV_QPS_ERR);
  });
});

function channelPair(s: Scope) {
  const a = endpoint(s, "rxe0", "ipv4");
  const ctx = s.open("rxe0");
  const ch = s.channel(ctx);
  const token = { name: "recv cq" };
  const rcq = s.cq(ctx, 16, { channel: ch, cq_context: token });
  const pd = s.pd(ctx);
  const qp = s.qp(pd, { send_cq: s.cq(ctx), recv_cq: rcq, qp_type: a.qp.qp_type });
  const mr = s.mr(pd, 4096, ALL_REMOTE);
  const b = { ctx, pd, scq: qp.send_cq, rcq, qp, mr, gid: a.gid };
  return { a, b, ch, token };
}

suite("Completion channel (§7)", () => {
  async function connected() {
    const s = scope();
    const { a, b, ch, token } = channelPair(s);
    connect(a, b);
    const send = (flags = 0) =>
      a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: flags, sg_list: [a.mr.sge(0, 8)] });
    const recv = (n: number) => {
      for (let i = 0; i < n; i++) b.qp.postRecv({ wr_id: i, sg_list: [b.mr.sge(0, 64)] });
    };
    return { a, b, ch, token, send, recv };
  }

  it("no event is raised unless the CQ is armed", async () => {
    const { b, ch, send, recv } = await connected();
    recv(1);
    send();
    await waitWc(b.rcq);
    expect(await ch.getCqEvent(50)).toBe(null);
  });

  it("req_notify_cq(0) gives exactly one event for the next CQE, with the CQ and its cq_context; re-arm for another", async () => {
    const { b, ch, token, send, recv } = await connected();
    recv(3);
    b.rcq.reqNotify();
    send();
    const cq = await ch.getCqEvent(200);
    expect(cq).toBe(b.rcq);
    expect(cq?.cq_context).toBe(token);
    b.rcq.ackEvents(1);
    await waitWc(b.rcq);
    send();
    await waitWc(b.rcq);
    expect(await ch.getCqEvent(50)).toBe(null);
    b.rcq.reqNotify();
    send();
    expect(await ch.getCqEvent(200)).toBe(b.rcq);
    b.rcq.ackEvents(1);
  });

  it("req_notify_cq(solicited_only) ignores an unsolicited recv and fires on an IBV_SEND_SOLICITED one", async () => {
    const { b, ch, send, recv } = await connected();
    recv(2);
    b.rcq.reqNotify(true);
    send();
    await waitWc(b.rcq);
    expect(await ch.getCqEvent(50)).toBe(null);
    send(IBV_SEND_SOLICITED);
    expect(await ch.getCqEvent(200)).toBe(b.rcq);
    b.rcq.ackEvents(1);
  });

  it("ibv_destroy_cq with an event got and not acknowledged: EBUSY (libibverbs would wait for ever), nothing destroyed; after ackEvents it goes", async () => {
    // libibverbs destroys the kernel CQ and then waits for the acknowledgement for ever; both
    // backends refuse before that (verbs/cq-events.ts), so this never reaches a hanging destroy.
    const { b, ch, send, recv } = await connected();
    recv(1);
    b.rcq.reqNotify();
    send();
    expect(await ch.getCqEvent(200)).toBe(b.rcq);
    await waitWc(b.rcq);
    b.qp.destroy();
    const err = (() => {
      try {
        b.rcq.destroy();
      } catch (e) {
        return e as VerbsError;
      }
    })();
    expect(err).toBeInstanceOf(VerbsError);
    expect(err).toMatchObject({ verb: "ibv_destroy_cq", code: "EBUSY" });
    expect(err?.reason).toMatch(/1 completion event not acknowledged/);
    expect(b.rcq.poll(1)).toEqual([]); // still a live CQ
    b.rcq.ackEvents(1);
    b.rcq.destroy();
  });

  it("flush CQEs also fire an armed CQ", async () => {
    const { b, ch, recv } = await connected();
    recv(2);
    b.rcq.reqNotify();
    toState(b.qp, IBV_QPS_ERR);
    expect(await ch.getCqEvent(200)).toBe(b.rcq);
    b.rcq.ackEvents(1);
  });
});

/** Every async event waiting on `ctx` now (none left afterwards), by name. */
async function drainAsync(ctx: Context, ms = 50): Promise<string[]> {
  const names: string[] = [];
  for (let ev = await ctx.getAsyncEvent(ms); ev; ev = await ctx.getAsyncEvent(ms))
    names.push(nameOf(ibv_event_type, ev.event_type));
  return names;
}

// uverbs keeps a context's unread async events in one list, and destroying a QP or CQ removes
// that object's entries from it (ib_uverbs_release_uevent; for a CQ also its unread completion
// events, ib_uverbs_release_ucq): a destroyed object's event is never read.
suite("Destroying an object drops its unread events (uverbs, §7)", () => {
  it("a QP destroyed with its SQ_DRAINED unread: that event never arrives; another QP's still does", async () => {
    const s = scope();
    const { a } = pair(s, LOOPBACK);
    // A second QP on a's own context (its events share a's list), connected to a third one.
    const qp2 = s.qp(a.pd, { send_cq: a.scq, recv_cq: a.rcq, qp_type: a.qp.qp_type });
    connect({ ...a, qp: qp2 }, endpoint(s, "rxe0", "ipv4"));
    toState(a.qp, IBV_QPS_SQD);
    toState(qp2, IBV_QPS_SQD);
    await B().sleep(50); // both drains are over and both events are queued
    const gone = a.qp.qp_num;
    a.qp.destroy();
    const ev = await a.ctx.getAsyncEvent(200);
    expect(ev && nameOf(ibv_event_type, ev.event_type)).toBe("IBV_EVENT_SQ_DRAINED");
    expect(ev?.qp_num).toBe(qp2.qp_num);
    expect(ev?.qp_num).not.toBe(gone);
    expect(await drainAsync(a.ctx)).toEqual([]);
  });

  it("a CQ destroyed with its CQ_ERR unread: the event never arrives", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK, { a: { cqe: 1 } });
    b.qp.postRecv([1, 2].map((i) => ({ wr_id: i, sg_list: [b.mr.sge(64 * i, 64)] })));
    a.qp.postSend([1, 2].map((i) => ({ wr_id: i, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] })));
    await waitWc(b.rcq, 2);
    await B().sleep(20);
    a.qp.destroy();
    a.scq.destroy();
    expect(await drainAsync(a.ctx)).toEqual([]);
  });

  it("a CQ destroyed with a completion event not yet got: the channel never hands it out", async () => {
    const s = scope();
    const { a, b, ch } = channelPair(s);
    connect(a, b);
    b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(0, 64)] });
    b.rcq.reqNotify();
    a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8)] });
    await waitWc(b.rcq);
    await B().sleep(20);
    b.qp.destroy();
    b.rcq.destroy(); // no event was got, so nothing to acknowledge: destroy succeeds
    expect(await ch.getCqEvent(100)).toBe(null);
  });
});
