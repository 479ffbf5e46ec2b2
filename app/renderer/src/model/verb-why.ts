/**
 * Why a verb failed, as data the UI words in the learner's language (i18n.ts `verbWhy`): the
 * session's refusal of a destroy that would hang (verbs/cq-events.ts), and the modify family. The
 * backend's `reason` is an English sentence; the data behind the common one, a modify refused by
 * the QP transition table, is all in the event: the call's attributes and mask and the QP's state
 * before the call. So the table's own check (verbs/qp-transitions.ts) is run again on them, and
 * its result is used only when it names the same errno and attribute the backend did (a
 * modify refused for another reason, e.g. a port_num other than 1, keeps the backend's words).
 */
import type { VerbEvent } from "../../../session/transcript.js";
import {
  IBV_QPS_ERR,
  IBV_QPS_RESET,
  IBV_QP_CUR_STATE,
  IBV_QP_STATE,
  flagNames,
  ibv_qp_attr_mask,
} from "../../../../verbs/constants.js";
import { unackedEventsOf } from "../../../../verbs/cq-events.js";
import { checkModifyMask, QP_TRANSITIONS, type TableQpType } from "../../../../verbs/qp-transitions.js";

export type VerbWhy =
  /** The mask lacks bits the transition requires, or has bits it does not accept. */
  | { kind: "mask"; from: number; to: number; needs: string[]; missing: string[]; notAllowed: string[] }
  /** There is no such transition (`withoutState`: the mask had no IBV_QP_STATE, so the target was the current state). */
  | { kind: "illegal"; from: number; to: number; withoutState: boolean }
  /** cur_qp_state named a state the QP is not in. */
  | { kind: "cur-state"; claimed: number; actual: number }
  /** libibverbs refuses mask bits from IBV_QP_RATE_LIMIT up. */
  | { kind: "rate-limit"; notAllowed: string[] }
  /** ibv_destroy_cq refused: `n` completion events got and not acknowledged (libibverbs would wait for ever). */
  | { kind: "unacked-events"; n: number };

/** The structured reason of a failed `modify` event, or undefined (not a modify, or not the table's refusal). */
export function verbWhy(e: VerbEvent, qpType: number | undefined): VerbWhy | undefined {
  const unacked = e.error && unackedEventsOf(e.error);
  if (unacked !== undefined) return { kind: "unacked-events", n: unacked };
  if (!e.error || e.method !== "modify" || qpType === undefined) return undefined;
  const before = e.qps.find((q) => q.qp === e.target.$handle)?.before;
  if (!before || e.error.code === undefined) return undefined;
  return modifyWhy(qpType, before.qp_state, e.args, e.error.code, e.error.attribute);
}

/**
 * The same for a modify of a QP of `qpType` in `state` with `args` ([attr, mask]) that failed, or
 * is predicted to fail (the gate's prediction), with errno `code` naming `attribute`.
 */
export function modifyWhy(
  qpType: number,
  state: number,
  args: readonly unknown[],
  code: string,
  attribute: string | undefined,
): VerbWhy | undefined {
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
  if (check.errno === "EOPNOTSUPP") return { kind: "rate-limit", notAllowed: check.notAllowed };
  if (check.to < IBV_QPS_RESET || check.to > IBV_QPS_ERR) return undefined; // not a state: the backend's words
  if (mask & IBV_QP_CUR_STATE && attr.cur_qp_state !== state)
    return { kind: "cur-state", claimed: Number(attr.cur_qp_state ?? 0), actual: state };
  const rule = QP_TRANSITIONS[check.from]?.[check.to];
  if (!rule) return { kind: "illegal", from: check.from, to: check.to, withoutState: !(mask & IBV_QP_STATE) };
  if (!named.length) return undefined;
  const needs = flagNames(ibv_qp_attr_mask, rule.req[qpType as TableQpType] ?? 0);
  return { kind: "mask", from: check.from, to: check.to, needs, missing: check.missing, notAllowed: check.notAllowed };
}
