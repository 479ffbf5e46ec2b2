/**
 * The QP model: an xstate machine per QP that follows what the QP should do, and a pure
 * `predictModify` that says before an `ibv_modify_qp` what will happen and why. The mask
 * rules come from the one table in verbs/qp-transitions.ts; this file adds only what the
 * table cannot see (values a learner gets wrong on RoCE). No effects here: the session
 * drives the machine and compares it with the backend.
 */
import { setup, assign } from "xstate";
import {
  IBV_ACCESS_REMOTE_ATOMIC,
  IBV_ACCESS_REMOTE_READ,
  IBV_LINK_LAYER_ETHERNET,
  IBV_QPS_ERR,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPS_SQD,
  IBV_QPS_SQE,
  IBV_QPT_RC,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_AV,
  IBV_QP_DEST_QPN,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_QP_PATH_MTU,
  IBV_WR_ATOMIC_CMP_AND_SWP,
  IBV_WR_ATOMIC_FETCH_AND_ADD,
  IBV_WR_RDMA_READ,
  ibv_qp_state,
  mtuBytes,
  nameOf,
} from "../verbs/constants.js";
import { checkModifyMask } from "../verbs/qp-transitions.js";
import { argError } from "../verbs/errors.js";
import { verbFailureText, type VerbFailure } from "../verbs/verb-failure.js";

/** A pitfall's message and data from its refusal. */
const because = (why: VerbFailure) => ({ message: verbFailureText(why), why });
import type { QpAttrInput, SendWr } from "../verbs/types.js";

/** The machine's state names, one per ibv_qp_state. */
export type QpStateName = "RESET" | "INIT" | "RTR" | "RTS" | "SQD" | "SQE" | "ERR";

export const QP_STATE_NAMES: readonly QpStateName[] = ["RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"];

/** IBV_QPS_RTS → "RTS". */
export function qpStateName(state: number): QpStateName {
  const n = QP_STATE_NAMES[state];
  if (!n) throw argError(RangeError, undefined, { kind: "not-a-state", field: "qp_state", value: state });
  return n;
}

export function qpStateValue(name: QpStateName): number {
  return QP_STATE_NAMES.indexOf(name);
}

/** What the model may know beyond the mask, to catch RoCE pitfalls. Every field is optional. */
export interface PredictContext {
  /** The port's link layer (IBV_LINK_LAYER_ETHERNET on rxe: RoCE rules apply). */
  link_layer?: number;
  /** The port's active MTU (an ibv_mtu value). */
  active_mtu?: number;
  /** The port's max MTU (an ibv_mtu value). */
  max_mtu?: number;
  /** Valid GID indices on the port (from ibv_query_gid_table). */
  gid_indices?: number[];
  /** QPNs of the QPs that exist (this program's), to check dest_qp_num. */
  known_qpns?: number[];
  /** This QP's own number. */
  qp_num?: number;
  /** Where the other QPs point (their dest_qp_num, 0 before RTR), to catch a pair that does not point at each other. */
  peers?: { qp_num: number; dest_qp_num: number }[];
}

/** A mistake the mask table cannot see. `errno` set: the call fails; unset: it succeeds but something will go wrong later. */
export interface Pitfall {
  id:
    | "is_global_unset"
    | "sgid_index_out_of_table"
    | "path_mtu_above_active"
    | "path_mtu_invalid"
    | "max_dest_rd_atomic_zero"
    | "max_rd_atomic_zero"
    | "dest_qp_num_unknown"
    | "dest_qp_num_not_mutual"
    | "peer_max_dest_rd_atomic_zero"
    | "qp_access_no_remote_read";
  errno?: "EINVAL" | "ENODATA";
  attribute: string;
  message: string;
  /** A refusal's data (verbs/verb-failure.ts): `message` is its English. */
  why?: VerbFailure;
}

export type ModifyPrediction =
  | { ok: true; from: number; to: number; warnings: Pitfall[] }
  | {
      ok: false;
      from: number;
      /** The target the modify asked for. */
      to: number;
      code: string;
      reason: string;
      /** Why, as data (verbs/verb-failure.ts): `reason` is its English. */
      why?: VerbFailure;
      /** The first attribute at fault, as in verbs.h. */
      attribute?: string;
      missing: string[];
      notAllowed: string[];
      warnings: Pitfall[];
    };

const arrow = (from: number, to: number) => `${qpStateName(from)} → ${qpStateName(to)}`;

/**
 * Predicts `qp.modify(attr, mask)` for a QP of `qpType` now in `current`: the new state, or
 * the error (errno name) and why. Mask rules first (checkModifyMask, the kernel's order),
 * then value checks that fail on RoCE, then warnings for values that succeed but bite later.
 */
export function predictModify(
  qpType: number,
  current: number,
  attr: QpAttrInput,
  mask: number,
  context: PredictContext = {},
): ModifyPrediction {
  const m = checkModifyMask(qpType, current, attr, mask);
  if (!m.ok) {
    return {
      ok: false,
      from: current,
      to: m.to,
      code: m.errno,
      reason: m.reason,
      why: m.why,
      ...((m.missing[0] ?? m.notAllowed[0]) !== undefined && { attribute: m.missing[0] ?? m.notAllowed[0] }),
      missing: m.missing,
      notAllowed: m.notAllowed,
      warnings: [],
    };
  }
  const pitfalls = valuePitfalls(qpType, m.from, m.to, attr, mask, context);
  const fatal = pitfalls.find((p) => p.errno);
  if (fatal) {
    return {
      ok: false,
      from: current,
      to: m.to,
      code: fatal.errno!,
      reason: fatal.message,
      ...(fatal.why && { why: fatal.why }),
      attribute: fatal.attribute,
      missing: [],
      notAllowed: [],
      warnings: pitfalls.filter((p) => p !== fatal && !p.errno),
    };
  }
  return { ok: true, from: current, to: m.to, warnings: pitfalls };
}

function valuePitfalls(
  qpType: number,
  from: number,
  to: number,
  attr: QpAttrInput,
  mask: number,
  ctx: PredictContext,
): Pitfall[] {
  const out: Pitfall[] = [];
  const roce = ctx.link_layer === undefined || ctx.link_layer === IBV_LINK_LAYER_ETHERNET;
  const step = arrow(from, to);
  if (mask & IBV_QP_AV) {
    const ah = attr.ah_attr ?? {};
    // ib_core's rdma_fill_sgid_attr: on RoCE every address needs a GRH.
    if (roce && !ah.is_global) {
      out.push({
        id: "is_global_unset",
        errno: "EINVAL",
        attribute: "ah_attr.is_global",
        ...because({ kind: "predict-no-grh", from, to }),
      });
    } else if (ctx.gid_indices) {
      const idx = ah.grh?.sgid_index ?? 0;
      if (!ctx.gid_indices.includes(idx)) {
        out.push({
          id: "sgid_index_out_of_table",
          errno: "ENODATA",
          attribute: "ah_attr.grh.sgid_index",
          ...because({ kind: "predict-sgid-index", from, to, index: idx, valid: [...ctx.gid_indices] }),
        });
      }
    }
  }
  if (mask & IBV_QP_PATH_MTU && attr.path_mtu !== undefined) {
    const maxMtu = ctx.max_mtu ?? 5;
    if (attr.path_mtu > maxMtu || attr.path_mtu < 0) {
      out.push({
        id: "path_mtu_invalid",
        errno: "EINVAL",
        attribute: "path_mtu",
        ...because({ kind: "predict-path-mtu", from, to, mtu: attr.path_mtu, maxMtu: nameOfMtu(maxMtu) }),
      });
    } else if (ctx.active_mtu !== undefined && attr.path_mtu > ctx.active_mtu) {
      out.push({
        id: "path_mtu_above_active",
        attribute: "path_mtu",
        message: `path_mtu ${nameOfMtu(attr.path_mtu)} is above the port's active_mtu ${nameOfMtu(ctx.active_mtu)}: rxe accepts it, but packets larger than the link carries are dropped; use active_mtu`,
      });
    }
  }
  if (qpType === IBV_QPT_RC && mask & IBV_QP_MAX_DEST_RD_ATOMIC && attr.max_dest_rd_atomic === 0) {
    out.push({
      id: "max_dest_rd_atomic_zero",
      attribute: "max_dest_rd_atomic",
      message:
        "max_dest_rd_atomic is 0: this QP will answer every incoming RDMA READ or atomic with a NAK (the requester sees IBV_WC_REM_INV_REQ_ERR and both QPs go to ERR)",
    });
  }
  if (qpType === IBV_QPT_RC && mask & IBV_QP_MAX_QP_RD_ATOMIC && attr.max_rd_atomic === 0) {
    out.push({
      id: "max_rd_atomic_zero",
      attribute: "max_rd_atomic",
      message:
        "max_rd_atomic is 0: RDMA READs and atomics posted on this QP will never be sent (no completion ever, on rxe)",
    });
  }
  if (mask & IBV_QP_DEST_QPN && attr.dest_qp_num !== undefined && ctx.known_qpns) {
    if (!ctx.known_qpns.includes(attr.dest_qp_num)) {
      out.push({
        id: "dest_qp_num_unknown",
        attribute: "dest_qp_num",
        message: `dest_qp_num 0x${attr.dest_qp_num.toString(16)} is not the number of any QP here (${ctx.known_qpns.map((n) => "0x" + n.toString(16)).join(", ")}): the modify succeeds, but no one will answer this QP's sends: they end in IBV_WC_RETRY_EXC_ERR once retry_cnt runs out (on rxe, never if retry_cnt is 7: rxe retries for ever)`,
      });
    }
  }
  if (mask & IBV_QP_DEST_QPN && attr.dest_qp_num !== undefined && ctx.qp_num !== undefined && ctx.peers) {
    const peer = ctx.peers.find((p) => p.qp_num === attr.dest_qp_num);
    if (peer && peer.dest_qp_num !== 0 && peer.dest_qp_num !== ctx.qp_num && peer.qp_num !== ctx.qp_num) {
      out.push({
        id: "dest_qp_num_not_mutual",
        attribute: "dest_qp_num",
        message: `QP 0x${peer.qp_num.toString(16)} points at 0x${peer.dest_qp_num.toString(16)}, not back at this QP (0x${ctx.qp_num.toString(16)}): its replies will go elsewhere and RC sends end in IBV_WC_RETRY_EXC_ERR once retry_cnt runs out (on rxe, never if retry_cnt is 7)`,
      });
    }
  }
  return out;
}

function nameOfMtu(mtu: number): string {
  return mtu >= 1 && mtu <= 5 ? `IBV_MTU_${mtuBytes(mtu)}` : String(mtu);
}

/** What the model knows about a send's two ends, for `predictPostSend`. */
export interface PostSendContext {
  /** The requester's max_rd_atomic. */
  max_rd_atomic?: number;
  /** The responder's max_dest_rd_atomic and qp_access_flags, when the peer is known. */
  peer?: { max_dest_rd_atomic: number; qp_access_flags: number };
}

/** Warnings for a postSend the call itself accepts but which will fail on the wire. */
export function predictPostSend(qpType: number, wrs: SendWr[], ctx: PostSendContext): Pitfall[] {
  const out: Pitfall[] = [];
  if (qpType !== IBV_QPT_RC) return out;
  wrs.forEach((wr, i) => {
    const readOrAtomic =
      wr.opcode === IBV_WR_RDMA_READ ||
      wr.opcode === IBV_WR_ATOMIC_CMP_AND_SWP ||
      wr.opcode === IBV_WR_ATOMIC_FETCH_AND_ADD;
    if (!readOrAtomic) return;
    const what = wr.opcode === IBV_WR_RDMA_READ ? "RDMA READ" : "atomic";
    if (ctx.max_rd_atomic === 0) {
      out.push({
        id: "max_rd_atomic_zero",
        attribute: `wr[${i}].opcode`,
        message: `this QP's max_rd_atomic is 0, so the ${what} is never sent: no completion will arrive (set max_rd_atomic at RTR → RTS)`,
      });
    }
    if (ctx.peer && ctx.peer.max_dest_rd_atomic === 0) {
      out.push({
        id: "peer_max_dest_rd_atomic_zero",
        attribute: "max_dest_rd_atomic",
        message: `the peer's max_dest_rd_atomic is 0: the ${what} will complete with IBV_WC_REM_INV_REQ_ERR and both QPs go to ERR`,
      });
    }
    const need = wr.opcode === IBV_WR_RDMA_READ ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_ATOMIC;
    if (ctx.peer && !(ctx.peer.qp_access_flags & need)) {
      out.push({
        id: "qp_access_no_remote_read",
        attribute: "qp_access_flags",
        message: `the peer QP's qp_access_flags lack ${wr.opcode === IBV_WR_RDMA_READ ? "IBV_ACCESS_REMOTE_READ" : "IBV_ACCESS_REMOTE_ATOMIC"}: the ${what} will complete with IBV_WC_REM_INV_REQ_ERR`,
      });
    }
  });
  return out;
}

// ---------------------------------------------------------------------------------------
// The machine

export interface QpModelContext {
  qp_type: number;
  /** The last modify's outcome, for diagrams and explanations. */
  last?: ModifyPrediction;
  /** The last reason the QP moved without a modify. */
  lastCause?: string;
}

export type QpModelEvent =
  /** ibv_modify_qp: moves only if the prediction says it succeeds. */
  | { type: "MODIFY"; attr: QpAttrInput; mask: number; context?: PredictContext }
  /** An error completion (not a flush) on this QP moves it to ERR (rxe: requester or responder). */
  | { type: "COMPLETION_ERROR"; status: number }
  /** A fatal async event (IBV_EVENT_QP_FATAL; rxe never raises it, hardware may). */
  | { type: "FATAL" }
  /** The backend reports a state the model did not predict: the session records the disagreement, then resyncs. */
  | { type: "OBSERVED"; state: number };

const stateValueOf = (name: string): number => QP_STATE_NAMES.indexOf(name as QpStateName);

/** Per-state MODIFY transitions: one guarded branch per legal target, read off the table. */
function modifyFrom(from: number) {
  return QP_STATE_NAMES.map((name) => ({
    target: name as QpStateName,
    guard: { type: "modifyAllowed" as const, params: { from, to: qpStateValue(name) } },
    actions: "recordModify" as const,
  }));
}

function observed() {
  return QP_STATE_NAMES.map((name) => ({
    target: name as QpStateName,
    guard: { type: "observedIs" as const, params: { state: qpStateValue(name) } },
    actions: "recordObserved" as const,
  }));
}

export const qpMachine = setup({
  types: {
    context: {} as QpModelContext,
    events: {} as QpModelEvent,
    input: {} as { qp_type: number; state?: number },
  },
  guards: {
    modifyAllowed: ({ context, event }, params: { from: number; to: number }) => {
      if (event.type !== "MODIFY") return false;
      const p = predictModify(context.qp_type, params.from, event.attr, event.mask, event.context);
      return p.ok && p.to === params.to;
    },
    observedIs: ({ event }, params: { state: number }) => event.type === "OBSERVED" && event.state === params.state,
  },
  actions: {
    recordModify: assign({ last: undefined, lastCause: undefined }),
    recordObserved: assign({ lastCause: "observed on the backend" }),
    recordError: assign({
      lastCause: ({ event }) =>
        event.type === "COMPLETION_ERROR"
          ? `a completion with status ${event.status}`
          : event.type === "FATAL"
            ? "a fatal async event"
            : undefined,
    }),
  },
}).createMachine({
  id: "qp",
  context: ({ input }) => ({ qp_type: input.qp_type }),
  initial: "RESET",
  states: {
    RESET: { on: { MODIFY: modifyFrom(IBV_QPS_RESET), OBSERVED: observed() } },
    INIT: {
      on: {
        MODIFY: modifyFrom(IBV_QPS_INIT),
        FATAL: { target: "ERR", actions: "recordError" },
        OBSERVED: observed(),
      },
    },
    RTR: {
      on: {
        MODIFY: modifyFrom(IBV_QPS_RTR),
        COMPLETION_ERROR: { target: "ERR", actions: "recordError" },
        FATAL: { target: "ERR", actions: "recordError" },
        OBSERVED: observed(),
      },
    },
    RTS: {
      on: {
        MODIFY: modifyFrom(IBV_QPS_RTS),
        COMPLETION_ERROR: { target: "ERR", actions: "recordError" },
        FATAL: { target: "ERR", actions: "recordError" },
        OBSERVED: observed(),
      },
    },
    SQD: {
      on: {
        MODIFY: modifyFrom(IBV_QPS_SQD),
        COMPLETION_ERROR: { target: "ERR", actions: "recordError" },
        FATAL: { target: "ERR", actions: "recordError" },
        OBSERVED: observed(),
      },
    },
    // The IB spec's send-queue error state. rxe never enters it (modify_qp cannot reach it
    // and errors go straight to ERR), but the table has its exits, so the model does too.
    SQE: {
      on: {
        MODIFY: modifyFrom(IBV_QPS_SQE),
        COMPLETION_ERROR: { target: "ERR", actions: "recordError" },
        FATAL: { target: "ERR", actions: "recordError" },
        OBSERVED: observed(),
      },
    },
    ERR: { on: { MODIFY: modifyFrom(IBV_QPS_ERR), OBSERVED: observed() } },
  },
});

/** The state value (IBV_QPS_*) of a machine snapshot. */
export function snapshotQpState(value: unknown): number {
  const s = stateValueOf(String(value));
  // The machine's own snapshot: a value it has no state for is a bug here, not the learner's.
  if (s < 0) throw new RangeError(`not a QP model state: ${String(value)}`);
  return s;
}

/** IBV_QPS_* name for messages. */
export function qpStateLabel(state: number): string {
  return nameOf(ibv_qp_state, state);
}
