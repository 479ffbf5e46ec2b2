/**
 * A seeded fuzz of the learner API: random methods of random objects, with junk and
 * plausible arguments, for a few seconds. Nothing may crash; every failure is a well-formed
 * error a learner can read (VerbsError with its errno, or a TypeError/RangeError naming what
 * was wrong), never an internal one; the transcript stays importable and exportable.
 */
import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../sim/index.js";
import { Rng } from "../../sim/rng.js";
import { IBV_QPT_RC, IBV_QPT_UD, IBV_WR_SEND } from "../../verbs/constants.js";
import { exportTranscript } from "./export/index.js";
import { createSession } from "./session.js";
import { importTranscript, toJsonLines } from "./transcript.js";
import { methodsOf } from "./verb-table.js";
import { refOf } from "./facade.js";
import { checkError } from "./fuzz.test-util.js";

const JUNK: unknown[] = [
  undefined,
  null,
  NaN,
  -1,
  0,
  1,
  2,
  7,
  1.5,
  2 ** 31,
  2 ** 53,
  Infinity,
  -Infinity,
  "1",
  "",
  "rxe0",
  true,
  false,
  {},
  [],
  [null],
  [{}],
  { addr: "x" },
  10n,
  -1n,
  new Uint8Array(3),
  { qp_state: 1n },
  { __proto__: { qp_state: 1 } },
  JSON.parse('{"__proto__": {"polluted": 1}}'),
  { sg_list: [{ addr: 0, length: 1e12, lkey: 0 }], opcode: IBV_WR_SEND },
  [{ wr_id: 1, sg_list: [null] }],
];

describe("learner API fuzz", () => {
  it("random calls with junk arguments give only well-formed errors, and the session keeps recording", async () => {
    // FUZZ_SEED=n npx vitest run app/session/fuzz.test.ts tries another sequence.
    const rng = new Rng(Number(process.env.FUZZ_SEED ?? 20261201));
    const pick = <T>(xs: readonly T[]): T => xs[rng.u32() % xs.length]!;
    const s = createSession({ backend: createSimBackend({ seed: 9 }), seed: 9 });
    const v = s.verbs;
    // A few real objects to aim at.
    const ctx = await v.openDevice("rxe0");
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(16);
    const mr = await pd.regMr(4096, 7);
    const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 2, max_recv_sge: 2, max_inline_data: 0 };
    const objects: object[] = [v, ctx, pd, cq, mr];
    for (const qp_type of [IBV_QPT_RC, IBV_QPT_UD])
      objects.push(await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type }));
    const plausible = () => [...JUNK, ...objects, mr.sge(0, 16), { qp_state: rng.u32() % 8 }, rng.u32() % 64];

    const deadline = Date.now() + 3000;
    let calls = 0;
    let failures = 0;
    while (Date.now() < deadline && calls < 3000) {
      const o = pick(objects);
      const type = refOf(o)?.type ?? "verbs";
      const method = pick(methodsOf(type));
      const args = Array.from({ length: rng.u32() % 4 }, () => pick(plausible()));
      const what = `#${calls} ${type}.${method}(${args.map((a) => typeof a).join(", ")})`;
      calls++;
      const fn = (o as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!;
      let result: unknown;
      try {
        // A wait with no deadline may legitimately never end: give each call a moment.
        result = await Promise.race([
          Promise.resolve().then(() => fn.apply(o, args)),
          new Promise((r) => setTimeout(() => r("pending"), 50)),
        ]);
      } catch (e) {
        failures++;
        checkError(e, what);
        continue;
      }
      // Keep what was created as a new target, a few of each at most.
      if (result && typeof result === "object" && refOf(result) && objects.length < 40) objects.push(result);
    }
    expect(calls).toBeGreaterThan(200);
    expect(failures).toBeGreaterThan(0);
    // The transcript is whole: it imports and every export works.
    const t = importTranscript(toJsonLines(s.transcript()));
    expect(t.events.length).toBeGreaterThan(0);
    for (const f of ["md", "html", "json", "c"] as const) expect(exportTranscript(t, f).length).toBeGreaterThan(0);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  }, 20_000);
});
