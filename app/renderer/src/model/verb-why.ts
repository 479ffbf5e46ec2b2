/**
 * Why a verb failed, as data the UI words in the learner's language (i18n.ts `verbWhy`). The
 * backend puts it on the error itself (verbs/verb-failure.ts, `error.why`); this reads it there.
 * A transcript from before errors carried it has only the English sentence: for its modify
 * refusals, the common case, the data is rebuilt from the event (the call's attributes and mask
 * and the QP's state before the call run through the table's check again, verbs/qp-transitions.ts),
 * and the same rebuild explains the gate's predicted failure of a pending modify.
 */
import type { VerbEvent } from "../../../session/transcript.js";
import { checkModifyMask } from "../../../../verbs/qp-transitions.js";
import type { VerbFailure } from "../../../../verbs/verb-failure.js";

/** The structured reason of a failed event: the error's own, else (old transcripts) a modify's rebuilt. */
export function verbWhy(e: VerbEvent, qpType: number | undefined): VerbFailure | undefined {
  if (!e.error) return undefined;
  if (e.error.why) return e.error.why;
  if (e.method !== "modify" || qpType === undefined) return undefined;
  const before = e.qps.find((q) => q.qp === e.target.$handle)?.before;
  if (!before || e.error.code === undefined) return undefined;
  return modifyWhy(qpType, before.qp_state, e.args, e.error.code, e.error.attribute);
}

/**
 * The same for a modify of a QP of `qpType` in `state` with `args` ([attr, mask]) that failed, or
 * is predicted to fail (the gate's prediction), with errno `code` naming `attribute`: the table's
 * refusal, when it names the same errno and attribute (a modify refused for another reason, e.g.
 * a port_num other than 1, keeps the backend's words).
 */
export function modifyWhy(
  qpType: number,
  state: number,
  args: readonly unknown[],
  code: string,
  attribute: string | undefined,
): VerbFailure | undefined {
  const attr = (args[0] ?? {}) as { qp_state?: number; cur_qp_state?: number };
  const mask = Number(args[1]) >>> 0;
  const check = checkModifyMask(qpType, state, attr, mask);
  if (check.ok || check.errno !== code) return undefined;
  // The attribute each names for the table's refusal: the simulator and the QP model the first
  // bit at fault (or IBV_QP_STATE, "attr_mask"), the native pre-check all of them.
  const named = [...check.missing, ...check.notAllowed];
  const sameFault =
    attribute === undefined
      ? named.length === 0
      : attribute === (named[0] ?? "IBV_QP_STATE") || attribute === named.join(" | ");
  if (!sameFault && !(check.errno === "EOPNOTSUPP" && attribute === "attr_mask")) return undefined;
  return check.why;
}
