import { describe, expect, it } from "vitest";
import { IBV_QPS_INIT, IBV_QPS_RESET, IBV_QPS_RTR, IBV_QPS_RTS } from "../../verbs/constants.js";
import { errnos, VerbsError } from "../../verbs/errors.js";
import { because, verbFailureText } from "../../verbs/verb-failure.js";
import { checkNoteText, checkPrediction, outcomeText, type Outcome } from "./prediction-check.js";
import type { CheckOutcome, Prediction } from "./transcript.js";

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
    expect(c).toEqual({
      agree: true,
      expected: "RESET → INIT",
      actual: "RESET → INIT",
    });
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
    // The data is for the divergence line: an agreeing check does not carry it.
    expect(c?.outcomes).toBeUndefined();
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
    expect(ok).toEqual({
      agree: true,
      expected: "the call succeeds",
      actual: "the call succeeded",
    });
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

  it("carries the backend's why with its errno when the device refuses what the model allows", () => {
    const err = new VerbsError(
      "ibv_modify_qp",
      errnos.EINVAL,
      because({ kind: "no-alt-path" }, { attribute: "IBV_QP_ALT_PATH" }),
    );
    const c = checkPrediction(predicted("ok", IBV_QPS_RTR), {
      method: "modify",
      from: IBV_QPS_INIT,
      after: IBV_QPS_INIT,
      failed: true,
      error: err,
    });
    expect(c).toEqual({
      agree: false,
      expected: "INIT → RTR",
      actual: `EINVAL: ${verbFailureText({ kind: "no-alt-path" })}`,
      note: "the model expected this call to succeed: the backend knows something the model does not",
      outcomes: {
        expected: { kind: "moved", from: IBV_QPS_INIT, to: IBV_QPS_RTR },
        actual: {
          kind: "failed",
          code: "EINVAL",
          reason: verbFailureText({ kind: "no-alt-path" }),
          why: { kind: "no-alt-path" },
        },
      },
    });
  });

  it("names a non-verbs error by its class, with no reason or why", () => {
    const c = checkPrediction(predicted("ok", IBV_QPS_RTS), {
      method: "postSend",
      from: IBV_QPS_RTS,
      after: IBV_QPS_RTS,
      failed: true,
      error: new Error("the bridge went away"),
    });
    expect(c?.outcomes?.actual).toEqual({ kind: "failed", code: "Error" });
    expect(c?.actual).toBe("Error");
  });

  it("words its English strings and note from its data, through outcomeText and checkNoteText", () => {
    const send = new VerbsError(
      "ibv_post_send",
      errnos.EINVAL,
      because({ kind: "send-needs-rts", state: IBV_QPS_INIT }),
    );
    const cases: [Prediction, Outcome][] = [
      [predicted("ok", IBV_QPS_RTR), { method: "modify", from: IBV_QPS_INIT, after: IBV_QPS_RTR, failed: false }],
      [predicted("ok", IBV_QPS_RTS), { method: "modify", from: IBV_QPS_RTS, after: IBV_QPS_RTS, failed: false }],
      [predicted("ok", IBV_QPS_RTR), { method: "modify", from: IBV_QPS_INIT, after: IBV_QPS_INIT, failed: false }],
      [
        predicted("EINVAL", IBV_QPS_INIT, "needs IBV_QP_DEST_QPN"),
        { method: "modify", from: IBV_QPS_INIT, after: IBV_QPS_RTR, failed: false },
      ],
      [
        predicted("ok", IBV_QPS_INIT),
        { method: "postSend", from: IBV_QPS_INIT, after: IBV_QPS_INIT, failed: true, error: send },
      ],
      [
        predicted("EINVAL", IBV_QPS_INIT),
        { method: "postSend", from: IBV_QPS_INIT, after: IBV_QPS_INIT, failed: false },
      ],
    ];
    for (const [p, o] of cases) {
      const c = checkPrediction(p, o)!;
      if (c.agree) {
        expect(c.outcomes).toBeUndefined();
        continue;
      }
      expect(c.expected).toBe(outcomeText(c.outcomes!.expected, "expected"));
      expect(c.actual).toBe(outcomeText(c.outcomes!.actual, "actual"));
      expect(c.note).toBe(checkNoteText(c.outcomes!.expected));
    }
  });
});

describe("outcomeText", () => {
  it("words each kind of outcome, in either tense where English has one", () => {
    const stays: CheckOutcome = { kind: "moved", from: IBV_QPS_RTS, to: IBV_QPS_RTS };
    expect(outcomeText(stays, "expected")).toBe("stays RTS");
    expect(outcomeText({ kind: "moved", from: IBV_QPS_INIT, to: IBV_QPS_RTR }, "actual")).toBe("INIT → RTR");
    expect(outcomeText({ kind: "accepted" }, "expected")).toBe("the call succeeds");
    expect(outcomeText({ kind: "accepted" }, "actual")).toBe("the call succeeded");
    expect(outcomeText({ kind: "failed", code: "ENOMEM" }, "actual")).toBe("ENOMEM");
    expect(outcomeText({ kind: "failed", code: "EINVAL", reason: "RTR needs IBV_QP_DEST_QPN" }, "expected")).toBe(
      "EINVAL: RTR needs IBV_QP_DEST_QPN",
    );
    expect(checkNoteText({ kind: "failed", code: "EINVAL" })).toMatch(/expected this call to fail/);
    expect(checkNoteText({ kind: "accepted" })).toMatch(/expected this call to succeed/);
  });
});
