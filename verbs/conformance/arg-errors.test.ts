/**
 * Argument errors are the same data on every backend: the same bad call gives the same error
 * class, `verb` and `why` (verbs/verb-failure.ts) on the simulator and on the native addon
 * (whose TypeErrors carry their data to native/index.ts, which makes them the contract's
 * argError). Where the contract's answer to a value a C program could pass is a VerbsError
 * (regMr(-1): EINVAL; cqe 0: EINVAL; 2^53 bytes: ENOMEM), it is that VerbsError, with the same
 * why, on both. The simulator is the reference for these rules (sim/arg-errors.test.ts).
 */
import { expect, it } from "vitest";
import type { Context, Cq, Pd, Qp } from "../backend.js";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_QPS_INIT,
  IBV_QPT_RC,
  IBV_QPT_UD,
  IBV_QP_STATE,
  IBV_WR_SEND,
} from "../constants.js";
import { VerbsError, type ErrnoName } from "../errors.js";
import type { QpInitAttr } from "../types.js";
import { verbFailureText, type VerbFailure } from "../verb-failure.js";
import { B, scope, suite, toInit, toRtr, toRts } from "./harness.js";

const CAP = { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
const LW = IBV_ACCESS_LOCAL_WRITE;

interface Rig {
  ctx: Context;
  pd: Pd;
  cq: Cq;
  qp: Qp;
  /** An SGE of a registered MR with `length` replaced. */
  sge(length: unknown): { addr: number; length: number; lkey: number };
}

function rig(): Rig {
  const s = scope();
  const ctx = s.open("rxe0");
  const pd = s.pd(ctx);
  const cq = s.cq(ctx, 16);
  const mr = s.mr(pd, 64, LW);
  const qp = s.qp(pd, { send_cq: cq, qp_type: IBV_QPT_RC });
  return { ctx, pd, cq, qp, sge: (length) => ({ addr: mr.addr, length: length as number, lkey: mr.lkey }) };
}

type Expected =
  | { cls: "TypeError" | "RangeError"; verb: string; why: VerbFailure }
  | { cls: "VerbsError"; code: ErrnoName; verb: string; why: VerbFailure };

interface Case {
  call: string;
  run(r: Rig): unknown;
  expected: Expected;
}

const type = (verb: string, why: VerbFailure): Expected => ({ cls: "TypeError", verb, why });
const argType = (verb: string, field: string, expected: string, got: unknown): Expected =>
  type(verb, { kind: "arg-type", field, expected, got } as VerbFailure);
const num = (text: string) => ({ t: "number", text });
const str = (text: string) => ({ t: "string", text });
const verbs = (verb: string, code: ErrnoName, why: VerbFailure): Expected => ({ cls: "VerbsError", code, verb, why });

const CASES: Case[] = [
  // A string where an SGE's length belongs
  {
    call: "postSend with sg_list[0].length '4'",
    run: (r) => r.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [r.sge("4")] }),
    expected: argType("ibv_post_send", "wr[0].sg_list[0].length", "integer", str("4")),
  },
  {
    call: "postRecv with sg_list[0].length '4'",
    run: (r) => r.qp.postRecv({ wr_id: 1, sg_list: [r.sge("4")] }),
    expected: argType("ibv_post_recv", "wr[0].sg_list[0].length", "integer", str("4")),
  },
  {
    call: "postSend with opcode 'SEND'",
    run: (r) => r.qp.postSend({ wr_id: 1, opcode: "SEND" as unknown as number, sg_list: [r.sge(4)] }),
    expected: argType("ibv_post_send", "wr[0].opcode", "integer", str("SEND")),
  },
  {
    call: "postSend(null)",
    run: (r) => r.qp.postSend(null as never),
    expected: argType("ibv_post_send", "wr[0]", "object", { t: "null" }),
  },
  // poll's num_entries
  {
    call: "poll(1.5)",
    run: (r) => r.cq.poll(1.5),
    expected: argType("ibv_poll_cq", "num_entries", "integer", num("1.5")),
  },
  {
    call: "poll(NaN)",
    run: (r) => r.cq.poll(NaN),
    expected: argType("ibv_poll_cq", "num_entries", "integer", num("NaN")),
  },
  {
    call: "poll(-1)",
    run: (r) => r.cq.poll(-1),
    expected: verbs("ibv_poll_cq", "EINVAL", { kind: "negative-num-entries", n: -1 }),
  },
  // regMr sizes
  {
    call: "regMr(NaN)",
    run: (r) => r.pd.regMr(NaN, LW),
    expected: argType("ibv_reg_mr", "length", "integer", num("NaN")),
  },
  {
    call: "regMr(1.5)",
    run: (r) => r.pd.regMr(1.5, LW),
    expected: argType("ibv_reg_mr", "length", "integer", num("1.5")),
  },
  {
    call: "regMr(-1)",
    run: (r) => r.pd.regMr(-1, LW),
    expected: verbs("ibv_reg_mr", "EINVAL", { kind: "length-not-positive", length: -1 }),
  },
  {
    call: "regMr(-1, 0)",
    run: (r) => r.pd.regMr(-1, 0),
    expected: verbs("ibv_reg_mr", "EINVAL", { kind: "length-not-positive", length: -1 }),
  },
  {
    call: "regMr(0)",
    run: (r) => r.pd.regMr(0, LW),
    expected: verbs("ibv_reg_mr", "EINVAL", { kind: "length-not-positive", length: 0 }),
  },
  {
    call: "regMr(2^53)",
    run: (r) => r.pd.regMr(2 ** 53, LW),
    expected: verbs("ibv_reg_mr", "ENOMEM", { kind: "cannot-pin", length: 2 ** 53, allocate: false }),
  },
  {
    call: "regMr(1e12)",
    run: (r) => r.pd.regMr(1e12, LW),
    expected: verbs("ibv_reg_mr", "ENOMEM", { kind: "cannot-pin", length: 1e12, allocate: false }),
  },
  {
    call: "regMr(64, 'x')",
    run: (r) => r.pd.regMr(64, "x" as unknown as number),
    expected: argType("ibv_reg_mr", "access", "integer", str("x")),
  },
  {
    call: "regMr('abc')",
    run: (r) => r.pd.regMr("abc" as unknown as number, LW),
    expected: argType("ibv_reg_mr", "memory", "memory", str("abc")),
  },
  // createCq sizes
  {
    call: "createCq(NaN)",
    run: (r) => r.ctx.createCq(NaN),
    expected: argType("ibv_create_cq", "cqe", "integer", num("NaN")),
  },
  {
    call: "createCq(1.5)",
    run: (r) => r.ctx.createCq(1.5),
    expected: argType("ibv_create_cq", "cqe", "integer", num("1.5")),
  },
  {
    call: "createCq('10')",
    run: (r) => r.ctx.createCq("10" as unknown as number),
    expected: argType("ibv_create_cq", "cqe", "integer", str("10")),
  },
  {
    call: "createCq(-1)",
    run: (r) => r.ctx.createCq(-1),
    expected: verbs("ibv_create_cq", "EINVAL", { kind: "cqe-range", cqe: -1, max: 32767 }),
  },
  {
    call: "createCq(0)",
    run: (r) => r.ctx.createCq(0),
    expected: verbs("ibv_create_cq", "EINVAL", { kind: "cqe-range", cqe: 0, max: 32767 }),
  },
  {
    call: "createCq(1e12)",
    run: (r) => r.ctx.createCq(1e12),
    expected: verbs("ibv_create_cq", "EINVAL", { kind: "cqe-range", cqe: 1e12, max: 32767 }),
  },
  {
    call: "createCq(4, { comp_vector: 1.5 })",
    run: (r) => r.ctx.createCq(4, { comp_vector: 1.5 }),
    expected: argType("ibv_create_cq", "comp_vector", "integer", num("1.5")),
  },
  // modify's attr
  {
    call: "modify(null, IBV_QP_STATE)",
    run: (r) => r.qp.modify(null as never, IBV_QP_STATE),
    expected: argType("ibv_modify_qp", "attr", "object", { t: "null" }),
  },
  {
    call: "modify(5, IBV_QP_STATE)",
    run: (r) => r.qp.modify(5 as never, IBV_QP_STATE),
    expected: argType("ibv_modify_qp", "attr", "object", num("5")),
  },
  {
    call: "modify('x', IBV_QP_STATE)",
    run: (r) => r.qp.modify("x" as never, IBV_QP_STATE),
    expected: argType("ibv_modify_qp", "attr", "object", str("x")),
  },
  {
    call: "modify({ qp_state: 'INIT' }, IBV_QP_STATE)",
    run: (r) => r.qp.modify({ qp_state: "INIT" as unknown as number }, IBV_QP_STATE),
    expected: argType("ibv_modify_qp", "attr.qp_state", "integer", str("INIT")),
  },
  {
    call: "modify({ qp_state: INIT }, '1')",
    run: (r) => r.qp.modify({ qp_state: IBV_QPS_INIT }, "1" as unknown as number),
    expected: argType("ibv_modify_qp", "attr_mask", "integer", str("1")),
  },
  // Objects of the wrong kind, or not of this backend
  {
    call: "createQp with a PD for send_cq",
    run: (r) => r.pd.createQp({ send_cq: r.pd as unknown as Cq, recv_cq: r.cq, qp_type: IBV_QPT_RC, cap: CAP }),
    expected: type("ibv_create_qp", { kind: "foreign-object", field: "send_cq", what: "CQ" }),
  },
  {
    call: "createQp with a plain object for recv_cq",
    run: (r) => r.pd.createQp({ send_cq: r.cq, recv_cq: {} as Cq, qp_type: IBV_QPT_RC, cap: CAP }),
    expected: type("ibv_create_qp", { kind: "foreign-object", field: "recv_cq", what: "CQ" }),
  },
  {
    call: "createCq with a CQ for its channel",
    run: (r) => r.ctx.createCq(4, { channel: r.cq as never }),
    expected: type("ibv_create_cq", { kind: "foreign-object", field: "channel", what: "completion channel" }),
  },
  {
    call: "createAh with a dgid that is no GID",
    run: (r) => r.pd.createAh({ is_global: 1, port_num: 1, grh: { dgid: "not a gid", sgid_index: 0 } }),
    expected: verbs("ibv_create_ah", "EINVAL", { kind: "not-a-gid", text: "not a gid" }),
  },
  {
    call: "createQp(null)",
    run: (r) => r.pd.createQp(null as unknown as QpInitAttr),
    expected: argType("ibv_create_qp", "init_attr", "object", { t: "null" }),
  },
  {
    call: "createQp with cap.max_send_wr 1.5",
    run: (r) => r.pd.createQp({ send_cq: r.cq, recv_cq: r.cq, qp_type: IBV_QPT_RC, cap: { ...CAP, max_send_wr: 1.5 } }),
    expected: argType("ibv_create_qp", "cap.max_send_wr", "integer", num("1.5")),
  },
  // Other arguments
  {
    call: "openDevice(42)",
    run: () => B().openDevice(42 as unknown as string),
    expected: argType("ibv_open_device", "name", "string", num("42")),
  },
  {
    call: "queryPort('1')",
    run: (r) => r.ctx.queryPort("1" as unknown as number),
    expected: argType("ibv_query_port", "port_num", "integer", str("1")),
  },
  {
    call: "ackEvents(1.5)",
    run: (r) => r.cq.ackEvents(1.5),
    expected: argType("ibv_ack_cq_events", "nevents", "integer", num("1.5")),
  },
  {
    call: "ackEvents(-2)",
    run: (r) => r.cq.ackEvents(-2),
    expected: {
      cls: "RangeError",
      verb: "ibv_ack_cq_events",
      why: { kind: "arg-negative", field: "nevents", value: -2 },
    },
  },
];

/** What fn threw, failing on success. */
function thrown(fn: () => unknown): Error & { why?: unknown; verb?: unknown; code?: unknown; reason?: unknown } {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected the call to throw");
}

const CLASSES = { TypeError, RangeError, VerbsError } as const;

suite("Argument errors: the same class, verb and why on every backend", () => {
  it.each(CASES)("$call", ({ run, expected }) => {
    const e = thrown(() => run(rig()));
    expect(e, String(e)).toBeInstanceOf(CLASSES[expected.cls]);
    expect(e.why).toEqual(expected.why);
    expect(e.verb).toBe(expected.verb);
    if (expected.cls === "VerbsError") {
      expect(e.code).toBe(expected.code);
      expect(e.reason).toBe(verbFailureText(expected.why));
    } else {
      expect(e.message).toBe(`${expected.verb}: ${verbFailureText(expected.why)}`);
    }
  });

  it("a UD send whose ud.ah is no AH of this backend (none, a CQ, a plain object) is EINVAL at that WR", () => {
    const s = scope();
    const ctx = s.open("rxe0");
    const pd = s.pd(ctx);
    const cq = s.cq(ctx, 16);
    const mr = s.mr(pd, 64, LW);
    const qp = s.qp(pd, { send_cq: cq, qp_type: IBV_QPT_UD });
    toInit(qp);
    toRtr(qp, { dest_qp_num: 0, rq_psn: 0, dgid: "::", sgid_index: 0 });
    toRts(qp, { sq_psn: 0 });
    const why: VerbFailure = { kind: "ud-ah", i: 0, gone: false };
    for (const ah of [undefined, cq, {}]) {
      const ud = { ah: ah as never, remote_qpn: 1, remote_qkey: 1 };
      const e = thrown(() => qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [mr.sge(0, 8)], ud }));
      expect(e, String(e)).toBeInstanceOf(VerbsError);
      expect([e.code, e.verb, e.why, (e as VerbsError).attribute, (e as VerbsError).badWrIndex]).toEqual([
        "EINVAL",
        "ibv_post_send",
        why,
        "wr[0].wr.ud.ah",
        0,
      ]);
      expect(e.reason).toBe(verbFailureText(why));
    }
  });
});
