/**
 * How a verb's outcome compares with the QP model's prediction: the `check` of a verb
 * event. Pure: the session hands in the prediction and what happened.
 */
import { qpStateName } from "../../state-machines/qp.js";
import { VerbsError } from "../../verbs/errors.js";
import type { Check, Prediction } from "./transcript.js";

/** An outcome in words: "INIT → RTR", "stays RTS", "EINVAL: RTR needs IBV_QP_DEST_QPN". */
export function describeOutcome(outcome: string, from: number, to: number, reason?: string): string {
  if (outcome === "ok") return from === to ? `stays ${qpStateName(to)}` : `${qpStateName(from)} → ${qpStateName(to)}`;
  return `${outcome}${reason ? `: ${reason}` : ""}`;
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
  const expected =
    o.method !== "modify" && prediction.outcome === "ok"
      ? "the call succeeds"
      : describeOutcome(prediction.outcome, o.from, prediction.state, prediction.reason);
  let check: Check;
  if (o.failed) {
    const code = o.error instanceof VerbsError ? o.error.code : ((o.error as Error)?.name ?? "Error");
    check = {
      agree: prediction.outcome === code,
      expected,
      actual: `${code}${o.error instanceof VerbsError && o.error.reason ? `: ${o.error.reason}` : ""}`,
    };
  } else {
    const actualState = o.after ?? prediction.state;
    const agree = prediction.outcome === "ok" && (o.method !== "modify" || actualState === prediction.state);
    check = {
      agree,
      expected,
      actual: o.method === "modify" ? describeOutcome("ok", o.from, actualState) : "the call succeeded",
    };
  }
  if (!check.agree)
    check.note =
      prediction.outcome === "ok"
        ? "the model expected this call to succeed: the backend knows something the model does not"
        : "the model expected this call to fail: the backend accepted something the model refuses";
  return check;
}
