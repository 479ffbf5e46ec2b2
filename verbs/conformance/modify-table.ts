/**
 * The modify_qp matrix as MEASURED on rxe (sim/RXE-FACTS.md §2.2), written out independently of
 * verbs/qp-transitions.ts on purpose: this is the oracle the backends are judged by, so a
 * slip in the shared table cannot hide here. RoCE specifics are applied: IBV_QP_ALT_PATH
 * is never accepted (ib_core bans APM on RoCE) and UC SQD→SQD refuses IBV_QP_AV (uverbs
 * adds IBV_QP_PORT, which UC does not allow).
 */
import type { Cq, Pd, Qp } from "../backend.js";
import {
  IBV_MIG_MIGRATED,
  IBV_MTU_1024,
  IBV_QPS_ERR,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPS_SQD,
  IBV_QPT_RC,
  IBV_QPT_UC,
  IBV_QPT_UD,
  IBV_QP_ACCESS_FLAGS as ACCESS,
  IBV_QP_ALT_PATH,
  IBV_QP_AV as AV,
  IBV_QP_CAP,
  IBV_QP_CUR_STATE as CUR,
  IBV_QP_DEST_QPN as DEST_QPN,
  IBV_QP_EN_SQD_ASYNC_NOTIFY as EN_SQD,
  IBV_QP_MAX_DEST_RD_ATOMIC as MAX_DEST_RD,
  IBV_QP_MAX_QP_RD_ATOMIC as MAX_RD,
  IBV_QP_MIN_RNR_TIMER as MIN_RNR,
  IBV_QP_PATH_MIG_STATE as MIG,
  IBV_QP_PATH_MTU as MTU,
  IBV_QP_PKEY_INDEX as PKEY,
  IBV_QP_PORT as PORT,
  IBV_QP_QKEY as QKEY,
  IBV_QP_RETRY_CNT as RETRY,
  IBV_QP_RNR_RETRY as RNR_RETRY,
  IBV_QP_RQ_PSN as RQ_PSN,
  IBV_QP_SQ_PSN as SQ_PSN,
  IBV_QP_STATE,
  IBV_QP_TIMEOUT as TIMEOUT,
  flagNames,
  ibv_qp_attr_mask,
} from "../constants.js";
import type { GidEntry, QpAttrInput } from "../types.js";
import { ALL_REMOTE, Scope, UD_QKEY, qpIn } from "./harness.js";

export interface Row {
  from: number;
  to: number;
  /** [required, optional] per QP type */
  rc: [number, number];
  uc: [number, number];
  ud: [number, number];
}

const none: [number, number] = [0, 0];
const RTS_OPT_RC = CUR | ACCESS | MIN_RNR | MIG;
const RTS_OPT_UC = CUR | ACCESS | MIG;
const RTS_OPT_UD = CUR | QKEY;

/** Every legal transition with its required and optional bits (IBV_QP_STATE implied). */
export const LEGAL: Row[] = [
  { from: IBV_QPS_RESET, to: IBV_QPS_RESET, rc: none, uc: none, ud: none },
  {
    from: IBV_QPS_RESET,
    to: IBV_QPS_INIT,
    rc: [PKEY | PORT | ACCESS, 0],
    uc: [PKEY | PORT | ACCESS, 0],
    ud: [PKEY | PORT | QKEY, 0],
  },
  {
    from: IBV_QPS_INIT,
    to: IBV_QPS_INIT,
    rc: [0, PKEY | PORT | ACCESS],
    uc: [0, PKEY | PORT | ACCESS],
    ud: [0, PKEY | PORT | QKEY],
  },
  {
    from: IBV_QPS_INIT,
    to: IBV_QPS_RTR,
    rc: [AV | MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD | MIN_RNR, ACCESS | PKEY],
    uc: [AV | MTU | DEST_QPN | RQ_PSN, ACCESS | PKEY],
    ud: [0, PKEY | QKEY],
  },
  {
    from: IBV_QPS_RTR,
    to: IBV_QPS_RTS,
    rc: [TIMEOUT | RETRY | RNR_RETRY | SQ_PSN | MAX_RD, RTS_OPT_RC],
    uc: [SQ_PSN, RTS_OPT_UC],
    ud: [SQ_PSN, RTS_OPT_UD],
  },
  { from: IBV_QPS_RTS, to: IBV_QPS_RTS, rc: [0, RTS_OPT_RC], uc: [0, RTS_OPT_UC], ud: [0, RTS_OPT_UD] },
  { from: IBV_QPS_RTS, to: IBV_QPS_SQD, rc: [0, EN_SQD], uc: [0, EN_SQD], ud: [0, EN_SQD] },
  { from: IBV_QPS_SQD, to: IBV_QPS_RTS, rc: [0, RTS_OPT_RC], uc: [0, RTS_OPT_UC], ud: [0, RTS_OPT_UD] },
  {
    from: IBV_QPS_SQD,
    to: IBV_QPS_SQD,
    rc: [0, PORT | AV | TIMEOUT | RETRY | RNR_RETRY | MAX_RD | MAX_DEST_RD | ACCESS | PKEY | MIN_RNR | MIG],
    uc: [0, ACCESS | PKEY | MIG],
    ud: [0, PKEY | QKEY],
  },
  ...[IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD].map((from) => ({
    from,
    to: IBV_QPS_ERR,
    rc: none,
    uc: none,
    ud: none,
  })),
  ...[IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPS_ERR].map((from) => ({
    from,
    to: IBV_QPS_RESET,
    rc: none,
    uc: none,
    ud: none,
  })),
  { from: IBV_QPS_ERR, to: IBV_QPS_ERR, rc: none, uc: none, ud: none },
];

/** The states a QP can be walked to with modify_qp (SQE cannot be reached). */
export const STATES = [IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPS_ERR];

export function rowFor(row: Row, type: number): [number, number] {
  return type === IBV_QPT_RC ? row.rc : type === IBV_QPT_UC ? row.uc : row.ud;
}
export function legal(from: number, to: number): Row | undefined {
  return LEGAL.find((r) => r.from === from && r.to === to);
}

/** Every mask bit from IBV_QP_STATE up to IBV_QP_DEST_QPN (bit 20), one by one. */
export const ALL_BITS = Array.from({ length: 21 }, (_, i) => 1 << i);
export { IBV_QP_ALT_PATH, IBV_QP_CAP, IBV_QP_STATE };

export const bitNames = (mask: number) => flagNames(ibv_qp_attr_mask, mask).join("|") || "0";

/** Valid values for every attribute named in `mask` (so only the mask itself can be wrong). */
export function attrFor(mask: number, qp: Qp, gid: GidEntry, current: number, to: number): QpAttrInput {
  const av = { is_global: 1, port_num: 1, grh: { dgid: gid.gid, sgid_index: gid.gid_index, hop_limit: 64 } };
  const a: QpAttrInput = {};
  if (mask & IBV_QP_STATE) a.qp_state = to;
  if (mask & CUR) a.cur_qp_state = current;
  if (mask & EN_SQD) a.en_sqd_async_notify = 1;
  if (mask & ACCESS) a.qp_access_flags = ALL_REMOTE;
  if (mask & PKEY) a.pkey_index = 0;
  if (mask & PORT) a.port_num = 1;
  if (mask & QKEY) a.qkey = UD_QKEY;
  if (mask & AV) a.ah_attr = av;
  if (mask & MTU) a.path_mtu = IBV_MTU_1024;
  if (mask & TIMEOUT) a.timeout = 14;
  if (mask & RETRY) a.retry_cnt = 3;
  if (mask & RNR_RETRY) a.rnr_retry = 3;
  if (mask & RQ_PSN) a.rq_psn = 0x10;
  if (mask & MAX_RD) a.max_rd_atomic = 1;
  if (mask & IBV_QP_ALT_PATH) {
    a.alt_ah_attr = av;
    a.alt_port_num = 1;
    a.alt_timeout = 14;
    a.alt_pkey_index = 0;
  }
  if (mask & MIN_RNR) a.min_rnr_timer = 12;
  if (mask & SQ_PSN) a.sq_psn = 0x20;
  if (mask & MAX_DEST_RD) a.max_dest_rd_atomic = 1;
  if (mask & MIG) a.path_mig_state = IBV_MIG_MIGRATED;
  if (mask & IBV_QP_CAP) a.cap = { max_send_wr: 16, max_recv_wr: 16, max_send_sge: 4, max_recv_sge: 4 };
  if (mask & DEST_QPN) a.dest_qp_num = qp.qp_num;
  return a;
}

/** Optional bits that RoCE refuses although the kernel's table lists them. */
export function roceRefused(type: number, from: number, to: number): number {
  let bits = IBV_QP_ALT_PATH;
  if (type === IBV_QPT_UC && from === IBV_QPS_SQD && to === IBV_QPS_SQD) bits |= AV;
  return bits;
}

export function newQp(s: Scope, pd: Pd, cq: Cq, gid: GidEntry, type: number, state: number): Qp {
  return qpIn(s, pd, cq, gid, type, state);
}

export { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
