/**
 * Shared by the VM-only rdma_cm tests: the native backend's CM (or why there is none), and
 * the steps every CM program repeats. Server ends run on rxe1 (10.77.0.2), clients on rxe0
 * (10.77.0.1), as in the lab VM.
 */
import { expect } from "vitest";
import type { Cq, Mr, Pd, Qp } from "../../verbs/backend.js";
import type { Wc } from "../../verbs/types.js";
import {
  RDMA_CM_EVENT_ADDR_RESOLVED,
  RDMA_CM_EVENT_ROUTE_RESOLVED,
  rdmaEventStr,
  type CmBackend,
  type CmEvent,
  type CmEventChannel,
  type CmId,
} from "../../verbs/cm.js";
import * as v from "../../verbs/constants.js";
import { backend, unavailable } from "./native-env.js";

export const SERVER_IP = "10.77.0.2";
export const CLIENT_IP = "10.77.0.1";

/** Prints why a VM-only CM file is skipped (no RDMA here, or no librdmacm in the build). */
export function announceCmSkip(file: string): boolean {
  const why = !backend ? unavailable : backend.cm ? undefined : backend.cmUnavailableReason;
  if (why) console.warn(`[native] SKIPPED ${file}: ${why}`);
  return why !== undefined;
}

export function CM(): CmBackend {
  const cm = backend?.cm;
  if (!cm) throw new Error(`no rdma_cm: ${unavailable ?? backend?.cmUnavailableReason}`);
  return cm;
}

/** The next event, which must be `type` (its name in the failure); not acknowledged. */
export async function nextEvent(ch: CmEventChannel, type: number, timeoutMs = 10_000): Promise<CmEvent> {
  const ev = await ch.getEvent(timeoutMs);
  expect(ev, `no ${rdmaEventStr(type)} within ${timeoutMs} ms`).not.toBeNull();
  expect(rdmaEventStr(ev!.event), `event status ${ev!.status}`).toBe(rdmaEventStr(type));
  return ev!;
}

/** A listening id on SERVER_IP:port. */
export function listenOn(ch: CmEventChannel, port: number, ps: number): CmId {
  const id = ch.createId(ps);
  id.bindAddr({ addr: SERVER_IP, port });
  id.listen(4);
  return id;
}

/** A client id resolved (address and route) to SERVER_IP:port, each event acknowledged. */
export async function resolvedClient(ch: CmEventChannel, port: number, ps: number): Promise<CmId> {
  const id = ch.createId(ps);
  id.resolveAddr({ addr: CLIENT_IP, port: 0 }, { addr: SERVER_IP, port }, 2000);
  (await nextEvent(ch, RDMA_CM_EVENT_ADDR_RESOLVED)).ack();
  id.resolveRoute(2000);
  (await nextEvent(ch, RDMA_CM_EVENT_ROUTE_RESOLVED)).ack();
  return id;
}

export interface CmEnd {
  pd: Pd;
  /** Send and receive completions on CQs of their own: no interleaving to sort out. */
  scq: Cq;
  rcq: Cq;
  qp: Qp;
  mr: Mr;
}

/** PD, two CQs, one MR (`bytes`) and a QP on the id's own device context (id.verbs). */
export function qpOn(id: CmId, qp_type: number, bytes = 4096, depth = 8): CmEnd {
  const ctx = id.verbs;
  if (!ctx) throw new Error("the id has no device yet");
  const pd = ctx.allocPd();
  const scq = ctx.createCq(2 * depth);
  const rcq = ctx.createCq(2 * depth);
  const access = v.IBV_ACCESS_LOCAL_WRITE | v.IBV_ACCESS_REMOTE_READ | v.IBV_ACCESS_REMOTE_WRITE;
  const mr = pd.regMr(bytes, access);
  const qp = id.createQp(pd, {
    send_cq: scq,
    recv_cq: rcq,
    qp_type,
    cap: { max_send_wr: depth, max_recv_wr: depth, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
  });
  return { pd, scq, rcq, qp, mr };
}

/** What a QP and its port say when a completion does not come: its state, PSNs and retry settings, and the port's counters. */
export function qpFacts(qp: Qp): string {
  const a = qp.query(
    v.IBV_QP_STATE |
      v.IBV_QP_SQ_PSN |
      v.IBV_QP_RQ_PSN |
      v.IBV_QP_DEST_QPN |
      v.IBV_QP_TIMEOUT |
      v.IBV_QP_RETRY_CNT |
      v.IBV_QP_RNR_RETRY,
  ).attr;
  const counters = Object.entries(qp.pd.context.queryCounters(1)).filter(([, n]) => Number(n) > 0);
  return JSON.stringify({
    qp_num: qp.qp_num,
    device: qp.pd.context.device.name,
    qp_state: a.qp_state,
    sq_psn: a.sq_psn,
    rq_psn: a.rq_psn,
    dest_qp_num: a.dest_qp_num,
    timeout: a.timeout,
    retry_cnt: a.retry_cnt,
    rnr_retry: a.rnr_retry,
    counters: Object.fromEntries(counters),
  });
}

export function qpState(qp: Qp): number {
  return qp.query(v.IBV_QP_STATE).attr.qp_state;
}

/** Destroys what qpOn made, QP first (rdma_destroy_qp). */
export function teardown(id: CmId, end: CmEnd | undefined): void {
  if (end) {
    if (id.qp) id.destroyQp();
    end.mr.dereg();
    end.scq.destroy();
    end.rcq.destroy();
    end.pd.dealloc();
  }
  id.destroy();
}

/** The next completion on `cq`, which must be a success; `explain` says what else there is to know when none comes. */
export async function completion(cq: Cq, what: string, explain?: () => string): Promise<Wc> {
  const [wc] = await cq.pollWait(1, 20_000);
  expect(wc, `no completion for ${what}${explain ? `: ${explain()}` : ""}`).toBeDefined();
  expect(wc.status, `${what}: status ${wc.status}`).toBe(v.IBV_WC_SUCCESS);
  return wc;
}
