/**
 * sim/RXE-FACTS.md §2.1–2.2: illegal transitions, missing required bits, bits a transition does not
 * accept, and the value checks — each fails with its errno and leaves the QP where it was.
 */
import { beforeAll, expect, it } from "vitest";
import type { Cq, Pd, Qp } from "../backend.js";
import {
  IBV_QPS_ERR,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPS_SQD,
  IBV_QPS_SQE,
  IBV_QPT_RC,
  IBV_QPT_UC,
  IBV_QP_AV,
  IBV_QP_CUR_STATE,
  IBV_QP_RATE_LIMIT,
  IBV_QP_STATE,
} from "../constants.js";
import { VerbsError } from "../errors.js";
import type { GidEntry, QpAttrInput } from "../types.js";
import {
  QP_TYPES,
  expectState,
  expectVerbsError,
  fileScope,
  findGid,
  scope,
  stateName,
  stateOf,
  suite,
} from "./harness.js";
import { ALL_BITS, IBV_QP_ALT_PATH, LEGAL, STATES, attrFor, bitNames, legal, newQp, rowFor } from "./modify-table.js";

let pd: Pd;
let cq: Cq;
let gid: GidEntry;

function setup() {
  beforeAll(() => {
    const fs = fileScope();
    const ctx = fs.open("rxe0");
    pd = fs.pd(ctx);
    cq = fs.cq(ctx, 256);
    gid = findGid(ctx, "ipv4");
  });
}

/** What one modify attempt did: "ok" or the errno name; and the state afterwards. */
function attempt(qp: Qp, attr: QpAttrInput, mask: number): string {
  try {
    qp.modify(attr, mask);
    return "ok";
  } catch (e) {
    if (e instanceof VerbsError) return e.code;
    throw e;
  }
}

suite("modify_qp: illegal transitions give EINVAL and change nothing (§2.2 matrix)", () => {
  setup();
  for (const { name, type } of QP_TYPES) {
    for (const from of STATES) {
      const targets = [...STATES, IBV_QPS_SQE].filter((to) => !legal(from, to));
      const list = targets.map((t) => stateName(t)).join(", ");
      it(`${name} in ${stateName(from)}: → ${list} each fail with EINVAL and the QP stays ${stateName(from)}`, () => {
        const s = scope();
        const qp = newQp(s, pd, cq, gid, type, from);
        const bad: string[] = [];
        for (const to of targets) {
          const got = attempt(qp, { qp_state: to }, IBV_QP_STATE);
          const now = stateOf(qp);
          if (got !== "EINVAL" || now !== from) bad.push(`→${stateName(to)}: ${got}, state ${stateName(now)}`);
        }
        expect(bad).toEqual([]);
      });
    }

    it(`${name}: qp_state 7 and 8 (beyond ERR) fail with EINVAL`, () => {
      const qp = newQp(scope(), pd, cq, gid, type, IBV_QPS_INIT);
      expect([7, 8].map((st) => attempt(qp, { qp_state: st }, IBV_QP_STATE))).toEqual(["EINVAL", "EINVAL"]);
      expectState(qp, IBV_QPS_INIT);
    });

    it(`${name}: qp_state travels to the kernel in 8 bits (0x100 arrives as RESET: INIT → RESET succeeds)`, () => {
      const qp = newQp(scope(), pd, cq, gid, type, IBV_QPS_INIT);
      qp.modify({ qp_state: 0x100 }, IBV_QP_STATE);
      expectState(qp, IBV_QPS_RESET);
    });
  }
});

suite("modify_qp: masks checked against the table (§2.2)", () => {
  setup();
  for (const { name, type } of QP_TYPES) {
    for (const row of LEGAL) {
      const [req, opt] = rowFor(row, type);
      const arrow = `${stateName(row.from)}→${stateName(row.to)}`;
      // Bits the transition does not accept: everything not required or optional, plus
      // ALT_PATH (and AV on UC SQD→SQD), which RoCE refuses wherever the table lists them.
      let notAllowed = ALL_BITS.filter((b) => b !== IBV_QP_STATE && !((req | opt) & b));
      notAllowed = [...new Set([...notAllowed, IBV_QP_ALT_PATH])];
      if (type === IBV_QPT_UC && row.from === IBV_QPS_SQD && row.to === IBV_QPS_SQD) notAllowed.push(IBV_QP_AV);
      const missing = ALL_BITS.filter((b) => req & b);
      const title =
        `${name} ${arrow}: ` +
        (missing.length ? `dropping any required bit (${bitNames(req)}) or ` : "") +
        `adding any of ${notAllowed.length} other bits gives EINVAL, QP stays ${stateName(row.from)}`;

      it(title, () => {
        const s = scope();
        let qp = newQp(s, pd, cq, gid, type, row.from);
        const bad: string[] = [];
        const cases: [string, number][] = [
          ...missing.map((b): [string, number] => [`without ${bitNames(b)}`, (req & ~b) | IBV_QP_STATE]),
          ...notAllowed.map((b): [string, number] => [`with ${bitNames(b)}`, req | b | IBV_QP_STATE]),
        ];
        for (const [label, mask] of cases) {
          const got = attempt(qp, attrFor(mask, qp, gid, row.from, row.to), mask);
          const now = stateOf(qp);
          if (got !== "EINVAL" || now !== row.from) {
            bad.push(`${label}: ${got}, state ${stateName(now)}`);
            qp = newQp(s, pd, cq, gid, type, row.from); // start the next case clean
          }
        }
        expect(bad).toEqual([]);
      });
    }

    it(`${name}: IBV_QP_RATE_LIMIT gives EOPNOTSUPP in every state, QP unchanged`, () => {
      const s = scope();
      const bad: string[] = [];
      for (const st of STATES) {
        const qp = newQp(s, pd, cq, gid, type, st);
        const got = attempt(qp, { qp_state: st, rate_limit: 100 }, IBV_QP_STATE | IBV_QP_RATE_LIMIT);
        if (got !== "EOPNOTSUPP" || stateOf(qp) !== st) bad.push(`${stateName(st)}: ${got}`);
      }
      expect(bad).toEqual([]);
    });
  }
});

suite("modify_qp: IBV_QP_CUR_STATE (§2.2)", () => {
  setup();
  it.each([
    ["RESET", IBV_QPS_RESET, IBV_QPS_RESET],
    ["INIT", IBV_QPS_INIT, IBV_QPS_INIT],
    ["ERR", IBV_QPS_ERR, IBV_QPS_ERR],
  ])("is refused in %s (only RTR, RTS and SQD accept it), even when true", (_n, st, to) => {
    const qp = newQp(scope(), pd, cq, gid, IBV_QPT_RC, st);
    expectVerbsError(() => qp.modify({ qp_state: to, cur_qp_state: st }, IBV_QP_STATE | IBV_QP_CUR_STATE), "EINVAL");
    expectState(qp, st);
  });

  it("a cur_qp_state that is not the real state (RTR while in RTS) gives EINVAL", () => {
    const qp = newQp(scope(), pd, cq, gid, IBV_QPT_RC, IBV_QPS_RTS);
    expectVerbsError(
      () => qp.modify({ qp_state: IBV_QPS_RTS, cur_qp_state: IBV_QPS_RTR }, IBV_QP_STATE | IBV_QP_CUR_STATE),
      "EINVAL",
    );
    expectState(qp, IBV_QPS_RTS);
  });

  it("SQD→SQD does not accept it", () => {
    const qp = newQp(scope(), pd, cq, gid, IBV_QPT_RC, IBV_QPS_SQD);
    expectVerbsError(
      () => qp.modify({ qp_state: IBV_QPS_SQD, cur_qp_state: IBV_QPS_SQD }, IBV_QP_STATE | IBV_QP_CUR_STATE),
      "EINVAL",
    );
    expectState(qp, IBV_QPS_SQD);
  });

  it("the true state is accepted in RTR→RTS, RTS→RTS and SQD→RTS", () => {
    const s = scope();
    for (const from of [IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD]) {
      const qp = newQp(s, pd, cq, gid, IBV_QPT_RC, from);
      const mask = rowFor(legal(from, IBV_QPS_RTS)!, IBV_QPT_RC)[0] | IBV_QP_STATE | IBV_QP_CUR_STATE;
      qp.modify(attrFor(mask, qp, gid, from, IBV_QPS_RTS), mask);
      expectState(qp, IBV_QPS_RTS);
    }
  });
});
