/**
 * The one table of legal QP transitions with the attributes each requires and allows,
 * per QP type: the kernel's `qp_state_table` (drivers/infiniband/core/verbs.c, Linux 6.1)
 * as measured on rxe (sim/RXE-FACTS.md §2.2). The simulator, the xstate
 * QP model, the native pre-check and the error explanations all read it from here.
 */
import {
  IBV_QPS_ERR,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPS_SQD,
  IBV_QPS_SQE,
  IBV_QPT_RC,
  IBV_QPT_UC,
  IBV_QPT_UD,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_ALT_PATH,
  IBV_QP_AV,
  IBV_QP_CUR_STATE,
  IBV_QP_DEST_QPN,
  IBV_QP_EN_SQD_ASYNC_NOTIFY,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_PATH_MIG_STATE,
  IBV_QP_PATH_MTU,
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_QKEY,
  IBV_QP_RATE_LIMIT,
  IBV_QP_RETRY_CNT,
  IBV_QP_RNR_RETRY,
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
  IBV_QP_TIMEOUT,
  flagNames,
  ibv_qp_attr_mask,
  ibv_qp_state,
  nameOf,
} from "./constants.js";
import { verbFailureText, type VerbFailure } from "./verb-failure.js";

/** The QP types the table covers. */
export type TableQpType = typeof IBV_QPT_RC | typeof IBV_QPT_UC | typeof IBV_QPT_UD;

export interface TransitionRule {
  /** Mask bits that must be present (IBV_QP_STATE is implied). */
  req: Record<TableQpType, number>;
  /** Mask bits that may be present. */
  opt: Record<TableQpType, number>;
}

const none = { [IBV_QPT_RC]: 0, [IBV_QPT_UC]: 0, [IBV_QPT_UD]: 0 };
const rule = (req: Partial<TransitionRule["req"]>, opt: Partial<TransitionRule["opt"]>): TransitionRule => ({
  req: { ...none, ...req },
  opt: { ...none, ...opt },
});
const bare = rule({}, {});

const RTS_OPT = {
  [IBV_QPT_RC]: IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE,
  [IBV_QPT_UC]: IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE,
  [IBV_QPT_UD]: IBV_QP_CUR_STATE | IBV_QP_QKEY,
};
const TO_ERR_OR_RESET = { [IBV_QPS_RESET]: bare, [IBV_QPS_ERR]: bare };

/** QP_TRANSITIONS[from][to]: the rule, or undefined where the transition is illegal. */
export const QP_TRANSITIONS: Readonly<Record<number, Readonly<Record<number, TransitionRule>>>> = {
  [IBV_QPS_RESET]: {
    [IBV_QPS_RESET]: bare,
    [IBV_QPS_INIT]: rule(
      {
        [IBV_QPT_RC]: IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
        [IBV_QPT_UC]: IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
        [IBV_QPT_UD]: IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
      },
      {},
    ),
  },
  [IBV_QPS_INIT]: {
    ...TO_ERR_OR_RESET,
    [IBV_QPS_INIT]: rule(
      {},
      {
        [IBV_QPT_RC]: IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
        [IBV_QPT_UC]: IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
        [IBV_QPT_UD]: IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
      },
    ),
    [IBV_QPS_RTR]: rule(
      {
        [IBV_QPT_RC]:
          IBV_QP_AV |
          IBV_QP_PATH_MTU |
          IBV_QP_DEST_QPN |
          IBV_QP_RQ_PSN |
          IBV_QP_MAX_DEST_RD_ATOMIC |
          IBV_QP_MIN_RNR_TIMER,
        [IBV_QPT_UC]: IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN,
      },
      {
        [IBV_QPT_RC]: IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
        [IBV_QPT_UC]: IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
        [IBV_QPT_UD]: IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
      },
    ),
  },
  [IBV_QPS_RTR]: {
    ...TO_ERR_OR_RESET,
    [IBV_QPS_RTS]: rule(
      {
        [IBV_QPT_RC]: IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
        [IBV_QPT_UC]: IBV_QP_SQ_PSN,
        [IBV_QPT_UD]: IBV_QP_SQ_PSN,
      },
      RTS_OPT,
    ),
  },
  [IBV_QPS_RTS]: {
    ...TO_ERR_OR_RESET,
    [IBV_QPS_RTS]: rule({}, RTS_OPT),
    [IBV_QPS_SQD]: rule(
      {},
      {
        [IBV_QPT_RC]: IBV_QP_EN_SQD_ASYNC_NOTIFY,
        [IBV_QPT_UC]: IBV_QP_EN_SQD_ASYNC_NOTIFY,
        [IBV_QPT_UD]: IBV_QP_EN_SQD_ASYNC_NOTIFY,
      },
    ),
  },
  [IBV_QPS_SQD]: {
    ...TO_ERR_OR_RESET,
    [IBV_QPS_RTS]: rule({}, RTS_OPT),
    [IBV_QPS_SQD]: rule(
      {},
      {
        [IBV_QPT_RC]:
          IBV_QP_PORT |
          IBV_QP_AV |
          IBV_QP_TIMEOUT |
          IBV_QP_RETRY_CNT |
          IBV_QP_RNR_RETRY |
          IBV_QP_MAX_QP_RD_ATOMIC |
          IBV_QP_MAX_DEST_RD_ATOMIC |
          IBV_QP_ALT_PATH |
          IBV_QP_ACCESS_FLAGS |
          IBV_QP_PKEY_INDEX |
          IBV_QP_MIN_RNR_TIMER |
          IBV_QP_PATH_MIG_STATE,
        // The kernel's table also allows AV here, but uverbs then adds IBV_QP_PORT, which
        // UC does not allow: so on rxe a UC SQD→SQD with AV fails (sim/RXE-FACTS.md §2.1).
        [IBV_QPT_UC]: IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PATH_MIG_STATE,
        [IBV_QPT_UD]: IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
      },
    ),
  },
  [IBV_QPS_SQE]: {
    ...TO_ERR_OR_RESET,
    [IBV_QPS_RTS]: rule(
      {},
      {
        [IBV_QPT_UC]: IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS,
        [IBV_QPT_UD]: IBV_QP_CUR_STATE | IBV_QP_QKEY,
      },
    ),
  },
  [IBV_QPS_ERR]: TO_ERR_OR_RESET,
};

/** The outcome of checking a modify's mask against the table, before any value is looked at. */
export type MaskCheck =
  | { ok: true; from: number; to: number }
  | {
      ok: false;
      from: number;
      to: number;
      errno: "EINVAL" | "EOPNOTSUPP";
      /** Why, as data (verbs/verb-failure.ts). */
      why: VerbFailure;
      /** A sentence a learner can act on: `why` in English. */
      reason: string;
      /** Required bits that were not in the mask. */
      missing: string[];
      /** Bits in the mask that this transition does not accept. */
      notAllowed: string[];
    };

/**
 * Checks `mask` for a QP of `qpType` in state `current`, in the order the kernel does:
 * libibverbs refuses bits from IBV_QP_RATE_LIMIT up (EOPNOTSUPP), then the table decides.
 * `attr` supplies qp_state and cur_qp_state where the mask names them.
 */
export function checkModifyMask(
  qpType: number,
  current: number,
  attr: { qp_state?: number; cur_qp_state?: number },
  mask: number,
): MaskCheck {
  const to = mask & IBV_QP_STATE ? (attr.qp_state ?? 0) : current;
  const failure = (
    errno: "EINVAL" | "EOPNOTSUPP",
    why: VerbFailure,
    missing: string[] = [],
    notAllowed: string[] = [],
  ) => ({ ok: false, from: current, to, errno, why, reason: verbFailureText(why), missing, notAllowed }) as const;

  if (mask >>> 0 >= IBV_QP_RATE_LIMIT) {
    const notAllowed = flagNames(ibv_qp_attr_mask, mask & ~(IBV_QP_RATE_LIMIT - 1));
    return failure("EOPNOTSUPP", { kind: "rate-limit", notAllowed }, [], notAllowed);
  }
  if (to < IBV_QPS_RESET || to > IBV_QPS_ERR || !Number.isInteger(to)) {
    return failure("EINVAL", { kind: "not-a-state", field: "qp_state", value: to }, [], ["IBV_QP_STATE"]);
  }
  if (qpType !== IBV_QPT_RC && qpType !== IBV_QPT_UC && qpType !== IBV_QPT_UD) {
    return failure("EINVAL", { kind: "no-modify-table", qpType });
  }
  if (mask & IBV_QP_CUR_STATE && attr.cur_qp_state !== current) {
    return failure(
      "EINVAL",
      { kind: "cur-state", claimed: attr.cur_qp_state ?? 0, actual: current },
      [],
      ["IBV_QP_CUR_STATE"],
    );
  }
  const r = QP_TRANSITIONS[current]?.[to];
  if (!r) return failure("EINVAL", { kind: "illegal", from: current, to, withoutState: !(mask & IBV_QP_STATE) });
  const type = qpType as TableQpType;
  const missingBits = r.req[type] & ~mask;
  const extraBits = mask & ~(r.req[type] | r.opt[type] | IBV_QP_STATE);
  const missing = flagNames(ibv_qp_attr_mask, missingBits);
  const notAllowed = flagNames(ibv_qp_attr_mask, extraBits);
  if (missing.length || notAllowed.length) {
    const needs = flagNames(ibv_qp_attr_mask, r.req[type]);
    return failure("EINVAL", { kind: "mask", from: current, to, needs, missing, notAllowed }, missing, notAllowed);
  }
  return { ok: true, from: current, to };
}

/** The legal targets from `from` for a QP type (for diagrams and the xstate model). */
export function legalTargets(from: number): number[] {
  return Object.keys(QP_TRANSITIONS[from] ?? {}).map(Number);
}
