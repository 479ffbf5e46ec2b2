/**
 * Why a completion failed, as the simulator knows it exactly: the responder's check that
 * refused a request (the rkey, the range, the access flags, the PSN), or the packets the
 * requester kept retrying. This is a side table keyed by the Wc object the simulator polled
 * out, not a field of the Wc contract (the native backend cannot fill one); the session asks
 * for it through `SimBackend.completionReason`. A reason is data (verbs/wc-reason.ts): the UI words
 * it in the learner's language.
 */
import type { Wc } from "../verbs/types.js";
import type { QpRef, SgeOwner, WcReason } from "../verbs/wc-reason.js";
import type { SimDevice } from "./device.js";
import { inRange, lookupMr, type SimMr } from "./mr.js";
import type { SimPd } from "./pd.js";
import type { SimQp } from "./qp.js";
import type { Dma } from "./wqe.js";

const reasons = new WeakMap<Wc, WcReason>();

/** Records why `wc` failed (only failures carry a reason). */
export function noteReason(wc: Wc, reason: WcReason | undefined): void {
  if (reason !== undefined) reasons.set(wc, reason);
}

/** Why the simulator completed `wc` in error, if it knows. */
export function reasonOf(wc: Wc): WcReason | undefined {
  return reasons.get(wc);
}

/** A QP as its reasons name it. */
export const qpRef = (qp: SimQp): QpRef => ({ qpn: qp.qp_num, device: qp.device.name });

/** The responder's rkey check (rxe's check_rkey): why `mr` (or no MR) refused the responder QP `at`. */
export function rkeyRefusal(
  at: QpRef,
  rkey: number,
  mr: SimMr | undefined,
  samePd: boolean,
  access: number,
  va: number,
  length: number,
): WcReason {
  if (!mr || mr.rkey !== rkey) {
    if (rkey === 0) return { kind: "rkey-zero", at };
    if (mr?.lkey === rkey) return { kind: "rkey-is-lkey", at, rkey, mrRkey: mr.rkey };
    return { kind: "rkey-unknown", at, rkey };
  }
  if (!samePd) return { kind: "mr-other-pd", at, rkey };
  if ((mr.access & access) !== access) return { kind: "mr-access", at, rkey, need: access, have: mr.access };
  return { kind: "outside-mr", at, va, n: length, mrAddr: mr.addr, mrLen: mr.end - mr.addr };
}

/** The responder QP's access check (check_op_valid): the opcode needs a flag its qp_access_flags lack. */
export function qpAccessRefusal(at: QpRef, access: number, qpAccess: number): WcReason {
  return { kind: "qp-access", at, need: access, have: qpAccess };
}

/**
 * Why copy_data refused a WQE's SGEs (a bad lkey, or a range outside its MR), the first SGE
 * at fault; `access` is what the copy needs of the MR (LOCAL_WRITE to write into it, 0 to read);
 * `at` the responder QP when it is its receive WQE.
 */
export function sgeRefusal(dev: SimDevice, pd: SimPd, dma: Dma, access: number, owner: SgeOwner, at?: QpRef): WcReason {
  const where = at ? { at, owner } : { owner };
  for (let i = 0; i < dma.numSge; i++) {
    const lkey = dma.lkey[i]!;
    const mr = lookupMr(dev, pd, lkey, access, false);
    const addr = dma.addr[i]!;
    const len = dma.len[i]!;
    if (!mr) {
      const any = dev.mrs.get(lkey >>> 8);
      if (!any || any.lkey !== lkey) return { kind: "sge-lkey-unknown", ...where, i, lkey, device: dev.name };
      if (any.pd !== pd) return { kind: "sge-other-pd", ...where, i, lkey };
      return { kind: "sge-no-local-write", ...where, i, lkey, have: any.access };
    }
    if (!inRange(mr, addr, len))
      return { kind: "sge-outside", ...where, i, addr, len, mrAddr: mr.addr, mrLen: mr.end - mr.addr };
  }
  return { kind: "sge-refused", ...where };
}
