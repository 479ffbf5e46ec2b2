/**
 * rxe's per-device hardware counters (rxe_hw_counters.c), indexed as rxe's enum so the hot
 * path increments an array slot. Where rxe increments each one is noted at the call sites.
 */
import { RXE_COUNTER_NAMES, type PortCounters } from "../verbs/types.js";

export const CNT_SENT_PKTS = 0;
export const CNT_RCVD_PKTS = 1;
export const CNT_DUP_REQ = 2;
export const CNT_OUT_OF_SEQ_REQ = 3;
export const CNT_RCV_RNR = 4;
export const CNT_SND_RNR = 5;
export const CNT_RCV_SEQ_ERR = 6;
/** "ack_deferred" (RXE_CNT_COMPLETER_SCHED): counts completer re-scheduling, which has no equivalent here; stays 0. */
export const CNT_COMPLETER_SCHED = 7;
export const CNT_RETRY_EXCEEDED = 8;
export const CNT_RNR_RETRY_EXCEEDED = 9;
export const CNT_COMP_RETRY = 10;
export const CNT_SEND_ERR = 11;
export const CNT_LINK_DOWNED = 12;
export const CNT_RDMA_SEND = 13;
export const CNT_RDMA_RECV = 14;

export function newCounters(): Float64Array {
  return new Float64Array(RXE_COUNTER_NAMES.length);
}

/** The counters by the device's names (`names`, in rxe's order; sim/profile.ts): one it has no name for is left out. */
export function countersToRecord(
  c: Float64Array,
  names: readonly (string | undefined)[] = RXE_COUNTER_NAMES,
): PortCounters {
  const out: PortCounters = {};
  names.forEach((name, i) => {
    if (name !== undefined) out[name] = c[i]!;
  });
  return out;
}
