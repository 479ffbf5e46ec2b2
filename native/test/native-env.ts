/**
 * Shared by the VM-only native tests: the backend (or why there is none, printed so a skip
 * is never silent) and small helpers. These tests run for real only in the lab VM:
 * `scripts/rxe-vm/run.sh -- npx vitest run native/test`.
 */
import type { Context, Qp, VerbsBackend } from "../../verbs/backend.js";
import * as v from "../../verbs/constants.js";
import type { GidEntry } from "../../verbs/types.js";
import { loadNativeBackend } from "../index.js";

const loaded = loadNativeBackend();
export const backend: VerbsBackend | undefined = "backend" in loaded ? loaded.backend : undefined;
export const unavailable = "unavailable" in loaded ? loaded.unavailable : undefined;

/** Prints why a VM-only file is skipped. */
export function announceSkip(file: string): boolean {
  if (!backend) console.warn(`[native] SKIPPED ${file}: ${unavailable}`);
  return !backend;
}

export function B(): VerbsBackend {
  if (!backend) throw new Error(`no native backend: ${unavailable}`);
  return backend;
}

/** The link-local RoCEv2 GID (index 0) of port 1. */
export function linkLocal(ctx: Context): GidEntry {
  const e = ctx.queryGidTable().find((g) => g.gid.startsWith("fe80"));
  if (!e) throw new Error(`${ctx.device.name} has no link-local GID`);
  return e;
}

export const ALL_ACCESS =
  v.IBV_ACCESS_LOCAL_WRITE | v.IBV_ACCESS_REMOTE_WRITE | v.IBV_ACCESS_REMOTE_READ | v.IBV_ACCESS_REMOTE_ATOMIC;

/** RESET → INIT → RTR → RTS against `peer` (rc_pingpong's values), one transition per call. */
export function connectRc(qp: Qp, peerQpn: number, gid: GidEntry, dgid: string): void {
  qp.modify(
    { qp_state: v.IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: ALL_ACCESS },
    v.IBV_QP_STATE | v.IBV_QP_PKEY_INDEX | v.IBV_QP_PORT | v.IBV_QP_ACCESS_FLAGS,
  );
  qp.modify(
    {
      qp_state: v.IBV_QPS_RTR,
      path_mtu: v.IBV_MTU_1024,
      dest_qp_num: peerQpn,
      rq_psn: 0,
      max_dest_rd_atomic: 1,
      min_rnr_timer: 12,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid, sgid_index: gid.gid_index, hop_limit: 64 } },
    },
    v.IBV_QP_STATE |
      v.IBV_QP_AV |
      v.IBV_QP_PATH_MTU |
      v.IBV_QP_DEST_QPN |
      v.IBV_QP_RQ_PSN |
      v.IBV_QP_MAX_DEST_RD_ATOMIC |
      v.IBV_QP_MIN_RNR_TIMER,
  );
  qp.modify(
    { qp_state: v.IBV_QPS_RTS, sq_psn: 0, timeout: 14, retry_cnt: 7, rnr_retry: 7, max_rd_atomic: 1 },
    v.IBV_QP_STATE |
      v.IBV_QP_TIMEOUT |
      v.IBV_QP_RETRY_CNT |
      v.IBV_QP_RNR_RETRY |
      v.IBV_QP_SQ_PSN |
      v.IBV_QP_MAX_QP_RD_ATOMIC,
  );
}
