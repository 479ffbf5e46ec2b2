/** sim/RXE-FACTS.md §3.1: QP capacity rounding, the SGE/inline coupling, limits, unsupported types. */
import { expect, it } from "vitest";
import {
  IBV_QPS_RESET,
  IBV_QPT_RAW_PACKET,
  IBV_QPT_RC,
  IBV_QPT_UD,
  IBV_QPT_XRC_SEND,
  IBV_QP_CAP,
} from "../constants.js";
import type { Cq, Pd } from "../backend.js";
import type { QpCap } from "../types.js";
import { QP_TYPES, expectVerbsError, scope, suite } from "./harness.js";

function setup() {
  const s = scope();
  const ctx = s.open("rxe0");
  return { s, pd: s.pd(ctx), cq: s.cq(ctx) };
}
const cap = (c: Partial<QpCap>): QpCap => ({
  max_send_wr: 1,
  max_recv_wr: 1,
  max_send_sge: 1,
  max_recv_sge: 1,
  max_inline_data: 0,
  ...c,
});
function create(pd: Pd, cq: Cq, c: Partial<QpCap>, qp_type: number = IBV_QPT_RC) {
  return pd.createQp({ send_cq: cq, recv_cq: cq, qp_type, cap: cap(c) });
}

suite("QP create: WR depth is roundup_pow_of_two(n+1) - 1 in query, the request in create", () => {
  it.each([
    [0, 0],
    [1, 1],
    [2, 3],
    [3, 3],
    [4, 7],
    [7, 7],
    [8, 15],
    [15, 15],
    [16, 31],
    [100, 127],
  ])("max_send_wr = max_recv_wr = %i: ibv_query_qp reports %i", (req, got) => {
    const { s, pd, cq } = setup();
    const qp = create(pd, cq, { max_send_wr: req, max_recv_wr: req });
    s.defer(() => qp.destroy());
    const q = qp.query(IBV_QP_CAP);
    expect(q.attr.cap.max_send_wr).toBe(got);
    expect(q.attr.cap.max_recv_wr).toBe(got);
    expect(q.init_attr.cap.max_send_wr).toBe(got);
  });

  it("the cap ibv_create_qp writes back is the requested value (10 stays 10; query says 15)", () => {
    const { s, pd, cq } = setup();
    const qp = create(pd, cq, {
      max_send_wr: 10,
      max_recv_wr: 5,
      max_send_sge: 3,
      max_recv_sge: 2,
      max_inline_data: 100,
    });
    s.defer(() => qp.destroy());
    expect(qp.cap.max_send_wr).toBe(10);
    expect(qp.cap.max_recv_wr).toBe(5);
    expect(qp.query().attr.cap).toEqual({
      max_send_wr: 15,
      max_recv_wr: 7,
      max_send_sge: 6,
      max_recv_sge: 2,
      max_inline_data: 100,
    });
  });

  it("ibv_create_qp writes back the coupled SGE/inline size: {sge 1, inline 0} returns max_inline_data 16", () => {
    const { s, pd, cq } = setup();
    const qp = create(pd, cq, { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_inline_data: 0 });
    s.defer(() => qp.destroy());
    expect(qp.cap).toEqual({ max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 16 });
  });

  it.each(QP_TYPES)("a new $name QP starts in RESET with its type", ({ type }) => {
    const { s, pd, cq } = setup();
    const qp = create(pd, cq, {}, type);
    s.defer(() => qp.destroy());
    expect(qp.qp_type).toBe(type);
    expect(qp.query().attr.qp_state).toBe(IBV_QPS_RESET);
    expect(qp.query().init_attr.qp_type).toBe(type);
    expect(qp.send_cq).toBe(cq);
    expect(qp.recv_cq).toBe(cq);
  });

  it("max_send_wr = max_recv_wr = 1048576 (max_qp_wr) is accepted; 1048577 fails with EINVAL", () => {
    const { s, pd, cq } = setup();
    // The RQ alone at the limit (an SQ of 2M WQEs is a lot of memory for the lab VM).
    const qp = create(pd, cq, { max_recv_wr: 1048576 });
    s.defer(() => qp.destroy());
    expect(qp.query(IBV_QP_CAP).attr.cap.max_recv_wr).toBe(2097151);
    expectVerbsError(() => create(pd, cq, { max_send_wr: 1048577 }), "EINVAL");
    expectVerbsError(() => create(pd, cq, { max_recv_wr: 1048577 }), "EINVAL");
  });
});

suite("QP create: send SGEs and inline data share one slot, wqe = max(16 × sge, inline)", () => {
  it.each([
    [1, 0, 1, 16],
    [3, 100, 6, 100],
    [1, 64, 4, 64],
    [1, 17, 1, 17],
    [32, 0, 32, 512],
  ])("max_send_sge %i, max_inline_data %i → sge %i, inline %i", (sge, inline, gotSge, gotInline) => {
    const { s, pd, cq } = setup();
    const qp = create(pd, cq, { max_send_sge: sge, max_inline_data: inline });
    s.defer(() => qp.destroy());
    const c = qp.query(IBV_QP_CAP).attr.cap;
    expect({ sge: c.max_send_sge, inline: c.max_inline_data }).toEqual({ sge: gotSge, inline: gotInline });
  });

  it("max_recv_sge is not rounded (3 stays 3)", () => {
    const { s, pd, cq } = setup();
    const qp = create(pd, cq, { max_recv_sge: 3 });
    s.defer(() => qp.destroy());
    expect(qp.query(IBV_QP_CAP).attr.cap.max_recv_sge).toBe(3);
  });

  it("max_inline_data 512 is accepted, 513 fails with EINVAL", () => {
    const { s, pd, cq } = setup();
    const qp = create(pd, cq, { max_inline_data: 512 });
    s.defer(() => qp.destroy());
    expectVerbsError(() => create(pd, cq, { max_inline_data: 513 }), "EINVAL");
  });

  it("max_send_sge 33 fails with EINVAL (max_sge is 32)", () => {
    const { pd, cq } = setup();
    expectVerbsError(() => create(pd, cq, { max_send_sge: 33 }), "EINVAL");
    expectVerbsError(() => create(pd, cq, { max_recv_sge: 33 }), "EINVAL");
  });
});

suite("QP create: types rxe does not support", () => {
  it.each([
    ["RAW_PACKET", IBV_QPT_RAW_PACKET],
    ["XRC_SEND", IBV_QPT_XRC_SEND],
  ])("ibv_create_qp of %s fails with EOPNOTSUPP", (_n, type) => {
    const { pd, cq } = setup();
    expectVerbsError(() => create(pd, cq, {}, type), "EOPNOTSUPP");
  });

  it("create_qp without a recv_cq fails with EINVAL (libibverbs 44 would segfault)", () => {
    const { pd, cq } = setup();
    expectVerbsError(
      () => pd.createQp({ send_cq: cq, recv_cq: null as unknown as Cq, qp_type: IBV_QPT_UD, cap: cap({}) }),
      "EINVAL",
    );
  });

  it("a QP may use one CQ for both queues or two different CQs", () => {
    const { s, pd, cq } = setup();
    const cq2 = s.cq(pd.context);
    const qp = pd.createQp({ send_cq: cq, recv_cq: cq2, qp_type: IBV_QPT_RC, cap: cap({}) });
    s.defer(() => qp.destroy());
    expect(qp.send_cq).toBe(cq);
    expect(qp.recv_cq).toBe(cq2);
  });
});
