/**
 * How a verb's outcome compares with the QP model's prediction: the `check` of a verb
 * event. Pure: the session hands in the prediction and what happened. The check carries both
 * sides as data (`CheckOutcome`); its English strings, which the exports print, are worded
 * from that data here, and the UI words the same data in the learner's language.
 */
import { qpStateName } from "../../state-machines/qp.js";
import { VerbsError } from "../../verbs/errors.js";
import type { Check, CheckOutcome, Prediction } from "./transcript.js";

/**
 * An outcome in English: "INIT → RTR", "stays RTS", "EINVAL: RTR needs IBV_QP_DEST_QPN", and for
 * a call other than modify "the call succeeds" (what the model expected) or "the call succeeded"
 * (what the device did).
 */
export function outcomeText(o: CheckOutcome, side: "expected" | "actual"): string {
  switch (o.kind) {
    case "moved":
      return o.from === o.to ? `stays ${qpStateName(o.to)}` : `${qpStateName(o.from)} → ${qpStateName(o.to)}`;
    case "accepted":
      return side === "expected" ? "the call succeeds" : "the call succeeded";
    case "failed":
      return `${o.code}${o.reason ? `: ${o.reason}` : ""}`;
  }
}

/** On a disagreement, which way the model was wrong, in English: by what it expected. */
export function checkNoteText(expected: CheckOutcome): string {
  return expected.kind === "failed"
    ? "the model expected this call to fail: the backend accepted something the model refuses"
    : "the model expected this call to succeed: the backend knows something the model does not";
}

export interface Outcome {
  /** The method called on the QP (`modify`, `postSend`, …). */
  method: string;
  /** The QP's state before the call. */
  from: number;
  /** The QP's state after the call (undefined when it cannot be queried, e.g. destroyed). */
  after: number | undefined;
  /** Set when the call threw: what it threw. */
  failed: boolean;
  error?: unknown;
}

/**
 * Prediction against outcome. For modify the outcome is a state; for posts, only whether the call
 * is accepted. A call refused for its JavaScript arguments (a TypeError or RangeError: a string
 * where a number belongs, an SGE past its MR) never reached the verb the model predicts, so it is
 * not judged: calling it a disagreement would flag the model for a learner's typo.
 */
export function checkPrediction(prediction: Prediction, o: Outcome): Check | undefined {
  if (o.failed && (o.error instanceof TypeError || o.error instanceof RangeError)) return undefined;
  const modify = o.method === "modify";
  const expected: CheckOutcome =
    prediction.outcome !== "ok"
      ? {
          kind: "failed",
          code: prediction.outcome,
          ...(prediction.reason && { reason: prediction.reason }),
          ...(prediction.why && { why: prediction.why }),
        }
      : modify
        ? { kind: "moved", from: o.from, to: prediction.state }
        : { kind: "accepted" };
  let actual: CheckOutcome;
  let agree: boolean;
  if (o.failed) {
    const err = o.error instanceof VerbsError ? o.error : undefined;
    const code = err ? err.code : ((o.error as Error)?.name ?? "Error");
    actual = {
      kind: "failed",
      code,
      ...(err?.reason && { reason: err.reason }),
      ...(err?.why && { why: err.why }),
    };
    agree = prediction.outcome === code;
  } else {
    const actualState = o.after ?? prediction.state;
    actual = modify ? { kind: "moved", from: o.from, to: actualState } : { kind: "accepted" };
    agree = prediction.outcome === "ok" && (!modify || actualState === prediction.state);
  }
  return {
    agree,
    expected: outcomeText(expected, "expected"),
    actual: outcomeText(actual, "actual"),
    // The data only where the UI words it (a disagreement): it would add to every verb's event.
    ...(!agree && { note: checkNoteText(expected), outcomes: { expected, actual } }),
  };
}
