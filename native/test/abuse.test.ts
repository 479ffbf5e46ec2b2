/**
 * Abuse (VM only): the wrong `this`, use after destroy, and absurd arguments must throw a
 * TypeError or a VerbsError, never crash the process or reach libibverbs with garbage.
 * Covers both the contract objects and the raw addon classes underneath them.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Context } from "../../verbs/backend.js";
import * as v from "../../verbs/constants.js";
import { VerbsError } from "../../verbs/errors.js";
import { loadAddon } from "../addon.js";
import { ALL_ACCESS, B, announceSkip, connectRc, linkLocal } from "./native-env.js";

const skip = announceSkip("native/test/abuse.test.ts");

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof VerbsError) return e.code;
    if (e instanceof TypeError) return "TypeError";
    return `other: ${String(e)}`;
  }
  return "no error";
}

const open: Context[] = [];
function ctx(): Context {
  const c = B().openDevice("rxe0");
  open.push(c);
  return c;
}
afterEach(() => {
  while (open.length) open.pop()!.close();
});

describe.skipIf(skip)("native abuse: the wrong this", () => {
  it("contract methods called on another object are TypeErrors", () => {
    const c = ctx();
    const pd = c.allocPd();
    const cq = c.createCq(4);
    const qp = pd.createQp({
      send_cq: cq,
      recv_cq: cq,
      qp_type: v.IBV_QPT_RC,
      cap: { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
    });
    expect(code(() => qp.postSend.call(cq as never, []))).toBe("TypeError");
    expect(code(() => cq.poll.call(qp as never, 1))).toBe("TypeError");
    expect(code(() => pd.regMr.call(c as never, 8, 0))).toBe("TypeError");
    expect(code(() => c.allocPd.call(undefined as never))).toBe("TypeError");
    expect(code(() => pd.dealloc.call({} as never))).toBe("TypeError");
  });

  it("raw addon methods check their receiver's class tag, and the classes cannot be constructed from JS", () => {
    const loaded = loadAddon();
    if (!("addon" in loaded)) throw new Error(loaded.missing);
    const rawCtx = loaded.addon.openDevice("rxe0");
    try {
      const rawPd = rawCtx.allocPd();
      const rawCq = rawCtx.createCq(4, null, 0);
      const ctxProto = Object.getPrototypeOf(rawCtx) as Record<string, (...a: unknown[]) => unknown>;
      const pdProto = Object.getPrototypeOf(rawPd) as Record<string, (...a: unknown[]) => unknown>;
      const cqProto = Object.getPrototypeOf(rawCq) as Record<string, (...a: unknown[]) => unknown>;
      expect(code(() => ctxProto.allocPd.call(rawPd))).toBe("TypeError");
      expect(code(() => pdProto.regMr.call(rawCq, new ArrayBuffer(8), 0, 8, 0))).toBe("TypeError");
      expect(code(() => cqProto.poll.call(rawCtx, 1, new Uint32Array(14)))).toBe("TypeError");
      expect(code(() => cqProto.poll.call(42, 1, new Uint32Array(14)))).toBe("TypeError");
      expect(code(() => cqProto.destroy.call(Object.create(cqProto)))).toBe("TypeError");
      const Ctor = (rawPd as object).constructor as new (...a: unknown[]) => unknown;
      expect(code(() => new Ctor())).toBe("TypeError");
      expect(code(() => new Ctor({}))).toBe("TypeError");
      // Handles of the wrong class where an argument names a verbs object.
      expect(code(() => rawCtx.createCq(4, rawPd as never, 0))).toBe("TypeError");
      expect(code(() => rawPd.createQp({ send_cq: rawPd as never, recv_cq: rawCq, cap: {}, qp_type: 2 }))).toBe(
        "TypeError",
      );
      rawCq.destroy();
      rawPd.dealloc();
    } finally {
      rawCtx.close();
    }
  });
});

describe.skipIf(skip)("native abuse: after destroy", () => {
  it("every verb on a destroyed object is EINVAL, and a second destroy too", () => {
    const c = ctx();
    const pd = c.allocPd();
    const cq = c.createCq(4);
    const ch = c.createCompChannel();
    const mr = pd.regMr(64, v.IBV_ACCESS_LOCAL_WRITE);
    const qp = pd.createQp({
      send_cq: cq,
      recv_cq: cq,
      qp_type: v.IBV_QPT_RC,
      cap: { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
    });
    qp.destroy();
    expect(code(() => qp.postSend({ opcode: v.IBV_WR_SEND }))).toBe("EINVAL");
    expect(code(() => qp.postRecv({ wr_id: 1 }))).toBe("EINVAL");
    expect(code(() => qp.query())).toBe("EINVAL");
    expect(code(() => qp.modify({ qp_state: v.IBV_QPS_INIT }, v.IBV_QP_STATE))).toBe("EINVAL");
    expect(code(() => qp.destroy())).toBe("EINVAL");
    mr.dereg();
    expect(code(() => mr.dereg())).toBe("EINVAL");
    cq.destroy();
    expect(code(() => cq.poll())).toBe("EINVAL");
    expect(code(() => cq.reqNotify())).toBe("EINVAL");
    expect(code(() => cq.destroy())).toBe("EINVAL");
    ch.destroy();
    expect(code(() => ch.destroy())).toBe("EINVAL");
    pd.dealloc();
    expect(code(() => pd.regMr(8, 0))).toBe("EINVAL");
    expect(code(() => pd.dealloc())).toBe("EINVAL");
  });

  it("closing the device destroys what was opened on it, child first; the leftovers say so", async () => {
    const c = B().openDevice("rxe0");
    const pd = c.allocPd();
    const ch = c.createCompChannel();
    const cq = c.createCq(4, { channel: ch });
    const mr = pd.regMr(64, ALL_ACCESS);
    const qp = pd.createQp({
      send_cq: cq,
      recv_cq: cq,
      qp_type: v.IBV_QPT_RC,
      cap: { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
    });
    const waiting = ch.getCqEvent(60_000);
    const asyncWait = c.getAsyncEvent(60_000);
    c.close();
    await expect(waiting).resolves.toBeNull();
    await expect(asyncWait).resolves.toBeNull();
    for (const fn of [() => qp.query(), () => mr.dereg(), () => cq.poll(), () => pd.dealloc(), () => c.queryPort(1)]) {
      expect(code(fn)).toBe("EINVAL");
    }
    expect(mr.bytes.length).toBe(64); // the memory itself stays usable from JS
  });

  it("EBUSY comes from libibverbs and changes nothing", () => {
    const c = ctx();
    const pd = c.allocPd();
    const ch = c.createCompChannel();
    const cq = c.createCq(4, { channel: ch });
    const mr = pd.regMr(64, v.IBV_ACCESS_LOCAL_WRITE);
    const qp = pd.createQp({
      send_cq: cq,
      recv_cq: cq,
      qp_type: v.IBV_QPT_RC,
      cap: { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
    });
    expect(code(() => pd.dealloc())).toBe("EBUSY");
    expect(code(() => cq.destroy())).toBe("EBUSY");
    expect(code(() => ch.destroy())).toBe("EBUSY");
    expect(qp.query(v.IBV_QP_STATE).attr.qp_state).toBe(v.IBV_QPS_RESET);
    qp.destroy();
    mr.dereg();
    cq.destroy();
    ch.destroy();
    pd.dealloc();
  });
});

describe.skipIf(skip)("native abuse: absurd arguments", () => {
  // The classes are the simulator's for the same calls (the contract's reference; the whys are
  // compared in verbs/conformance/arg-errors.test.ts), except where marked "native only".
  it("sizes: NaN, fractions, negatives and huge values throw", () => {
    const c = ctx();
    const pd = c.allocPd();
    expect(code(() => c.createCq(NaN))).toBe("TypeError");
    expect(code(() => c.createCq(1.5))).toBe("TypeError");
    expect(code(() => c.createCq("8" as never))).toBe("TypeError");
    expect(code(() => c.createCq(-1))).toBe("EINVAL"); // rxe's answer, and the simulator's
    expect(code(() => c.createCq(2 ** 40))).toBe("EINVAL"); // above max_cqe
    expect(code(() => pd.regMr(-1, 0))).toBe("EINVAL"); // a length a C program can pass: not positive
    expect(code(() => pd.regMr(NaN, 0))).toBe("TypeError");
    expect(code(() => pd.regMr(1.5, 0))).toBe("TypeError");
    expect(code(() => pd.regMr(2 ** 60, 0))).toBe("ENOMEM"); // cannot be pinned
    expect(code(() => pd.regMr(0, 0))).toBe("EINVAL"); // rxe: length 0
    // Native only: the addon registers ArrayBuffers (Node-API has no SharedArrayBuffer); the simulator takes one.
    expect(code(() => pd.regMr(new SharedArrayBuffer(8) as never, 0))).toBe("TypeError");
    // Native only: 2^33 does not fit C's int access; the simulator's bit test takes it as 0.
    expect(code(() => pd.regMr(8, 2 ** 33))).toBe("EINVAL");
    const cq = c.createCq(4);
    expect(code(() => cq.poll(NaN))).toBe("TypeError");
    expect(code(() => cq.poll(1.5))).toBe("TypeError");
    expect(code(() => cq.poll(-1))).toBe("EINVAL");
    expect(cq.poll(2 ** 40)).toEqual([]); // as many as there are, as on the simulator
    expect(cq.poll(1_000_000)).toEqual([]);
    // Native only: nothing was read, and acknowledging more would hang destroy in C; the simulator counts it.
    expect(code(() => cq.ackEvents(1))).toBe("EINVAL");
    expect(code(() => c.queryPort(NaN))).toBe("TypeError");
    expect(code(() => c.queryPort(300))).toBe("EINVAL");
    expect(code(() => c.queryPort(2))).toBe("EINVAL");
    const cap = { max_send_wr: 2 ** 40, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    expect(code(() => pd.createQp({ send_cq: cq, recv_cq: cq, qp_type: v.IBV_QPT_RC, cap }))).toBe("EINVAL");
    expect(code(() => pd.createQp({ send_cq: cq, recv_cq: undefined as never, qp_type: v.IBV_QPT_RC, cap }))).toBe(
      "EINVAL",
    );
    expect(code(() => pd.createQp({ send_cq: cq, recv_cq: pd as never, qp_type: v.IBV_QPT_RC, cap }))).toBe(
      "TypeError",
    );
  });

  it("work requests: non-arrays, bad fields and dangerous pointers are refused before libibverbs", () => {
    const c = ctx();
    const gid = linkLocal(c);
    const pd = c.allocPd();
    const cq = c.createCq(16);
    const mr = pd.regMr(4096, ALL_ACCESS);
    const cap = { max_send_wr: 8, max_recv_wr: 8, max_send_sge: 2, max_recv_sge: 2, max_inline_data: 64 };
    const qp = pd.createQp({ send_cq: cq, recv_cq: cq, qp_type: v.IBV_QPT_RC, cap });
    connectRc(qp, qp.qp_num, gid, gid.gid);
    expect(code(() => qp.postSend("send" as never))).toBe("TypeError");
    expect(code(() => qp.postSend([{ opcode: NaN }]))).toBe("TypeError");
    expect(code(() => qp.postSend([{ opcode: v.IBV_WR_SEND, sg_list: "x" as never }]))).toBe("TypeError");
    expect(code(() => qp.postSend([{ opcode: v.IBV_WR_SEND, sg_list: [{ addr: 1, length: -1, lkey: 1 }] }]))).toBe(
      "EINVAL",
    );
    expect(code(() => qp.postSend([{ opcode: v.IBV_WR_SEND, wr_id: -1 }]))).toBe("EINVAL");
    expect(code(() => qp.postRecv([null as never]))).toBe("TypeError");
    // Inline data is read by libibverbs from the address itself: a bogus one would segfault.
    const inline = { opcode: v.IBV_WR_SEND, send_flags: v.IBV_SEND_INLINE | v.IBV_SEND_SIGNALED };
    const good = { ...inline, wr_id: 1, sg_list: [mr.sge(0, 16)] };
    const bad = { ...inline, wr_id: 2, sg_list: [{ addr: 0x10, length: 16, lkey: mr.lkey }] };
    qp.postRecv([{ wr_id: 10, sg_list: [mr.sge(2048, 64)] }]);
    let err: unknown;
    try {
      qp.postSend([good, bad]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(VerbsError);
    expect((err as VerbsError).code).toBe("EINVAL");
    expect((err as VerbsError).badWrIndex).toBe(1); // the good one before it was posted
    expect(qp.query(v.IBV_QP_STATE).attr.qp_state).toBe(v.IBV_QPS_RTS);
    // Values rxe judges itself go through: a wrong lkey is a completion error, not a throw.
    qp.postSend({
      opcode: v.IBV_WR_SEND,
      send_flags: v.IBV_SEND_SIGNALED,
      wr_id: 3,
      sg_list: [{ addr: mr.addr, length: 8, lkey: mr.lkey ^ 0xff }],
    });
  });

  it("a single WR (the packed fast path) posts the same and fails the same as a list of one", async () => {
    const c = ctx();
    const gid = linkLocal(c);
    const pd = c.allocPd();
    const cq = c.createCq(16);
    const mr = pd.regMr(4096, ALL_ACCESS);
    const cap = { max_send_wr: 8, max_recv_wr: 8, max_send_sge: 2, max_recv_sge: 2, max_inline_data: 64 };
    const qp = pd.createQp({ send_cq: cq, recv_cq: cq, qp_type: v.IBV_QPT_RC, cap });
    connectRc(qp, qp.qp_num, gid, gid.gid);
    const failure = (fn: () => unknown): string => {
      try {
        fn();
      } catch (e) {
        if (e instanceof VerbsError) return `${e.code} ${e.attribute} ${e.badWrIndex}`;
      }
      return code(fn);
    };
    const send = v.IBV_WR_SEND;
    expect(failure(() => qp.postSend({ opcode: send, wr_id: 2 ** 53 }))).toBe("EINVAL wr[0].wr_id undefined");
    expect(failure(() => qp.postSend({ opcode: 1.5 }))).toBe("TypeError");
    expect(failure(() => qp.postSend({ opcode: 2 ** 32 }))).toBe("EINVAL wr[0].opcode undefined");
    expect(failure(() => qp.postSend({ opcode: send, send_flags: -1 }))).toBe("EINVAL wr[0].send_flags undefined");
    const write = { opcode: v.IBV_WR_RDMA_WRITE, sg_list: [mr.sge(0, 8)] };
    expect(failure(() => qp.postSend({ ...write, rdma: { remote_addr: -1, rkey: 1 } }))).toBe(
      "EINVAL wr[0].rdma.remote_addr undefined",
    );
    expect(failure(() => qp.postSend({ ...write, rdma: { remote_addr: 0, rkey: NaN } }))).toBe("TypeError");
    expect(failure(() => qp.postSend({ ...write, rdma: null as never }))).toBe("TypeError");
    const outside = { addr: 0x10, length: 16, lkey: mr.lkey };
    expect(failure(() => qp.postSend({ opcode: send, send_flags: v.IBV_SEND_INLINE, sg_list: [outside] }))).toBe(
      "EINVAL wr[0].sg_list[0].addr 0",
    );
    expect(failure(() => qp.postRecv({ wr_id: -1 }))).toBe("EINVAL wr[0].wr_id undefined");
    expect(failure(() => qp.postRecv({ sg_list: [{ ...mr.sge(0, 8), lkey: 2 ** 32 }] }))).toBe(
      "EINVAL wr[0].sg_list[0].lkey undefined",
    );
    expect(failure(() => qp.postRecv({ sg_list: [{ ...mr.sge(0, 8), addr: 0.5 }] }))).toBe("TypeError");
    // More SGEs than the QP allows (and than a packed WR holds): libibverbs' own EINVAL.
    expect(
      failure(() =>
        qp.postSend({ opcode: send, sg_list: Array.from({ length: qp.cap.max_send_sge + 1 }, () => mr.sge(0, 1)) }),
      ),
    ).toMatch(/^EINVAL/);
    // And what passes is posted exactly: 53-bit wr_ids, the RDMA target, inline data.
    mr.bytes.set([1, 2, 3, 4, 5, 6, 7, 8], 0);
    qp.postRecv({ wr_id: 2 ** 53 - 1, sg_list: [mr.sge(2048, 64)] });
    qp.postSend({
      ...write,
      wr_id: 2 ** 40 + 7,
      send_flags: v.IBV_SEND_SIGNALED,
      rdma: { remote_addr: mr.addr + 1024, rkey: mr.rkey },
    });
    qp.postSend([
      { opcode: send, wr_id: 9, send_flags: v.IBV_SEND_SIGNALED | v.IBV_SEND_INLINE, sg_list: [mr.sge(0, 8)] },
    ]);
    const wcs = await cq.pollWait(3, 20_000);
    expect(new Map(wcs.map((w) => [w.wr_id, w.status]))).toEqual(
      new Map([
        [2 ** 40 + 7, v.IBV_WC_SUCCESS],
        [9, v.IBV_WC_SUCCESS],
        [2 ** 53 - 1, v.IBV_WC_SUCCESS],
      ]),
    );
    expect([...mr.bytes.subarray(1024, 1032)]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect([...mr.bytes.subarray(2048, 2056)]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("raw packed posts: words that fail a check (more SGEs than the bound array holds, NaN) take the list path, never a read past the array", () => {
    const loaded = loadAddon();
    if (!("addon" in loaded)) throw new Error(loaded.missing);
    const rawCtx = loaded.addon.openDevice("rxe0");
    try {
      const rawPd = rawCtx.allocPd();
      const rawCq = rawCtx.createCq(4, null, 0);
      const cap = { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
      const rawQp = rawPd.createQp({ send_cq: rawCq, recv_cq: rawCq, cap, qp_type: v.IBV_QPT_RC });
      // num_sge says 3 (send) and 4 (recv) but one SGE's words follow: the WR object decides
      // (here: not one, so a TypeError from the list path).
      let [postSend, postRecv] = rawQp.bindPacked(
        new Float64Array([0, 0, 0, 0, 3, 0, 0, 0, 1, 1, 1]),
        new Float64Array([0, 4, 1, 1, 1]),
      );
      expect(code(() => postSend(null as never))).toBe("TypeError");
      expect(code(() => postRecv(null as never))).toBe("TypeError");
      [postSend, postRecv] = rawQp.bindPacked(new Float64Array(8).fill(NaN), new Float64Array(2).fill(NaN));
      expect(code(() => postSend({} as never))).toBe("TypeError");
      expect(code(() => postRecv(null as never))).toBe("TypeError");
      rawQp.destroy();
      rawCq.destroy();
      rawPd.dealloc();
    } finally {
      rawCtx.close();
    }
  });

  it("raw bound verbs: bindPollOut and bindPacked check their arrays; their functions act on their own object, EINVAL once it is destroyed", () => {
    const loaded = loadAddon();
    if (!("addon" in loaded)) throw new Error(loaded.missing);
    const addon = loaded.addon;
    const rawCtx = addon.openDevice("rxe0");
    try {
      const rawPd = rawCtx.allocPd();
      const rawCq = rawCtx.createCq(4, null, 0);
      const cap = { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
      const rawQp = rawPd.createQp({ send_cq: rawCq, recv_cq: rawCq, cap, qp_type: v.IBV_QPT_RC });
      expect(code(() => rawCq.bindPollOut(new Float64Array(14) as never))).toBe("TypeError");
      expect(code(() => rawQp.bindPacked(new Float64Array(8), new Float64Array(1)))).toBe("TypeError");
      const proto = Object.getPrototypeOf(rawCq) as Record<string, (...a: unknown[]) => unknown>;
      expect(code(() => proto.bindPollOut.call(rawQp, new Uint32Array(14)))).toBe("TypeError");
      const poll = rawCq.bindPollOut(new Uint32Array(2 * addon.WC_WORDS));
      const [postSend, postRecv] = rawQp.bindPacked(new Float64Array(20), new Float64Array(14));
      expect(poll(1)).toBe(0);
      expect(poll(1_000_000)).toBe(0);
      expect(code(() => poll(NaN))).toBe("TypeError");
      expect(code(() => poll("1" as never))).toBe("TypeError");
      expect(code(() => poll(-1))).toBe("EINVAL");
      rawQp.destroy();
      expect(code(() => postRecv({}))).toBe("EINVAL");
      expect(code(() => postSend({ opcode: 0 }))).toBe("EINVAL");
      rawCq.destroy();
      expect(code(() => poll(1))).toBe("EINVAL");
      rawPd.dealloc();
    } finally {
      rawCtx.close();
    }
  });

  it("UD: a send without a live address handle, or with an object that is no AH, is EINVAL at that WR", () => {
    const c = ctx();
    const gid = linkLocal(c);
    const pd = c.allocPd();
    const cq = c.createCq(16);
    const mr = pd.regMr(4096, v.IBV_ACCESS_LOCAL_WRITE);
    const cap = { max_send_wr: 8, max_recv_wr: 8, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    const qp = pd.createQp({ send_cq: cq, recv_cq: cq, qp_type: v.IBV_QPT_UD, cap });
    qp.modify(
      { qp_state: v.IBV_QPS_INIT, pkey_index: 0, port_num: 1, qkey: 0x1111 },
      v.IBV_QP_STATE | v.IBV_QP_PKEY_INDEX | v.IBV_QP_PORT | v.IBV_QP_QKEY,
    );
    qp.modify({ qp_state: v.IBV_QPS_RTR }, v.IBV_QP_STATE);
    qp.modify({ qp_state: v.IBV_QPS_RTS, sq_psn: 0 }, v.IBV_QP_STATE | v.IBV_QP_SQ_PSN);
    const send = { opcode: v.IBV_WR_SEND, sg_list: [mr.sge(0, 8)] };
    let err: unknown;
    try {
      qp.postSend(send);
    } catch (e) {
      err = e;
    }
    expect((err as VerbsError).code).toBe("EINVAL");
    expect((err as VerbsError).attribute).toBe("wr[0].wr.ud.ah");
    expect((err as VerbsError).why).toEqual({ kind: "ud-ah", i: 0, gone: false });
    // Not an AH (a CQ, a plain object): no AH, as the simulator says.
    expect(code(() => qp.postSend({ ...send, ud: { ah: cq as never, remote_qpn: 1, remote_qkey: 1 } }))).toBe("EINVAL");
    expect(code(() => qp.postSend({ ...send, ud: { ah: {} as never, remote_qpn: 1, remote_qkey: 1 } }))).toBe("EINVAL");
    const ah = pd.createAh({
      is_global: 1,
      port_num: 1,
      grh: { dgid: gid.gid, sgid_index: gid.gid_index, hop_limit: 1 },
    });
    ah.destroy();
    expect(code(() => qp.postSend({ ...send, ud: { ah, remote_qpn: qp.qp_num, remote_qkey: 0x1111 } }))).toBe("EINVAL");
  });

  it("modify and query: wrong types are TypeErrors, out-of-range fields EINVAL naming them", () => {
    const c = ctx();
    const pd = c.allocPd();
    const cq = c.createCq(4);
    const cap = { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    const qp = pd.createQp({ send_cq: cq, recv_cq: cq, qp_type: v.IBV_QPT_RC, cap });
    expect(code(() => qp.modify({ qp_state: "INIT" as never }, v.IBV_QP_STATE))).toBe("TypeError");
    expect(code(() => qp.modify({ qp_state: v.IBV_QPS_INIT }, NaN))).toBe("TypeError");
    expect(code(() => qp.modify(null as never, v.IBV_QP_STATE))).toBe("TypeError");
    let err: unknown;
    try {
      qp.modify({ qp_state: v.IBV_QPS_INIT, port_num: 256 }, v.IBV_QP_STATE | v.IBV_QP_PORT);
    } catch (e) {
      err = e;
    }
    expect((err as VerbsError).code).toBe("EINVAL");
    expect((err as VerbsError).attribute).toBe("port_num");
    expect(code(() => qp.query(NaN))).toBe("TypeError");
    // A string that is no GID is EINVAL, as on the simulator (not-a-gid); a non-string a TypeError.
    expect(code(() => qp.modify({ ah_attr: { grh: { dgid: "not a gid" } } }, v.IBV_QP_AV))).toBe("EINVAL");
    expect(code(() => qp.modify({ ah_attr: { grh: { dgid: 5 as never } } }, v.IBV_QP_AV))).toBe("TypeError");
    // A missing mask bit is the kernel's EINVAL, with the reason the transition table gives.
    try {
      qp.modify({ qp_state: v.IBV_QPS_INIT }, v.IBV_QP_STATE);
    } catch (e) {
      err = e;
    }
    expect((err as VerbsError).code).toBe("EINVAL");
    expect((err as VerbsError).reason).toMatch(/needs .*IBV_QP_PKEY_INDEX.*: the mask has none of them/);
  });

  it("waits: bad timeouts are TypeErrors; a zero timeout resolves null at once", async () => {
    const c = ctx();
    const ch = c.createCompChannel();
    await expect(ch.getCqEvent(NaN)).rejects.toBeInstanceOf(TypeError);
    await expect(ch.getCqEvent(0)).resolves.toBeNull();
    await expect(c.getAsyncEvent(-5)).rejects.toBeInstanceOf(TypeError);
    await expect(c.getAsyncEvent(0)).resolves.toBeNull();
    ch.destroy();
  });
});
