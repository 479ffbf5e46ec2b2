/**
 * A check's two sides (session/transcript.ts `CheckOutcome`: what the QP model expected of a
 * call, what the device did) and its note, in Chinese: one case per kind, as the English
 * `outcomeText` and `checkNoteText` (session/prediction-check.ts) word the same data. State and
 * errno names stay as verbs.h spells them; the reason is `verbFailureZh` of its why.
 */
import type { CheckOutcome } from "../../../session/transcript.js";
import { stateName } from "../model/format.js";
import { verbFailureZh } from "./verb-failure-zh.js";

/** "INIT → RTR", "保持 RTS", "调用成功", "EINVAL：RTR 需要 …" (an English reason only where it has no why). */
export function checkOutcomeZh(o: CheckOutcome): string {
  switch (o.kind) {
    case "moved":
      return o.from === o.to ? `保持 ${stateName(o.to)}` : `${stateName(o.from)} → ${stateName(o.to)}`;
    case "accepted":
      return "调用成功";
    case "failed": {
      const reason = o.why ? verbFailureZh(o.why) : o.reason;
      return reason ? `${o.code}：${reason}` : o.code;
    }
  }
}

/** Which way the model was wrong, by what it expected. */
export function checkNoteZh(expected: CheckOutcome): string {
  return expected.kind === "failed"
    ? "模型预期这个调用会失败：后端接受了模型拒绝的调用"
    : "模型预期这个调用会成功：后端知道模型不知道的情况";
}
