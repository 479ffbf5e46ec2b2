/** ibv_reg_mr at the size limit: a length rxe accepts works; one it refuses fails as rxe does, with nothing taken. */
import { describe, expect, it } from "vitest";
import { IBV_ACCESS_LOCAL_WRITE } from "../verbs/constants.js";
import { VerbsError } from "../verbs/errors.js";
import { createSimBackend } from "./index.js";

describe("ibv_reg_mr sizes", () => {
  it("registers 2 GiB, and the pool index sequence is unbroken around a refused length", () => {
    const b = createSimBackend({ seed: 1 });
    const pd = b.openDevice("rxe0").allocPd();
    const first = pd.regMr(4096, IBV_ACCESS_LOCAL_WRITE);
    const big = pd.regMr(2 ** 31, IBV_ACCESS_LOCAL_WRITE);
    expect(big.length).toBe(2 ** 31);
    expect(big.sge(2 ** 31 - 8, 8)).toMatchObject({ length: 8, lkey: big.lkey });
    big.dereg();
    const err = (() => {
      try {
        pd.regMr(2 ** 31 + 1, IBV_ACCESS_LOCAL_WRITE);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(VerbsError);
    expect(err).toMatchObject({ code: "ENOMEM", attribute: "length" });
    const next = pd.regMr(4096, IBV_ACCESS_LOCAL_WRITE);
    // Pool indices (lkey >> 8) go on one by one: the refused call took none.
    expect((next.lkey >>> 8) - (first.lkey >>> 8)).toBe(2);
  });
});
