/**
 * ibv_modify_qp, with the checks in the kernel's order (RXE-FACTS.md §2.1): libibverbs
 * (EOPNOTSUPP), uverbs (ports, qp_state range, privileged Q_Key, SQD→SQD adds PORT), ib_core
 * (AV: GRH, sgid_index, route; ALT_PATH), then rxe (the transition table via checkModifyMask,
 * draining, value limits). Nothing changes unless every check passes; then rxe_qp_from_attr.
 */
import {
  IBV_QPS_ERR,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPS_SQD,
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
  IBV_QP_RETRY_CNT,
  IBV_QP_RNR_RETRY,
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
  IBV_QP_TIMEOUT,
} from "../verbs/constants.js";
import { fail } from "../verbs/errors.js";
import { checkModifyMask } from "../verbs/qp-transitions.js";
import type { QpAttrInput } from "../verbs/types.js";
import { checkAvPort, resolveAv, type ResolvedAv } from "./av.js";
import { JIFFY_MS } from "./clock.js";
import { int, obj } from "./check.js";
import { PSN_MASK } from "./packets.js";
import { QS_DRAIN, QS_DRAINED, QS_INIT, QS_READY, type SimQp } from "./qp.js";
import { because } from "../verbs/verb-failure.js";

const VERB = "ibv_modify_qp";
function roundupPow2(n: number): number {
  if (n <= 0) return 0;
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/**
 * Local ACK timeout in jiffies, as rxe_qp_from_attr computes qp_timeout_jiffies:
 * nsecs_to_jiffies(4096 << timeout) (which rounds down), at least one; 0 (no timer) for
 * timeout 0. The timer wheel adds its rounding when the timer is armed (clock.ts timerFireAt).
 */
export function ackTimeoutJiffies(timeout: number): number {
  if (timeout === 0) return 0;
  const ns = 4096 * 2 ** timeout;
  return Math.max(1, Math.floor(ns / (JIFFY_MS * 1e6)));
}

/** The attr field each mask bit names (the scalar ones; IBV_QP_AV's ah_attr is checked by av.ts). */
const MASK_FIELDS: readonly [number, string][] = [
  [IBV_QP_STATE, "qp_state"],
  [IBV_QP_CUR_STATE, "cur_qp_state"],
  [IBV_QP_EN_SQD_ASYNC_NOTIFY, "en_sqd_async_notify"],
  [IBV_QP_ACCESS_FLAGS, "qp_access_flags"],
  [IBV_QP_PKEY_INDEX, "pkey_index"],
  [IBV_QP_PORT, "port_num"],
  [IBV_QP_QKEY, "qkey"],
  [IBV_QP_PATH_MTU, "path_mtu"],
  [IBV_QP_TIMEOUT, "timeout"],
  [IBV_QP_RETRY_CNT, "retry_cnt"],
  [IBV_QP_RNR_RETRY, "rnr_retry"],
  [IBV_QP_RQ_PSN, "rq_psn"],
  [IBV_QP_MAX_QP_RD_ATOMIC, "max_rd_atomic"],
  [IBV_QP_MIN_RNR_TIMER, "min_rnr_timer"],
  [IBV_QP_SQ_PSN, "sq_psn"],
  [IBV_QP_MAX_DEST_RD_ATOMIC, "max_dest_rd_atomic"],
  [IBV_QP_PATH_MIG_STATE, "path_mig_state"],
  [IBV_QP_DEST_QPN, "dest_qp_num"],
];

/**
 * A plain copy of the caller's attr, each property read once (as the kernel copies the
 * struct from user space once): a getter cannot answer the check one value and the apply
 * another.
 */
function copyOnce(v: unknown, depth = 0): unknown {
  if (typeof v !== "object" || v === null) return v;
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice();
  if (v instanceof ArrayBuffer) return new Uint8Array(v.slice(0));
  if (depth > 8) return undefined;
  if (Array.isArray(v)) return v.map((x) => copyOnce(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) out[k] = copyOnce((v as Record<string, unknown>)[k], depth + 1);
  return out;
}

export function modifyQp(qp: SimQp, attrIn: QpAttrInput, maskIn: number): void {
  const mask0 = int(VERB, "attr_mask", maskIn);
  const a = copyOnce(obj(VERB, "attr", attrIn)) as QpAttrInput & Record<string, unknown>;
  // Every masked field's type is checked before anything is looked at, let alone stored:
  // a failed modify leaves the QP as it was.
  const fields = new Map<string, number>();
  for (const [bit, name] of MASK_FIELDS) {
    if (!(mask0 & bit)) continue;
    const v = a[name];
    fields.set(name, v === undefined || v === null ? 0 : int(VERB, `attr.${name}`, v));
  }
  const field = (name: string): number => fields.get(name) ?? 0;
  let mask = mask0 >>> 0;
  const current = qp.attr.qp_state;
  // The uverbs ABI carries both states in 8 bits: 1e9 reaches the kernel as 0 (RESET), as on rxe.
  const target = mask & IBV_QP_STATE ? field("qp_state") & 0xff : current;
  const curClaim = mask & IBV_QP_CUR_STATE ? field("cur_qp_state") & 0xff : current;

  // 1. libibverbs: mask bits from IBV_QP_RATE_LIMIT up.
  const pre = checkModifyMask(qp.qp_type, current, { qp_state: target, cur_qp_state: curClaim }, mask);
  if (!pre.ok && pre.errno === "EOPNOTSUPP")
    fail(VERB, "EOPNOTSUPP", because(pre.why, { attribute: pre.notAllowed[0] ?? "attr_mask" }));

  // 2. uverbs.
  if (mask & IBV_QP_PORT && field("port_num") !== 1)
    fail(
      VERB,
      "EINVAL",
      because({ kind: "port-num", field: "port_num", got: field("port_num") }, { attribute: "port_num" }),
    );
  if (mask & IBV_QP_AV) checkAvPort(VERB, a.ah_attr ?? {}, "ah_attr");
  if (mask & IBV_QP_STATE && (target < 0 || target > IBV_QPS_ERR))
    fail(VERB, "EINVAL", because({ kind: "not-a-state", field: "qp_state", value: target }, { attribute: "qp_state" }));
  if (mask & IBV_QP_CUR_STATE && (curClaim < 0 || curClaim > IBV_QPS_ERR))
    fail(
      VERB,
      "EINVAL",
      because({ kind: "not-a-state", field: "cur_qp_state", value: curClaim }, { attribute: "cur_qp_state" }),
    );
  if (mask & IBV_QP_QKEY && field("qkey") & 0x80000000 && !qp.world.root)
    fail(VERB, "EPERM", because({ kind: "qkey-privileged" }, { attribute: "qkey" }));
  if (current === IBV_QPS_SQD && target === IBV_QPS_SQD && mask & IBV_QP_AV && !(mask & IBV_QP_PORT)) {
    // uverbs adds IBV_QP_PORT on SQD→SQD with an AV; UC's table row then refuses it.
    mask |= IBV_QP_PORT;
  }

  // 3. ib_core: the address vector and the alternate path.
  let av: ResolvedAv | null = null;
  if (mask & IBV_QP_AV) {
    av = resolveAv(qp.world, qp.device, a.ah_attr ?? {}, VERB, "ah_attr");
  }
  if (mask & IBV_QP_ALT_PATH) fail(VERB, "EINVAL", because({ kind: "no-alt-path" }, { attribute: "IBV_QP_ALT_PATH" }));

  // 4. rxe_qp_chk_attr: the transition table, draining, value limits.
  const check = checkModifyMask(qp.qp_type, current, { qp_state: target, cur_qp_state: curClaim }, mask);
  if (!check.ok)
    fail(
      VERB,
      check.errno,
      because(check.why, { attribute: check.missing[0] ?? check.notAllowed[0] ?? "IBV_QP_STATE" }),
    );
  if (current === IBV_QPS_SQD && qp.reqState === QS_DRAIN && target !== IBV_QPS_ERR)
    fail(VERB, "EINVAL", because({ kind: "sq-draining" }, { attribute: "qp_state" }));
  if (mask & IBV_QP_PATH_MTU) {
    const m = field("path_mtu");
    if (m < 0 || m > 5) fail(VERB, "EINVAL", because({ kind: "path-mtu", mtu: m }, { attribute: "path_mtu" }));
  }
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC && (field("max_rd_atomic") & 0xff) > 128)
    fail(
      VERB,
      "EINVAL",
      because(
        { kind: "max-rd-atomic", value: field("max_rd_atomic") & 0xff, max: 128 },
        { attribute: "max_rd_atomic" },
      ),
    );
  if (mask & IBV_QP_TIMEOUT && (field("timeout") & 0xff) > 31)
    fail(VERB, "EINVAL", because({ kind: "qp-timeout", value: field("timeout") & 0xff }, { attribute: "timeout" }));

  // 5. rxe_qp_from_attr: apply.
  const s = qp.attr;
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC) {
    s.max_rd_atomic = roundupPow2(field("max_rd_atomic") & 0xff);
    qp.rdAtomic = s.max_rd_atomic;
  }
  if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) {
    s.max_dest_rd_atomic = roundupPow2(field("max_dest_rd_atomic") & 0xff);
    qp.respResources = [];
  }
  if (mask & IBV_QP_CUR_STATE) s.cur_qp_state = target;
  if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY) s.en_sqd_async_notify = field("en_sqd_async_notify") & 0xff;
  if (mask & IBV_QP_ACCESS_FLAGS) s.qp_access_flags = field("qp_access_flags") >>> 0;
  if (mask & IBV_QP_PKEY_INDEX) s.pkey_index = field("pkey_index") & 0xffff;
  if (mask & IBV_QP_PORT) s.port_num = 1;
  if (mask & IBV_QP_QKEY) s.qkey = field("qkey") >>> 0;
  if (av) {
    s.ah_attr = av.attr;
    qp.sgidBytes = av.sgid;
    qp.dgidBytes = av.dgid;
    qp.destDev = av.destDev;
  }
  if (mask & IBV_QP_PATH_MTU) {
    s.path_mtu = field("path_mtu");
    // path_mtu 0 is accepted by rxe (its MTU would be invalid); the simulator keeps 256 bytes.
    qp.mtu = s.path_mtu >= 1 ? 128 << s.path_mtu : 256;
  }
  if (mask & IBV_QP_TIMEOUT) {
    s.timeout = field("timeout") & 0xff;
    qp.timeoutJiffies = ackTimeoutJiffies(s.timeout);
  }
  if (mask & IBV_QP_RETRY_CNT) {
    s.retry_cnt = field("retry_cnt") & 0xff;
    qp.compRetryCnt = s.retry_cnt;
  }
  if (mask & IBV_QP_RNR_RETRY) {
    s.rnr_retry = field("rnr_retry") & 0xff;
    qp.compRnrRetry = s.rnr_retry;
  }
  if (mask & IBV_QP_RQ_PSN) qp.respPsn = field("rq_psn") & PSN_MASK;
  if (mask & IBV_QP_MIN_RNR_TIMER) s.min_rnr_timer = field("min_rnr_timer") & 0xff;
  if (mask & IBV_QP_SQ_PSN) {
    qp.reqPsn = field("sq_psn") & PSN_MASK;
    qp.compPsn = qp.reqPsn;
  }
  if (mask & IBV_QP_PATH_MIG_STATE) s.path_mig_state = field("path_mig_state");
  if (mask & IBV_QP_DEST_QPN) s.dest_qp_num = field("dest_qp_num") >>> 0;
  if (mask & IBV_QP_STATE) {
    s.qp_state = target;
    qp.libState = target;
    switch (target) {
      case IBV_QPS_RESET:
        qp.reset();
        break;
      case IBV_QPS_INIT:
        qp.reqState = QS_INIT;
        qp.respState = QS_INIT;
        break;
      case IBV_QPS_RTR:
        qp.respState = QS_READY;
        break;
      case IBV_QPS_RTS:
        qp.reqState = QS_READY;
        break;
      case IBV_QPS_SQD:
        // rxe_qp_drain: the requester notices it is drained (at once when nothing is in flight).
        if (qp.reqState !== QS_DRAINED) {
          qp.reqState = QS_DRAIN;
          qp.world.kickRequester(qp);
        }
        break;
      case IBV_QPS_ERR:
        qp.toError();
        break;
    }
  }
}
