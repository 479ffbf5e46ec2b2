/**
 * sim/RXE-FACTS.md §2.2: every legal transition of every QP type succeeds with exactly its
 * required attributes, with each optional attribute added, and with all of them.
 */
import { beforeAll, expect, it } from "vitest";
import type { Cq, Pd } from "../backend.js";
import {
  IBV_ACCESS_REMOTE_ATOMIC,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPS_SQD,
  IBV_QPS_ERR,
  IBV_QPS_INIT,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_QKEY,
} from "../constants.js";
import type { GidEntry } from "../types.js";
import { QP_TYPES, expectState, expectVerbsError, fileScope, findGid, scope, stateName, suite } from "./harness.js";
import { ALL_BITS, LEGAL, STATES, attrFor, bitNames, newQp, roceRefused, rowFor } from "./modify-table.js";

let pd: Pd;
let cq: Cq;
let gid: GidEntry;

suite("modify_qp: every legal transition succeeds (§2.2)", () => {
  beforeAll(() => {
    const fs = fileScope();
    const ctx = fs.open("rxe0");
    pd = fs.pd(ctx);
    cq = fs.cq(ctx, 256);
    gid = findGid(ctx, "ipv4");
  });

  for (const { name, type } of QP_TYPES) {
    for (const row of LEGAL) {
      const [req, opt] = rowFor(row, type);
      const okOpt = opt & ~roceRefused(type, row.from, row.to);
      const arrow = `${name} ${stateName(row.from)}→${stateName(row.to)}`;
      const masks: [string, number][] = [[`required only (${bitNames(req)})`, req]];
      for (const bit of ALL_BITS.filter((b) => okOpt & b)) masks.push([`+ optional ${bitNames(bit)}`, req | bit]);
      if (okOpt && ALL_BITS.filter((b) => okOpt & b).length > 1) masks.push([`+ all optional`, req | okOpt]);

      it.each(masks)(`${arrow} with %s succeeds and the QP is ${stateName(row.to)}`, (_n, bits) => {
        const s = scope();
        const qp = newQp(s, pd, cq, gid, type, row.from);
        const mask = bits | 1; // IBV_QP_STATE
        qp.modify(attrFor(mask, qp, gid, row.from, row.to), mask);
        expectState(qp, row.to);
      });
    }
  }
});

suite("modify_qp without IBV_QP_STATE uses the current→current row", () => {
  beforeAll(() => {
    const fs = fileScope();
    const ctx = fs.open("rxe0");
    pd = fs.pd(ctx);
    cq = fs.cq(ctx, 256);
    gid = findGid(ctx, "ipv4");
  });

  for (const { name, type } of QP_TYPES) {
    for (const state of STATES) {
      if (state === IBV_QPS_RTR) {
        it(`${name}: mask 0 in RTR fails with EINVAL (there is no RTR→RTR) and the QP stays RTR`, () => {
          const qp = newQp(scope(), pd, cq, gid, type, state);
          expectVerbsError(() => qp.modify({}, 0), "EINVAL");
          expectState(qp, IBV_QPS_RTR);
        });
      } else {
        it(`${name}: mask 0 in ${stateName(state)} succeeds and changes nothing`, () => {
          const qp = newQp(scope(), pd, cq, gid, type, state);
          const before = qp.query().attr;
          qp.modify({}, 0);
          expect(qp.query().attr).toEqual(before);
        });
      }
    }
  }

  it("RC in RTS: ACCESS_FLAGS and MIN_RNR_TIMER are accepted without IBV_QP_STATE and take effect", () => {
    const qp = newQp(scope(), pd, cq, gid, QP_TYPES[0].type, IBV_QPS_RTS);
    qp.modify(
      { qp_access_flags: IBV_ACCESS_REMOTE_ATOMIC, min_rnr_timer: 20 },
      IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER,
    );
    const a = qp.query().attr;
    expect({ state: a.qp_state, access: a.qp_access_flags, rnr: a.min_rnr_timer }).toEqual({
      state: IBV_QPS_RTS,
      access: IBV_ACCESS_REMOTE_ATOMIC,
      rnr: 20,
    });
  });

  it("UD in RTS: QKEY is accepted without IBV_QP_STATE and takes effect", () => {
    const qp = newQp(scope(), pd, cq, gid, QP_TYPES[2].type, IBV_QPS_RTS);
    qp.modify({ qkey: 0x4242 }, IBV_QP_QKEY);
    expect(qp.query().attr.qkey).toBe(0x4242);
    expectState(qp, IBV_QPS_RTS);
  });

  it("a full walk RESET→INIT→RTR→RTS→SQD→RTS→ERR→RESET works for every type", () => {
    for (const { type } of QP_TYPES) {
      const s = scope();
      const qp = newQp(s, pd, cq, gid, type, IBV_QPS_SQD);
      for (const to of [IBV_QPS_RTS, IBV_QPS_ERR, IBV_QPS_RESET, IBV_QPS_INIT]) {
        const mask = to === IBV_QPS_INIT ? rowFor(LEGAL[1], type)[0] | 1 : 1;
        qp.modify(attrFor(mask, qp, gid, qp.query().attr.qp_state, to), mask);
        expectState(qp, to);
      }
    }
  });
});
