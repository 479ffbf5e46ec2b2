/**
 * JavaScript argument errors are data too: a TypeError (wrong type) or RangeError (out of range)
 * a learner's call meets carries its `why` (verbs/verb-failure.ts, worded in English as its
 * message and in Chinese by the renderer), keeps its class, and survives the bridge's trip
 * (errorToData, JSON, errorFromData) with the data and the verb.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { errorFromData, errorToData, type ErrorData } from "../verbs/errors.js";
import { verbFailureText, type VerbFailure } from "../verbs/verb-failure.js";
import * as c from "../verbs/constants.js";
import { createSimBackend } from "./index.js";

type ArgError = Error & { why?: VerbFailure; verb?: string };

function thrown(f: () => unknown): ArgError {
  try {
    f();
  } catch (e) {
    return e as ArgError;
  }
  throw new Error("no error");
}

const throughJson = (d: ErrorData): ErrorData => JSON.parse(JSON.stringify(d)) as ErrorData;

function rig() {
  const b = createSimBackend({ seed: 1 });
  const ctx = b.openDevice("rxe0");
  const pd = ctx.allocPd();
  const cq = ctx.createCq(16);
  const mr = pd.regMr(64, c.IBV_ACCESS_LOCAL_WRITE);
  const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const qp = pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: c.IBV_QPT_RC });
  return { b, ctx, pd, cq, mr, qp };
}

describe("argument errors as data", () => {
  it("a string where an SGE's length belongs: a TypeError naming the field and the value, as data", () => {
    const { mr, qp } = rig();
    const sge = { addr: mr.addr, length: "4" as unknown as number, lkey: mr.lkey };
    const e = thrown(() => qp.postSend({ wr_id: 1, opcode: c.IBV_WR_SEND, sg_list: [sge] }));
    expect(e).toBeInstanceOf(TypeError);
    expect(e.message).toBe('ibv_post_send: wr[0].sg_list[0].length must be an integer, got the string "4"');
    expect(e.why).toEqual({
      kind: "arg-type",
      field: "wr[0].sg_list[0].length",
      expected: "integer",
      got: { t: "string", text: "4" },
    });
    expect(e.verb).toBe("ibv_post_send");
    expect(e.message).toBe(`ibv_post_send: ${verbFailureText(e.why!)}`);
  });

  it("survives errorToData, JSON and errorFromData as a TypeError with its why and verb", () => {
    const { ctx } = rig();
    const e = thrown(() => ctx.createCq("10" as unknown as number));
    expect(e).toBeInstanceOf(TypeError);
    const data = throughJson(errorToData(e));
    expect(data).toMatchObject({ name: "TypeError", verb: "ibv_create_cq", message: e.message, why: e.why });
    const back = errorFromData(data) as ArgError;
    expect(back).toBeInstanceOf(TypeError);
    expect(back.message).toBe(e.message);
    expect(back.why).toEqual({ kind: "arg-type", field: "cqe", expected: "integer", got: { t: "string", text: "10" } });
    expect(back.verb).toBe("ibv_create_cq");
  });

  it("an SGE past the MR: a RangeError with the offset, length and MR length", () => {
    const { mr } = rig();
    const e = thrown(() => mr.sge(40, 30));
    expect(e).toBeInstanceOf(RangeError);
    expect(e.message).toBe("sge: [40, 70) is outside this MR (length 64)");
    expect(e.why).toEqual({ kind: "mr-range", offset: 40, length: 30, mrLength: 64 });
    const back = errorFromData(throughJson(errorToData(e))) as ArgError;
    expect(back).toBeInstanceOf(RangeError);
    expect(back.why).toEqual(e.why);
  });

  it("other learner-reachable type errors carry data: an unknown device, a foreign CQ, a bad node, a negative ack", () => {
    const { b, pd, cq } = rig();
    expect(thrown(() => b.setLinkState("rxe9", false)).why).toEqual({
      kind: "no-sim-device",
      name: "rxe9",
      devices: ["rxe0", "rxe1"],
    });
    const cap = { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    const foreign = thrown(() => pd.createQp({ send_cq: {} as never, recv_cq: cq, cap, qp_type: c.IBV_QPT_RC }));
    expect(foreign).toBeInstanceOf(TypeError);
    expect(foreign.why).toEqual({ kind: "foreign-object", field: "send_cq", what: "CQ" });
    expect(foreign.message).toBe("ibv_create_qp: send_cq is not a CQ of this backend");
    const ack = thrown(() => cq.ackEvents(-2));
    expect(ack).toBeInstanceOf(RangeError);
    expect(ack.why).toEqual({ kind: "arg-negative", field: "nevents", value: -2 });
    expect(thrown(() => b.sleep("5" as unknown as number)).why).toMatchObject({ field: "ms", expected: "number" });
  });
});

const ROOT = join(import.meta.dirname, "..");
/** Where a learner's call is checked: the simulator, native's TS loader, the session, the QP model. */
const DIRS = ["sim", "native", "app/session", "state-machines"];
/**
 * The plain-English TypeErrors/RangeErrors that stay: options of createSimBackend (the app's,
 * not a learner's), the wire profile (checked by setLink before), and invariants (a decoded value
 * the encoder would have refused, a machine snapshot's state).
 */
const PLAIN: [file: string, text: string][] = [
  ["sim/index.ts", "createSimBackend: seed must be a number"],
  ["sim/profile.ts", "createSimBackend: profile must be one of"],
  ["sim/wire.ts", "wire: no wire profile"],
  ["app/session/wire.ts", "encoded value nested too deeply"],
  ["state-machines/qp.ts", "not a QP model state"],
];

/** Each `new TypeError(`/`new RangeError(` in `src` with the text after it. */
const plainThrows = (src: string) => [...src.matchAll(/new (?:Type|Range)Error\(\s*["'`]([^"'`]*)/g)].map((m) => m[1]!);

describe("no argument error a learner meets is a bare English sentence", () => {
  it("every new TypeError/RangeError in sim/, native/, app/session and state-machines is argError or listed", () => {
    const bare: string[] = [];
    for (const dir of DIRS) {
      for (const f of readdirSync(join(ROOT, dir))) {
        if (!f.endsWith(".ts") || f.endsWith(".test.ts") || f.endsWith(".test-util.ts")) continue;
        const rel = `${dir}/${f}`;
        for (const text of plainThrows(readFileSync(join(ROOT, rel), "utf8"))) {
          if (!PLAIN.some(([file, start]) => rel === file && text.startsWith(start))) bare.push(`${rel}: ${text}`);
        }
      }
    }
    expect(bare).toEqual([]);
  });

  it("the scan sees a bare one (so the check can fail)", () => {
    expect(
      plainThrows("throw new TypeError(`${verb}: x must be a number`);\nthrow argError(TypeError, v, w);"),
    ).toEqual(["${verb}: x must be a number"]);
  });
});
