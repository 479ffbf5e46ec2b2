import { describe, expect, it } from "vitest";
import { IBV_QPS_INIT, IBV_QPS_RESET, IBV_QPS_RTR } from "../../verbs/constants.js";
import { errnos, VerbsError } from "../../verbs/errors.js";
import { checkPrediction } from "./prediction-check.js";
import type { Prediction } from "./transcript.js";

const predicted = (outcome: string, state: number, reason?: string): Prediction => ({
  qp: 5,
  outcome,
  state,
  ...(reason && { reason }),
  warnings: [],
});

describe("checkPrediction", () => {
  it("agrees when a modify lands in the predicted state", () => {
    const c = checkPrediction(predicted("ok", IBV_QPS_INIT), {
      method: "modify",
      from: IBV_QPS_RESET,
      after: IBV_QPS_INIT,
      failed: false,
    });
    expect(c).toEqual({ agree: true, expected: "RESET → INIT", actual: "RESET → INIT" });
  });

  it("agrees when the call fails with the predicted errno, and names the backend's reason", () => {
    const err = new VerbsError("ibv_modify_qp", errnos.EINVAL, { reason: "RTR needs IBV_QP_DEST_QPN" });
    const c = checkPrediction(predicted("EINVAL", IBV_QPS_INIT, "needs IBV_QP_DEST_QPN"), {
      method: "modify",
      from: IBV_QPS_INIT,
      after: IBV_QPS_INIT,
      failed: true,
      error: err,
    });
    expect(c?.agree).toBe(true);
    expect(c?.actual).toBe("EINVAL: RTR needs IBV_QP_DEST_QPN");
    expect(c?.note).toBeUndefined();
  });

  it("disagrees, with a note, when the backend accepts what the model refused", () => {
    const c = checkPrediction(predicted("EINVAL", IBV_QPS_INIT), {
      method: "modify",
      from: IBV_QPS_INIT,
      after: IBV_QPS_RTR,
      failed: false,
    });
    expect(c?.agree).toBe(false);
    expect(c?.actual).toBe("INIT → RTR");
    expect(c?.note).toMatch(/expected this call to fail/);
  });

  it("judges a post only by whether it was accepted", () => {
    const ok = checkPrediction(predicted("ok", IBV_QPS_RTR), {
      method: "postRecv",
      from: IBV_QPS_RTR,
      after: IBV_QPS_RTR,
      failed: false,
    });
    expect(ok).toEqual({ agree: true, expected: "the call succeeds", actual: "the call succeeded" });
    const refused = checkPrediction(predicted("ok", IBV_QPS_RTR), {
      method: "postSend",
      from: IBV_QPS_RTR,
      after: IBV_QPS_RTR,
      failed: true,
      error: new VerbsError("ibv_post_send", errnos.EINVAL),
    });
    expect(refused?.agree).toBe(false);
    expect(refused?.actual).toBe("EINVAL");
    expect(refused?.note).toMatch(/expected this call to succeed/);
  });

  it("does not judge a call refused for its JavaScript arguments: it never reached the verb", () => {
    for (const error of [new TypeError("wr must be an object"), new RangeError("[0, 99) is outside this MR")])
      for (const p of [predicted("ok", IBV_QPS_RTR), predicted("EINVAL", IBV_QPS_RTR)])
        expect(
          checkPrediction(p, { method: "postSend", from: IBV_QPS_RTR, after: IBV_QPS_RTR, failed: true, error }),
        ).toBe(undefined);
  });
});
