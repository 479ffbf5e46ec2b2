/**
 * Verb failures are data: every refusal the simulator, the native pre-checks, the session and
 * the backend write carries its `why` (verbs/verb-failure.ts), worded once in English, and the
 * data survives the trips an error makes (JSON for the bridge and transcripts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { VerbsError, errorFromData, errorToData, errnos } from "../verbs/errors.js";
import { because, verbFailureText } from "../verbs/verb-failure.js";
import { createSimBackend } from "./index.js";
import * as c from "../verbs/constants.js";

const ROOT = join(import.meta.dirname, "..");
/** Where verbs are refused: the simulator, the contract's own checks, native's pre-checks, the session and backend. */
const DIRS = ["sim", "verbs", "native", "app/session", "app/backend"];
/** The two files that define the mechanism (errorFromData rebuilds an error from a recorded reason). */
const MECHANISM = new Set(["verbs/errors.ts", "verbs/verb-failure.ts"]);

/** The argument text of every `fail(` and `new VerbsError(` call in `src`, by line. */
function failCalls(src: string): { line: number; args: string }[] {
  const out: { line: number; args: string }[] = [];
  for (const m of src.matchAll(/\b(?:fail|new VerbsError)\(/g)) {
    let depth = 1;
    let j = m.index + m[0].length;
    while (j < src.length && depth > 0) {
      if (src[j] === "(") depth++;
      else if (src[j] === ")") depth--;
      j++;
    }
    out.push({ line: src.slice(0, m.index).split("\n").length, args: src.slice(m.index + m[0].length, j - 1) });
  }
  return out;
}

describe("every refusal carries its reason as data", () => {
  it("no fail() or new VerbsError() site in sim/, verbs/, native/, app/session or app/backend passes a bare reason string", () => {
    const bare: string[] = [];
    let sites = 0;
    for (const dir of DIRS) {
      for (const f of readdirSync(join(ROOT, dir))) {
        const rel = `${dir}/${f}`;
        if (!f.endsWith(".ts") || f.endsWith(".test.ts") || MECHANISM.has(rel)) continue;
        for (const call of failCalls(readFileSync(join(ROOT, rel), "utf8"))) {
          sites++;
          if (/\breason\s*:/.test(call.args)) bare.push(`${rel}:${call.line}`);
        }
      }
    }
    expect(sites).toBeGreaterThan(100);
    expect(bare).toEqual([]);
  });

  it("the scan finds a bare reason (so the check can fail)", () => {
    const src = 'fail(verb, "EINVAL", { reason: `cqe ${n}`, attribute: "cqe" });\nfail(verb, "EINVAL", because(w));';
    expect(failCalls(src).map((x) => /\breason\s*:/.test(x.args))).toEqual([true, false]);
  });

  it("the English reason is worded from the data, and both survive JSON and the rebuild", () => {
    const e = new VerbsError("ibv_create_cq", errnos.EINVAL, because({ kind: "cqe-range", cqe: 0, max: 32767 }));
    expect(e.reason).toBe("cqe must be 1..32767 (max_cqe), got 0");
    const data = JSON.parse(JSON.stringify(e)) as ReturnType<typeof errorToData>;
    expect(data.why).toEqual({ kind: "cqe-range", cqe: 0, max: 32767 });
    const back = errorFromData(data) as VerbsError;
    expect(back).toBeInstanceOf(VerbsError);
    expect(back.why).toEqual(data.why);
    expect(back.reason).toBe(e.reason);
    // A transcript from before errors carried data: the sentence only, read the same.
    const { why: _why, ...old } = data;
    expect((errorFromData(old) as VerbsError).why).toBeUndefined();
    expect((errorFromData(old) as VerbsError).reason).toBe(e.reason);
  });

  it("the simulator's refusals a learner meets in the early lessons carry their values", () => {
    const b = createSimBackend({ seed: 1 });
    const ctx = b.openDevice("rxe0");
    const pd = ctx.allocPd();
    const refusal = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as VerbsError;
      }
      throw new Error("no error");
    };
    const mr = refusal(() => pd.regMr(64, c.IBV_ACCESS_REMOTE_WRITE));
    expect(mr.why).toEqual({ kind: "remote-needs-local-write", access: c.IBV_ACCESS_REMOTE_WRITE });
    expect(mr.reason).toBe(verbFailureText(mr.why!));
    const cq = ctx.createCq(16);
    const cap = { max_send_wr: 2000000, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    const qp = refusal(() => pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: c.IBV_QPT_RC }));
    expect(qp).toMatchObject({ code: "EINVAL", attribute: "cap.max_send_wr" });
    expect(qp.why).toMatchObject({ kind: "cap-limit", field: "max_send_wr", value: 2000000, max: 1048576 });
  });
});
