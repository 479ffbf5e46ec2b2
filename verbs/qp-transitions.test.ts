import { describe, expect, it } from "vitest";
import {
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_RC,
  IBV_QPT_UD,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_AV,
  IBV_QP_CUR_STATE,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_PATH_MTU,
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_QKEY,
  IBV_QP_RATE_LIMIT,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
} from "./constants.js";
import { checkModifyMask } from "./qp-transitions.js";

const INIT_MASK = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;

describe("the QP transition table", () => {
  it("accepts RESET → INIT with exactly the required attributes", () => {
    expect(checkModifyMask(IBV_QPT_RC, IBV_QPS_RESET, { qp_state: IBV_QPS_INIT }, INIT_MASK)).toMatchObject({
      ok: true,
      to: IBV_QPS_INIT,
    });
  });

  it("names every missing attribute on INIT → RTR", () => {
    const r = checkModifyMask(
      IBV_QPT_RC,
      IBV_QPS_INIT,
      { qp_state: IBV_QPS_RTR },
      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
    );
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.missing).toEqual(["IBV_QP_RQ_PSN", "IBV_QP_DEST_QPN"]);
      expect(r.reason).toContain("missing: IBV_QP_RQ_PSN, IBV_QP_DEST_QPN");
    }
  });

  it("refuses a bit the transition does not allow", () => {
    const r = checkModifyMask(IBV_QPT_RC, IBV_QPS_INIT, { qp_state: IBV_QPS_RTR }, IBV_QP_STATE | IBV_QP_SQ_PSN);
    expect(r.ok || r.notAllowed).toContain("IBV_QP_SQ_PSN");
  });

  it("refuses RESET → RTS and RTR → RTR (mask 0 in RTR)", () => {
    expect(checkModifyMask(IBV_QPT_RC, IBV_QPS_RESET, { qp_state: IBV_QPS_RTS }, IBV_QP_STATE).ok).toBe(false);
    expect(checkModifyMask(IBV_QPT_RC, IBV_QPS_RTR, {}, 0).ok).toBe(false);
  });

  it("uses the UD row: QKEY instead of ACCESS_FLAGS", () => {
    const ud = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
    expect(checkModifyMask(IBV_QPT_UD, IBV_QPS_RESET, { qp_state: IBV_QPS_INIT }, ud).ok).toBe(true);
    expect(checkModifyMask(IBV_QPT_UD, IBV_QPS_RESET, { qp_state: IBV_QPS_INIT }, INIT_MASK).ok).toBe(false);
  });

  it("answers EOPNOTSUPP for IBV_QP_RATE_LIMIT, as libibverbs does", () => {
    expect(checkModifyMask(IBV_QPT_RC, IBV_QPS_RTS, {}, IBV_QP_RATE_LIMIT)).toMatchObject({
      ok: false,
      errno: "EOPNOTSUPP",
    });
  });

  it("refuses a cur_qp_state that is not the real state", () => {
    const r = checkModifyMask(IBV_QPT_RC, IBV_QPS_RTS, { cur_qp_state: IBV_QPS_RTR }, IBV_QP_CUR_STATE);
    expect(r.ok).toBe(false);
  });
});
