/**
 * Abuse: wrong argument types are TypeErrors; calls on destroyed objects are VerbsErrors
 * (EINVAL); absurd sizes and objects from another context are refused — never a crash,
 * never a hang.
 */
import { expect, it } from "vitest";
import type { Cq } from "../backend.js";
import { IBV_ACCESS_LOCAL_WRITE, IBV_QPS_INIT, IBV_QPT_RC, IBV_QP_STATE, IBV_WR_SEND } from "../constants.js";
import { VerbsError } from "../errors.js";
import type { QpInitAttr } from "../types.js";
import { B, LOOPBACK, expectVerbsError, findGid, pair, scope, suite } from "./harness.js";

const CAP = { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };

/** Calls fn and returns what it threw (a TypeError, RangeError or VerbsError), failing on success. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error("expected the call to throw");
}
function expectTypeError(fn: () => unknown) {
  expect(thrown(fn)).toBeInstanceOf(TypeError);
}
/** Refused as a JS error or a VerbsError: anything but success or a crash. */
function expectRefused(fn: () => unknown) {
  const e = thrown(fn);
  expect(e instanceof VerbsError || e instanceof TypeError || e instanceof RangeError, String(e)).toBe(true);
}

function basics() {
  const s = scope();
  const ctx = s.open("rxe0");
  const pd = s.pd(ctx);
  const cq = s.cq(ctx, 16);
  return { s, ctx, pd, cq };
}

suite("Abuse: wrong argument types are TypeErrors", () => {
  it("openDevice(42), queryPort('1'), createCq('10')", () => {
    const { ctx } = basics();
    expectTypeError(() => B().openDevice(42 as unknown as string));
    expectTypeError(() => ctx.queryPort("1" as unknown as number));
    expectTypeError(() => ctx.createCq("10" as unknown as number));
  });

  it("regMr with a string for memory or access", () => {
    const { pd } = basics();
    expectTypeError(() => pd.regMr("abc" as unknown as number, IBV_ACCESS_LOCAL_WRITE));
    expectTypeError(() => pd.regMr(4096, "x" as unknown as number));
  });

  it("createQp with null, or with a plain object for a CQ", () => {
    const { pd } = basics();
    expectTypeError(() => pd.createQp(null as unknown as QpInitAttr));
    expectTypeError(() => pd.createQp({ send_cq: {} as Cq, recv_cq: {} as Cq, qp_type: IBV_QPT_RC, cap: CAP }));
  });

  it("createQp without the cap object: a TypeError, or C's zeroed struct (a QP with no WRs), never garbage", () => {
    const { s, pd, cq } = basics();
    let qp;
    try {
      qp = pd.createQp({ send_cq: cq, recv_cq: cq, qp_type: IBV_QPT_RC } as unknown as QpInitAttr);
    } catch (e) {
      expect(e).toBeInstanceOf(TypeError);
      return;
    }
    s.defer(() => qp.destroy());
    const cap = qp.query().attr.cap;
    expect([cap.max_send_wr, cap.max_recv_wr, cap.max_recv_sge]).toEqual([0, 0, 0]);
  });

  it("modify with null attributes, a string state or a string mask", () => {
    const { s, pd, cq } = basics();
    const qp = s.qp(pd, { send_cq: cq, qp_type: IBV_QPT_RC });
    expectTypeError(() => qp.modify(null as never, IBV_QP_STATE));
    expectTypeError(() => qp.modify({ qp_state: "INIT" as unknown as number }, IBV_QP_STATE));
    expectTypeError(() => qp.modify({ qp_state: IBV_QPS_INIT }, "1" as unknown as number));
  });

  it("postSend with a string opcode or a non-number lkey; poll with a string", () => {
    const s = scope();
    const { a } = pair(s, LOOPBACK);
    expectTypeError(() => a.qp.postSend({ wr_id: 1, opcode: "SEND" as unknown as number, sg_list: [a.mr.sge()] }));
    expectTypeError(() =>
      a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [{ ...a.mr.sge(), lkey: "k" as unknown as number }] }),
    );
    expectTypeError(() => a.scq.poll("a" as unknown as number));
  });

  it("postSend(null) is refused (TypeError or EINVAL), never a crash", () => {
    const s = scope();
    const { a } = pair(s, LOOPBACK);
    expectRefused(() => a.qp.postSend(null as never));
  });
});

suite("Abuse: destroyed objects throw VerbsError EINVAL", () => {
  it("every destroy twice: dereg_mr, destroy_qp, destroy_cq, destroy_ah, destroy_comp_channel, dealloc_pd, close_device", () => {
    const ctx = B().openDevice("rxe0");
    const pd = ctx.allocPd();
    const cq = ctx.createCq(4);
    const ch = ctx.createCompChannel();
    const mr = pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
    const qp = pd.createQp({ send_cq: cq, recv_cq: cq, qp_type: IBV_QPT_RC, cap: CAP });
    const gid = findGid(ctx, "ipv4");
    const ah = pd.createAh({ is_global: 1, port_num: 1, grh: { dgid: gid.gid, sgid_index: gid.gid_index } });
    const steps: [string, () => void][] = [
      ["ibv_dereg_mr", () => mr.dereg()],
      ["ibv_destroy_qp", () => qp.destroy()],
      ["ibv_destroy_ah", () => ah.destroy()],
      ["ibv_destroy_cq", () => cq.destroy()],
      ["ibv_destroy_comp_channel", () => ch.destroy()],
      ["ibv_dealloc_pd", () => pd.dealloc()],
      ["ibv_close_device", () => ctx.close()],
    ];
    const codes = steps.map(([name, fn]) => {
      fn();
      const e = thrown(fn);
      return [name, e instanceof VerbsError ? e.code : String(e)];
    });
    expect(codes).toEqual(steps.map(([name]) => [name, "EINVAL"]));
  });

  it("using a destroyed QP, CQ, PD or context: query/modify/post/poll/reg/alloc give EINVAL", async () => {
    const ctx = B().openDevice("rxe0");
    const pd = ctx.allocPd();
    const cq = ctx.createCq(4);
    const qp = pd.createQp({ send_cq: cq, recv_cq: cq, qp_type: IBV_QPT_RC, cap: CAP });
    const mr = pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
    const sge = mr.sge();
    qp.destroy();
    expectVerbsError(() => qp.query(), "EINVAL");
    expectVerbsError(() => qp.modify({ qp_state: IBV_QPS_INIT }, IBV_QP_STATE), "EINVAL");
    expectVerbsError(() => qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [sge] }), "EINVAL");
    expectVerbsError(() => qp.postRecv({ wr_id: 1, sg_list: [sge] }), "EINVAL");
    cq.destroy();
    expectVerbsError(() => cq.poll(), "EINVAL");
    let waitErr: unknown;
    try {
      await cq.pollWait(1, 10);
    } catch (e) {
      waitErr = e;
    }
    expect(waitErr instanceof VerbsError && waitErr.code).toBe("EINVAL");
    mr.dereg();
    pd.dealloc();
    expectVerbsError(() => pd.regMr(64, IBV_ACCESS_LOCAL_WRITE), "EINVAL");
    ctx.close();
    expectVerbsError(() => ctx.queryDevice(), "EINVAL");
    expectVerbsError(() => ctx.allocPd(), "EINVAL");
  });
});

suite("Abuse: absurd sizes and foreign objects are refused", () => {
  it("createCq(1e12) gives EINVAL; createCq(NaN) and createCq(1.5) are refused", () => {
    const { ctx } = basics();
    expectVerbsError(() => ctx.createCq(1e12), "EINVAL");
    expectRefused(() => ctx.createCq(NaN));
    expectRefused(() => ctx.createCq(1.5));
  });

  it("regMr of -1 bytes or 2^53 bytes is refused", () => {
    const { pd } = basics();
    expectRefused(() => pd.regMr(-1, IBV_ACCESS_LOCAL_WRITE));
    expectRefused(() => pd.regMr(2 ** 53, IBV_ACCESS_LOCAL_WRITE));
  });

  it("createQp with max_send_wr 2^31 gives EINVAL; -1 is refused", () => {
    const { pd, cq } = basics();
    expectVerbsError(
      () => pd.createQp({ send_cq: cq, recv_cq: cq, qp_type: IBV_QPT_RC, cap: { ...CAP, max_send_wr: 2 ** 31 } }),
      "EINVAL",
    );
    expectRefused(() =>
      pd.createQp({ send_cq: cq, recv_cq: cq, qp_type: IBV_QPT_RC, cap: { ...CAP, max_send_wr: -1 } }),
    );
  });

  it("modify with qp_state 8 or 255 gives EINVAL and the QP stays RESET", () => {
    const { s, pd, cq } = basics();
    const qp = s.qp(pd, { send_cq: cq, qp_type: IBV_QPT_RC });
    // Not 1e9: the uverbs ABI carries qp_state in 8 bits, so real libibverbs sends 1e9 as 0 (RESET).
    for (const st of [8, 255]) expectVerbsError(() => qp.modify({ qp_state: st }, IBV_QP_STATE), "EINVAL");
    expect(qp.query().attr.qp_state).toBe(0);
  });

  it("createQp with CQs from another context (rxe1) fails with EINVAL", () => {
    const { s, pd } = basics();
    const other = s.cq(s.open("rxe1"), 4);
    expectVerbsError(() => pd.createQp({ send_cq: other, recv_cq: other, qp_type: IBV_QPT_RC, cap: CAP }), "EINVAL");
  });

  it("createQp with a CQ of another context on the same device fails with EINVAL", () => {
    const { s, pd } = basics();
    const other = s.cq(s.open("rxe0"), 4);
    expectVerbsError(() => pd.createQp({ send_cq: other, recv_cq: other, qp_type: IBV_QPT_RC, cap: CAP }), "EINVAL");
  });
});

suite("Abuse: a wait longer than any timer holds is refused, on every backend", () => {
  /** What the wait threw or rejected with (sync or async alike). */
  async function refusal(wait: () => unknown): Promise<unknown> {
    try {
      await wait();
    } catch (e) {
      return e;
    }
    throw new Error("expected the wait to be refused");
  }

  it("sleep, pollWait, getCqEvent and getAsyncEvent over 2^31 - 1 ms: EINVAL naming the argument", async () => {
    const { s, ctx } = basics();
    const channel = s.channel(ctx);
    const cq = s.cq(ctx, 16);
    const tooLong = 2 ** 31;
    for (const [wait, attribute] of [
      [() => B().sleep(tooLong), "ms"],
      [() => cq.pollWait(1, tooLong), "timeoutMs"],
      [() => channel.getCqEvent(tooLong), "timeoutMs"],
      [() => ctx.getAsyncEvent(tooLong), "timeoutMs"],
    ] as const)
      expect(await refusal(wait)).toMatchObject({ name: "VerbsError", code: "EINVAL", attribute });
  });
});
