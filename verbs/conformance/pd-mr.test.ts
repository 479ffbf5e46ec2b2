/** sim/RXE-FACTS.md §6.1–6.3: ibv_reg_mr access rules, key formats, destroy ordering. */
import { expect, it } from "vitest";
import {
  IBV_ACCESS_HUGETLB,
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_MW_BIND,
  IBV_ACCESS_ON_DEMAND,
  IBV_ACCESS_RELAXED_ORDERING,
  IBV_ACCESS_REMOTE_ATOMIC,
  IBV_ACCESS_REMOTE_READ,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_ACCESS_ZERO_BASED,
  IBV_QPT_RC,
} from "../constants.js";
import { expectVerbsError, findGid, scope, suite } from "./harness.js";

const LW = IBV_ACCESS_LOCAL_WRITE;
const RW = IBV_ACCESS_REMOTE_WRITE;
const RR = IBV_ACCESS_REMOTE_READ;
const RA = IBV_ACCESS_REMOTE_ATOMIC;

const index = (key: number) => key >>> 8;

suite("MR: ibv_reg_mr access flags (§6.1)", () => {
  it.each([
    ["0", 0],
    ["LOCAL_WRITE", LW],
    ["MW_BIND", IBV_ACCESS_MW_BIND],
    ["ZERO_BASED", IBV_ACCESS_ZERO_BASED],
    ["HUGETLB", IBV_ACCESS_HUGETLB],
    ["RELAXED_ORDERING", IBV_ACCESS_RELAXED_ORDERING],
  ])("access %s is accepted with rkey = 0 (no REMOTE_* bit)", (_n, access) => {
    const s = scope();
    const mr = s.mr(s.pd(s.open()), 4096, access);
    expect(mr.lkey).not.toBe(0);
    expect(mr.rkey).toBe(0);
    expect(mr.access).toBe(access);
  });

  it.each([
    ["REMOTE_READ alone", RR],
    ["LW|RW", LW | RW],
    ["LW|RA", LW | RA],
    ["LW|RR|RW|RA", LW | RR | RW | RA],
  ])("access %s is accepted with rkey = lkey", (_n, access) => {
    const s = scope();
    const mr = s.mr(s.pd(s.open()), 4096, access);
    expect(mr.rkey).toBe(mr.lkey);
  });

  it.each([
    ["REMOTE_WRITE without LOCAL_WRITE", RW],
    ["REMOTE_ATOMIC without LOCAL_WRITE", RA],
    ["ON_DEMAND (rxe has no ODP)", IBV_ACCESS_ON_DEMAND],
    ["an unknown bit (1<<30)", 1 << 30],
  ])("access %s fails with EINVAL", (_n, access) => {
    const s = scope();
    const pd = s.pd(s.open());
    expectVerbsError(() => pd.regMr(4096, access), "EINVAL");
  });

  it("length 0 fails with EINVAL (as a length and as an empty ArrayBuffer)", () => {
    const s = scope();
    const pd = s.pd(s.open());
    expectVerbsError(() => pd.regMr(0, LW), "EINVAL");
    expectVerbsError(() => pd.regMr(new ArrayBuffer(0), LW), "EINVAL");
  });

  it("a length registers a new zeroed buffer of that size", () => {
    const s = scope();
    const mr = s.mr(s.pd(s.open()), 300, LW);
    expect(mr.length).toBe(300);
    expect(mr.bytes.length).toBe(300);
    expect(mr.bytes.every((b) => b === 0)).toBe(true);
  });

  it("an unaligned view (offset 100, 50 bytes) is accepted and keeps its addr and length", () => {
    const s = scope();
    const pd = s.pd(s.open());
    const buf = new ArrayBuffer(4096);
    const whole = s.mr(pd, buf, LW);
    const part = s.mr(pd, new Uint8Array(buf, 100, 50), LW);
    expect(part.length).toBe(50);
    expect(part.addr).toBe(whole.addr + 100);
  });

  it("the MR's bytes are the program's memory: a write through the buffer is seen in mr.bytes and back", () => {
    const s = scope();
    const buf = new ArrayBuffer(64);
    const mr = s.mr(s.pd(s.open()), buf, LW);
    new Uint8Array(buf)[5] = 0xab;
    expect(mr.bytes[5]).toBe(0xab);
    mr.bytes[6] = 0xcd;
    expect(new Uint8Array(buf)[6]).toBe(0xcd);
  });

  it("the same buffer registered twice gives two MRs with different keys", () => {
    const s = scope();
    const pd = s.pd(s.open());
    const buf = new ArrayBuffer(4096);
    const a = s.mr(pd, buf, LW | RW);
    const b = s.mr(pd, buf, LW | RW);
    expect(b.lkey).not.toBe(a.lkey);
    expect(b.addr).toBe(a.addr);
  });

  it("mr.sge() covers the whole MR by default and a slice when asked", () => {
    const s = scope();
    const mr = s.mr(s.pd(s.open()), 1000, LW);
    expect(mr.sge()).toEqual({ addr: mr.addr, length: 1000, lkey: mr.lkey });
    expect(mr.sge(10, 20)).toEqual({ addr: mr.addr + 10, length: 20, lkey: mr.lkey });
  });
});

suite("MR: key format lkey = (pool index << 8) | random key byte (§6.2)", () => {
  it("consecutive registrations on one device take consecutive indices, never below 2 (index 1 is the kernel's DMA MR)", () => {
    const s = scope();
    const pd = s.pd(s.open());
    const keys = [0, 1, 2, 3].map(() => s.mr(pd, 4096, LW).lkey);
    for (const k of keys) expect(index(k)).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < keys.length; i++) expect(index(keys[i])).toBe(index(keys[i - 1]) + 1);
  });

  it("indices are not reused after ibv_dereg_mr: the next one keeps increasing", () => {
    const s = scope();
    const pd = s.pd(s.open());
    const a = s.mr(pd, 4096, LW);
    const b = pd.regMr(4096, LW);
    const bIndex = index(b.lkey);
    b.dereg();
    const c = s.mr(pd, 4096, LW);
    expect(index(c.lkey)).toBe(bIndex + 1);
    expect(index(a.lkey)).toBe(bIndex - 1);
  });

  it("the key byte is random: 8 registrations do not all share one", () => {
    const s = scope();
    const pd = s.pd(s.open());
    const bytes = new Set(Array.from({ length: 8 }, () => s.mr(pd, 4096, LW).lkey & 0xff));
    expect(bytes.size).toBeGreaterThan(1);
  });

  it("each device has its own MR index pool (a registration on rxe1 does not advance rxe0's)", () => {
    const s = scope();
    const pd0 = s.pd(s.open("rxe0"));
    const pd1 = s.pd(s.open("rxe1"));
    const a = s.mr(pd0, 4096, LW);
    s.mr(pd1, 4096, LW);
    s.mr(pd1, 4096, LW);
    const b = s.mr(pd0, 4096, LW);
    expect(index(b.lkey)).toBe(index(a.lkey) + 1);
  });

  it("QPNs count up by one per QP, shared by RC/UC/UD, start at 0x11 or above, and are not reused", () => {
    const s = scope();
    const ctx = s.open("rxe0");
    const pd = s.pd(ctx);
    const cq = s.cq(ctx);
    const q1 = s.qp(pd, { send_cq: cq, qp_type: IBV_QPT_RC });
    const q2 = pd.createQp({
      send_cq: cq,
      recv_cq: cq,
      qp_type: 4,
      cap: { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
    });
    const q2num = q2.qp_num;
    q2.destroy();
    const q3 = s.qp(pd, { send_cq: cq, qp_type: 3 });
    expect(q1.qp_num).toBeGreaterThanOrEqual(0x11);
    expect(q2num).toBe(q1.qp_num + 1);
    expect(q3.qp_num).toBe(q2num + 1);
  });

  it("each device has its own QPN counter", () => {
    const s = scope();
    const c0 = s.open("rxe0");
    const c1 = s.open("rxe1");
    const pd0 = s.pd(c0);
    const pd1 = s.pd(c1);
    const cq0 = s.cq(c0);
    const cq1 = s.cq(c1);
    const a = s.qp(pd0, { send_cq: cq0, qp_type: IBV_QPT_RC });
    s.qp(pd1, { send_cq: cq1, qp_type: IBV_QPT_RC });
    const b = s.qp(pd0, { send_cq: cq0, qp_type: IBV_QPT_RC });
    expect(b.qp_num).toBe(a.qp_num + 1);
  });
});

suite("PD: destroy ordering (§6.3)", () => {
  it("ibv_dealloc_pd with a live MR fails with EBUSY, and succeeds after ibv_dereg_mr", () => {
    const s = scope();
    const pd = s.open().allocPd();
    const mr = pd.regMr(4096, LW);
    expectVerbsError(() => pd.dealloc(), "EBUSY");
    mr.dereg();
    pd.dealloc();
  });

  it("ibv_dealloc_pd with a live QP fails with EBUSY", () => {
    const s = scope();
    const ctx = s.open();
    const cq = s.cq(ctx);
    const pd = ctx.allocPd();
    const qp = pd.createQp({
      send_cq: cq,
      recv_cq: cq,
      qp_type: IBV_QPT_RC,
      cap: { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
    });
    expectVerbsError(() => pd.dealloc(), "EBUSY");
    qp.destroy();
    pd.dealloc();
  });

  it("ibv_dealloc_pd with a live AH fails with EBUSY", () => {
    const s = scope();
    const ctx = s.open();
    const pd = ctx.allocPd();
    const gid = findGid(ctx, "ipv4");
    const ah = pd.createAh({ is_global: 1, port_num: 1, grh: { dgid: gid.gid, sgid_index: gid.gid_index } });
    expectVerbsError(() => pd.dealloc(), "EBUSY");
    ah.destroy();
    pd.dealloc();
  });

  it("ibv_dereg_mr twice: the second call fails with EINVAL (already destroyed)", () => {
    const s = scope();
    const mr = s.pd(s.open()).regMr(4096, LW);
    mr.dereg();
    expectVerbsError(() => mr.dereg(), "EINVAL");
  });

  it("ibv_close_device succeeds with resources still open", () => {
    const s = scope();
    const ctx = s.open("rxe1");
    const pd = ctx.allocPd();
    pd.regMr(4096, LW);
    ctx.createCq(4);
    expect(() => ctx.close()).not.toThrow();
  });
});
