/**
 * sim/RXE-FACTS.md §2.1: which attribute values each layer checks (port, AV, path_mtu, timeout,
 * max_rd_atomic), which it does not, and how PSNs are masked.
 */
import { beforeAll, expect, it } from "vitest";
import type { Cq, Pd, Qp } from "../backend.js";
import {
  IBV_ACCESS_REMOTE_WRITE,
  IBV_MTU_1024,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_RC,
  IBV_QPT_UD,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_AV,
  IBV_QP_DEST_QPN,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_PATH_MTU,
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_QKEY,
  IBV_QP_RETRY_CNT,
  IBV_QP_RNR_RETRY,
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
  IBV_QP_TIMEOUT,
} from "../constants.js";
import type { GidEntry, QpAttrInput } from "../types.js";
import { expectState, expectVerbsError, fileScope, findGid, scope, suite } from "./harness.js";
import { attrFor, newQp } from "./modify-table.js";

let pd: Pd;
let cq: Cq;
let gid: GidEntry;
let ll: GidEntry;

const RTR_MASK =
  IBV_QP_STATE |
  IBV_QP_AV |
  IBV_QP_PATH_MTU |
  IBV_QP_DEST_QPN |
  IBV_QP_RQ_PSN |
  IBV_QP_MAX_DEST_RD_ATOMIC |
  IBV_QP_MIN_RNR_TIMER;
const RTS_MASK =
  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
const INIT_MASK = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;

function rc(state: number): Qp {
  return newQp(scope(), pd, cq, gid, IBV_QPT_RC, state);
}
/** The RTR attributes with some replaced. */
function rtr(qp: Qp, over: QpAttrInput): QpAttrInput {
  return { ...attrFor(RTR_MASK, qp, gid, IBV_QPS_INIT, IBV_QPS_RTR), ...over };
}
function rts(qp: Qp, over: QpAttrInput): QpAttrInput {
  return { ...attrFor(RTS_MASK, qp, gid, IBV_QPS_RTR, IBV_QPS_RTS), ...over };
}
function init(qp: Qp, over: QpAttrInput): QpAttrInput {
  return { ...attrFor(INIT_MASK, qp, gid, IBV_QPS_RESET, IBV_QPS_INIT), ...over };
}

suite("modify_qp: values that are checked (§2.1)", () => {
  beforeAll(() => {
    const fs = fileScope();
    const ctx = fs.open("rxe0");
    pd = fs.pd(ctx);
    cq = fs.cq(ctx, 256);
    gid = findGid(ctx, "ipv4");
    ll = findGid(ctx, "linklocal");
  });

  it.each([0, 2])("RESET→INIT with port_num %i gives EINVAL", (port) => {
    const qp = rc(IBV_QPS_RESET);
    expectVerbsError(() => qp.modify(init(qp, { port_num: port }), INIT_MASK), "EINVAL");
    expectState(qp, IBV_QPS_RESET);
  });

  it("INIT→RTR with ah_attr.port_num 2 gives EINVAL", () => {
    const qp = rc(IBV_QPS_INIT);
    const a = rtr(qp, {});
    expectVerbsError(() => qp.modify({ ...a, ah_attr: { ...a.ah_attr, port_num: 2 } }, RTR_MASK), "EINVAL");
    expectState(qp, IBV_QPS_INIT);
  });

  it("INIT→RTR with is_global 0 gives EINVAL (RoCE needs a GRH)", () => {
    const qp = rc(IBV_QPS_INIT);
    const a = rtr(qp, {});
    expectVerbsError(() => qp.modify({ ...a, ah_attr: { ...a.ah_attr, is_global: 0 } }, RTR_MASK), "EINVAL");
    expectState(qp, IBV_QPS_INIT);
  });

  it.each([
    ["an empty slot (100)", 100],
    ["an empty slot (255, the largest a u8 holds)", 255],
  ])("INIT→RTR with sgid_index %s gives ENODATA", (_n, idx) => {
    const qp = rc(IBV_QPS_INIT);
    const a = rtr(qp, {});
    const ah_attr = { ...a.ah_attr, grh: { ...a.ah_attr!.grh, sgid_index: idx } };
    expectVerbsError(() => qp.modify({ ...a, ah_attr }, RTR_MASK), "ENODATA");
    expectState(qp, IBV_QPS_INIT);
  });

  it.each([
    ["::", "::"],
    ["an unroutable IPv6 address", "2001:db8::1"],
  ])("INIT→RTR from the link-local GID to dgid %s gives ENETUNREACH", (_n, dgid) => {
    const qp = rc(IBV_QPS_INIT);
    const a = rtr(qp, {});
    const ah_attr = { ...a.ah_attr, grh: { ...a.ah_attr!.grh, sgid_index: ll.gid_index, dgid } };
    expectVerbsError(() => qp.modify({ ...a, ah_attr }, RTR_MASK), "ENETUNREACH");
    expectState(qp, IBV_QPS_INIT);
  });

  it("INIT→RTR from the IPv4 GID to an IPv6 dgid gives EINVAL (address families differ; measured in the lab VM)", () => {
    const qp = rc(IBV_QPS_INIT);
    const a = rtr(qp, {});
    const ah_attr = { ...a.ah_attr, grh: { ...a.ah_attr!.grh, sgid_index: gid.gid_index, dgid: "2001:db8::1" } };
    expectVerbsError(() => qp.modify({ ...a, ah_attr }, RTR_MASK), "EINVAL");
    expectState(qp, IBV_QPS_INIT);
  });

  it("INIT→RTR with path_mtu 6 gives EINVAL; path_mtu 0 is accepted", () => {
    const qp = rc(IBV_QPS_INIT);
    expectVerbsError(() => qp.modify(rtr(qp, { path_mtu: 6 }), RTR_MASK), "EINVAL");
    expectState(qp, IBV_QPS_INIT);
    qp.modify(rtr(qp, { path_mtu: 0 }), RTR_MASK);
    expectState(qp, IBV_QPS_RTR);
  });

  it("RTR→RTS with timeout 32 gives EINVAL; 31 is accepted", () => {
    const qp = rc(IBV_QPS_RTR);
    expectVerbsError(() => qp.modify(rts(qp, { timeout: 32 }), RTS_MASK), "EINVAL");
    expectState(qp, IBV_QPS_RTR);
    qp.modify(rts(qp, { timeout: 31 }), RTS_MASK);
    expect(qp.query().attr.timeout).toBe(31);
  });

  it("RTR→RTS with max_rd_atomic 129 gives EINVAL; 128 is accepted", () => {
    const qp = rc(IBV_QPS_RTR);
    expectVerbsError(() => qp.modify(rts(qp, { max_rd_atomic: 129 }), RTS_MASK), "EINVAL");
    expectState(qp, IBV_QPS_RTR);
    qp.modify(rts(qp, { max_rd_atomic: 128 }), RTS_MASK);
    expect(qp.query().attr.max_rd_atomic).toBe(128);
  });
});

suite("modify_qp: values rxe does not check (§2.1, §2.2)", () => {
  beforeAll(() => {
    const fs = fileScope();
    const ctx = fs.open("rxe0");
    pd = fs.pd(ctx);
    cq = fs.cq(ctx, 256);
    gid = findGid(ctx, "ipv4");
  });

  it.each([
    ["0xffff", 0xffff],
    ["0", 0],
    ["REMOTE_WRITE without LOCAL_WRITE", IBV_ACCESS_REMOTE_WRITE],
    ["63", 63],
  ])("RESET→INIT with qp_access_flags %s is accepted (QP access is not validated)", (_n, access) => {
    const qp = rc(IBV_QPS_RESET);
    qp.modify(init(qp, { qp_access_flags: access }), INIT_MASK);
    expectState(qp, IBV_QPS_INIT);
  });

  it("RESET→INIT with pkey_index 200 is accepted", () => {
    const qp = rc(IBV_QPS_RESET);
    qp.modify(init(qp, { pkey_index: 200 }), INIT_MASK);
    expectState(qp, IBV_QPS_INIT);
  });

  it.each([
    ["max_dest_rd_atomic 129", { max_dest_rd_atomic: 129 }],
    ["min_rnr_timer 255", { min_rnr_timer: 255 }],
  ])("INIT→RTR with %s is accepted", (_n, over) => {
    const qp = rc(IBV_QPS_INIT);
    qp.modify(rtr(qp, over), RTR_MASK);
    expectState(qp, IBV_QPS_RTR);
  });

  it.each([
    ["retry_cnt 40", { retry_cnt: 40 }],
    ["rnr_retry 8", { rnr_retry: 8 }],
  ])("RTR→RTS with %s is accepted", (_n, over) => {
    const qp = rc(IBV_QPS_RTR);
    qp.modify(rts(qp, over), RTS_MASK);
    expectState(qp, IBV_QPS_RTS);
  });

  it("dest_qp_num 0x1000000 (25 bits) is accepted and stored unmasked", () => {
    const qp = rc(IBV_QPS_INIT);
    qp.modify(rtr(qp, { dest_qp_num: 0x1000000 }), RTR_MASK);
    expect(qp.query().attr.dest_qp_num).toBe(0x1000000);
  });

  it("PSNs wider than 24 bits are masked, not rejected: rq_psn 0x1abcdef → 0xabcdef, sq_psn 0xffffffff → 0xffffff", () => {
    const qp = rc(IBV_QPS_INIT);
    qp.modify(rtr(qp, { rq_psn: 0x1abcdef }), RTR_MASK);
    expect(qp.query().attr.rq_psn).toBe(0xabcdef);
    qp.modify(rts(qp, { sq_psn: 0xffffffff }), RTS_MASK);
    expect(qp.query().attr.sq_psn).toBe(0xffffff);
  });

  it("UD RESET→INIT with qkey 0x80000000 (bit 31) is accepted for root", () => {
    const qp = newQp(scope(), pd, cq, gid, IBV_QPT_UD, IBV_QPS_RESET);
    qp.modify(
      { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qkey: 0x80000000 },
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
    );
    expect(qp.query().attr.qkey).toBe(0x80000000);
  });

  it("the path_mtu may exceed the port's active_mtu (2048 on a 1024 port) up to max_mtu", () => {
    const qp = rc(IBV_QPS_INIT);
    qp.modify(rtr(qp, { path_mtu: IBV_MTU_1024 + 1 }), RTR_MASK);
    expect(qp.query().attr.path_mtu).toBe(IBV_MTU_1024 + 1);
  });
});
