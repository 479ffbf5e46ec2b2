/**
 * Why a completion failed, as the simulator knows it exactly: the responder's check that
 * refused a request (the rkey, the range, the access flags, the PSN), or the packets the
 * requester kept retrying. This is a side table keyed by the Wc object the simulator polled
 * out, not a field of the Wc contract (the native backend cannot fill one); the session asks
 * for it through `SimBackend.completionReason`.
 */
import { flagNames, ibv_access_flags } from "../verbs/constants.js";
import type { Wc } from "../verbs/types.js";
import type { SimDevice } from "./device.js";
import { inRange, lookupMr, type SimMr } from "./mr.js";
import type { SimPd } from "./pd.js";
import type { Dma } from "./wqe.js";

const reasons = new WeakMap<Wc, string>();

/** Records why `wc` failed (only failures carry a reason). */
export function noteReason(wc: Wc, reason: string | undefined): void {
  if (reason !== undefined) reasons.set(wc, reason);
}

/** Why the simulator completed `wc` in error, if it knows. */
export function reasonOf(wc: Wc): string | undefined {
  return reasons.get(wc);
}

const hex = (n: number) => `0x${n.toString(16)}`;
const flags = (access: number) => flagNames(ibv_access_flags, access).join(" | ") || "none";
const ACCESS_NAME: Record<number, string> = {
  [ibv_access_flags.IBV_ACCESS_REMOTE_WRITE]: "IBV_ACCESS_REMOTE_WRITE",
  [ibv_access_flags.IBV_ACCESS_REMOTE_READ]: "IBV_ACCESS_REMOTE_READ",
  [ibv_access_flags.IBV_ACCESS_REMOTE_ATOMIC]: "IBV_ACCESS_REMOTE_ATOMIC",
};

/** The responder's rkey check (rxe's check_rkey), in words: why `mr` (or no MR) refused. */
export function rkeyRefusal(
  who: string,
  rkey: number,
  mr: SimMr | undefined,
  samePd: boolean,
  access: number,
  va: number,
  length: number,
): string {
  if (!mr || mr.rkey !== rkey) {
    if (rkey === 0) return `${who}: rkey 0 names no MR (an MR registered without a REMOTE_* access flag has rkey 0)`;
    if (mr?.lkey === rkey) return `${who}: rkey ${hex(rkey)} is the lkey of an MR ${lkeyOnly(mr.rkey)}`;
    return `${who}: rkey ${hex(rkey)} names no MR on this device`;
  }
  if (!samePd) return `${who}: the MR with rkey ${hex(rkey)} belongs to another PD than the QP`;
  if ((mr.access & access) !== access)
    return `${who}: the MR with rkey ${hex(rkey)} lacks ${ACCESS_NAME[access]} (its access is ${flags(mr.access)})`;
  return `${who}: [${hex(va)}, ${hex(va + length)}) (${length} bytes) is outside the MR [${hex(mr.addr)}, ${hex(mr.end)})`;
}

/** Why an MR's lkey is not its rkey: on rxe the two are equal when remote access is granted. */
export function lkeyOnly(rkey: number): string {
  return rkey === 0
    ? "registered without a REMOTE_* access flag: its rkey is 0 (rxe gives an MR an rkey, equal to its lkey, only with remote access)"
    : `whose rkey is ${hex(rkey)}`;
}

/** The responder QP's access check (check_op_valid): the opcode needs a flag its qp_access_flags lack. */
export function qpAccessRefusal(who: string, access: number, qpAccess: number): string {
  return `${who}: its qp_access_flags lack ${ACCESS_NAME[access]} (they are ${flags(qpAccess)})`;
}

/**
 * Why copy_data refused a WQE's SGEs (a bad lkey, or a range outside its MR), the first SGE
 * at fault; `access` is what the copy needs of the MR (LOCAL_WRITE to write into it, 0 to read).
 */
export function sgeRefusal(dev: SimDevice, pd: SimPd, dma: Dma, access: number, queue: string): string {
  for (let i = 0; i < dma.numSge; i++) {
    const lkey = dma.lkey[i]!;
    const mr = lookupMr(dev, pd, lkey, access, false);
    const addr = dma.addr[i]!;
    const len = dma.len[i]!;
    if (!mr) {
      const any = dev.mrs.get(lkey >>> 8);
      if (!any || any.lkey !== lkey) return `${queue} sg_list[${i}].lkey ${hex(lkey)} names no MR on ${dev.name}`;
      if (any.pd !== pd) return `${queue} sg_list[${i}].lkey ${hex(lkey)} names an MR of another PD than the QP's`;
      return `${queue} sg_list[${i}]'s MR (lkey ${hex(lkey)}) lacks IBV_ACCESS_LOCAL_WRITE (its access is ${flags(any.access)})`;
    }
    if (!inRange(mr, addr, len))
      return `${queue} sg_list[${i}] [${hex(addr)}, ${hex(addr + len)}) is outside its MR [${hex(mr.addr)}, ${hex(mr.end)})`;
  }
  return `${queue} sg_list was refused`;
}
