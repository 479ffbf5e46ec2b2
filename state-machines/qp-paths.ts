/**
 * Test paths through the QP model: the events a learner can send (good modifies built from
 * the transition table, plus the moves without a modify) and, with xstate/graph, the
 * shortest path to every state the model can reach. The model-based tests replay these on
 * a backend; nothing here touches one.
 */
import { getShortestPaths, getSimplePaths } from "xstate/graph";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_READ,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_MTU_1024,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_AV,
  IBV_QP_DEST_QPN,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_PATH_MTU,
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_QKEY,
  IBV_QP_RETRY_CNT,
  IBV_QP_RNR_RETRY,
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
  IBV_QP_TIMEOUT,
  IBV_WC_LOC_QP_OP_ERR,
} from "../verbs/constants.js";
import { QP_TRANSITIONS, type TableQpType } from "../verbs/qp-transitions.js";
import type { QpAttrInput } from "../verbs/types.js";
import { QP_STATE_NAMES, qpMachine, type QpModelEvent, type QpStateName } from "./qp.js";

/** Where the QP's peer is: what INIT → RTR needs beyond the mask. */
export interface PeerAddress {
  dgid: string;
  dest_qp_num: number;
  sgid_index?: number;
  port_num?: number;
}

/**
 * Sane values for every attribute a mask bit can name (ibv_rc_pingpong's, mostly), so the
 * required mask of any transition can be filled in.
 */
export function attrValues(peer: PeerAddress): QpAttrInput {
  const port = peer.port_num ?? 1;
  return {
    pkey_index: 0,
    port_num: port,
    qp_access_flags: IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
    qkey: 0x11111111,
    ah_attr: {
      is_global: 1,
      port_num: port,
      grh: { dgid: peer.dgid, sgid_index: peer.sgid_index ?? 0, hop_limit: 1 },
    },
    path_mtu: IBV_MTU_1024,
    dest_qp_num: peer.dest_qp_num,
    rq_psn: 0,
    max_dest_rd_atomic: 1,
    min_rnr_timer: 12,
    timeout: 14,
    retry_cnt: 7,
    rnr_retry: 7,
    sq_psn: 0,
    max_rd_atomic: 1,
  };
}

/** A modify that the table accepts for `from → to` (the required bits, nothing else), or null if illegal. */
export function goodModify(
  qpType: TableQpType,
  from: number,
  to: number,
  peer: PeerAddress,
): { attr: QpAttrInput; mask: number } | null {
  const rule = QP_TRANSITIONS[from]?.[to];
  if (!rule) return null;
  return { attr: { ...attrValues(peer), qp_state: to }, mask: IBV_QP_STATE | rule.req[qpType] };
}

/** Every mask bit named in attrValues, for building wrong masks. */
export const KNOWN_BITS = [
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_QKEY,
  IBV_QP_AV,
  IBV_QP_PATH_MTU,
  IBV_QP_DEST_QPN,
  IBV_QP_RQ_PSN,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_TIMEOUT,
  IBV_QP_RETRY_CNT,
  IBV_QP_RNR_RETRY,
  IBV_QP_SQ_PSN,
  IBV_QP_MAX_QP_RD_ATOMIC,
];

/** The events a learner can cause from a state: every legal modify, and an error completion where one can happen. */
export function learnerEvents(qpType: TableQpType, peer: PeerAddress, state: QpStateName): QpModelEvent[] {
  const from = QP_STATE_NAMES.indexOf(state);
  const out: QpModelEvent[] = [];
  for (let to = 0; to < QP_STATE_NAMES.length; to++) {
    const m = goodModify(qpType, from, to, peer);
    if (m) out.push({ type: "MODIFY", ...m });
  }
  // A send with a bad lkey is the simplest error completion to cause: it needs RTS.
  if (state === "RTS") out.push({ type: "COMPLETION_ERROR", status: IBV_WC_LOC_QP_OP_ERR });
  return out;
}

/** The shortest path (a list of events) to every state the model can reach, keyed by state name. */
export function shortestPathsToEveryState(qpType: TableQpType, peer: PeerAddress): Map<QpStateName, QpModelEvent[]> {
  const paths = getShortestPaths(qpMachine, {
    input: { qp_type: qpType },
    events: (snapshot) => learnerEvents(qpType, peer, snapshot.value as QpStateName),
    // The context only records explanations; the state is what identifies a vertex.
    serializeState: (snapshot) => String(snapshot.value),
  });
  const out = new Map<QpStateName, QpModelEvent[]>();
  for (const p of paths) {
    const name = p.state.value as QpStateName;
    const events = p.steps.map((s) => s.event as { type: string }).filter((e) => e.type !== "xstate.init");
    const known = out.get(name);
    if (!known || known.length > events.length) out.set(name, events as QpModelEvent[]);
  }
  return out;
}

/** Every simple path (no state visited twice) from RESET to every state, as event lists. */
export function simplePathsToEveryState(qpType: TableQpType, peer: PeerAddress): QpModelEvent[][] {
  const paths = getSimplePaths(qpMachine, {
    input: { qp_type: qpType },
    events: (snapshot) => learnerEvents(qpType, peer, snapshot.value as QpStateName),
    serializeState: (snapshot) => String(snapshot.value),
  });
  return paths.map(
    (p) => p.steps.map((s) => s.event as { type: string }).filter((e) => e.type !== "xstate.init") as QpModelEvent[],
  );
}
