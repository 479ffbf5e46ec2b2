/**
 * Helpers for the rdma_cm conformance files (cm-*.test.ts): the lab addresses, ids and
 * channels destroyed after each test, events awaited by type, and a server/client pair
 * brought to ESTABLISHED the way rping does it. Contract only, like harness.ts.
 */
import { expect } from "vitest";
import type { Cq, Pd, Qp } from "../backend.js";
import {
  RDMA_CM_EVENT_ADDR_RESOLVED,
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_ESTABLISHED,
  RDMA_CM_EVENT_ROUTE_RESOLVED,
  RDMA_PS_TCP,
  rdmaEventStr,
  type CmBackend,
  type CmEvent,
  type CmEventChannel,
  type CmId,
  type ConnParam,
} from "../cm.js";
import { IBV_QPT_RC, IBV_QPT_UD } from "../constants.js";
import { VerbsError } from "../errors.js";
import { B, DEFAULT_CAP, type Scope } from "./harness.js";

/** The lab VM's addresses (scripts/rxe-vm/guest-job.sh), which the simulator mirrors. */
export const RXE0_IP = "10.77.0.1";
export const RXE1_IP = "10.77.0.2";
/** On the lab subnet, owned by nobody: ARP never answers. */
export const NOBODY_IP = "10.77.0.99";

/** The backend's connection manager (the suites skip where it has none). */
export function CM(): CmBackend {
  const cm = B().cm;
  if (!cm) throw new Error(`no rdma_cm: ${B().cmUnavailableReason ?? "the backend has none"}`);
  return cm;
}

let nextPort = 20000 + (process.pid % 2000) * 10;
/** A port no other test of this run uses (native devices and ports persist across tests). */
export function freshPort(): number {
  return nextPort++;
}

/**
 * Runs a cleanup step, tolerating only an object the test already destroyed or acknowledged
 * ("… was already destroyed" / "already acknowledged", EINVAL). Anything else (EBUSY: a
 * child still alive) is rethrown as a plain Error, which Scope does not swallow: on native
 * such an object would leak.
 */
function unlessGone(what: string, fn: () => void): void {
  try {
    fn();
  } catch (e) {
    if (
      e instanceof VerbsError &&
      e.code === "EINVAL" &&
      /already (destroyed|deallocated|acknowledged)/.test(e.message)
    )
      return;
    throw new Error(`cleanup failed (${what}): ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** A channel destroyed after the test: its events acknowledged, then each id's QP, then the ids. */
export function channel(s: Scope): CmEventChannel {
  const ch = CM().createEventChannel();
  const ids: CmId[] = [];
  const events: CmEvent[] = [];
  const tracked = ch as CmEventChannel & { __ids?: CmId[]; __events?: CmEvent[] };
  tracked.__ids = ids;
  tracked.__events = events;
  s.defer(() => unlessGone("rdma_destroy_event_channel", () => ch.destroy()));
  s.defer(() => {
    for (const e of events) unlessGone("rdma_ack_cm_event", () => e.ack());
    for (const id of ids.reverse()) {
      unlessGone("rdma_destroy_qp", () => {
        if (id.qp) id.destroyQp();
      });
      unlessGone("rdma_destroy_id", () => id.destroy());
    }
  });
  return ch;
}

/** An id on a tracked channel. */
export function createId(ch: CmEventChannel, ps: number = RDMA_PS_TCP): CmId {
  const id = ch.createId(ps);
  (ch as { __ids?: CmId[] }).__ids?.push(id);
  return id;
}

/** The next event on `ch`, which must be `type` (fails naming what came instead); not acknowledged. */
export async function expectEvent(ch: CmEventChannel, type: number, timeoutMs = 2000): Promise<CmEvent> {
  const e = await ch.getEvent(timeoutMs);
  if (e) {
    (ch as { __events?: CmEvent[] }).__events?.push(e);
    if (e.event === RDMA_CM_EVENT_CONNECT_REQUEST) (ch as { __ids?: CmId[] }).__ids?.push(e.id);
  }
  expect(e ? `${rdmaEventStr(e.event)} status ${e.status}` : "no event").toBe(
    `${rdmaEventStr(type)} status ${e?.status ?? 0}`,
  );
  return e!;
}

/** Asserts no event arrives within `ms` of the backend's clock. */
export async function expectNoEvent(ch: CmEventChannel, ms = 100): Promise<void> {
  const e = await ch.getEvent(ms);
  if (e) (ch as { __events?: CmEvent[] }).__events?.push(e);
  expect(e ? rdmaEventStr(e.event) : "no event").toBe("no event");
}

/** Bytes of text, for private data. */
export function bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** Resources for a CM QP on an id's device: PD, one CQ, the QP (rdma_create_qp). */
export interface CmEnd {
  id: CmId;
  pd: Pd;
  cq: Cq;
  qp: Qp;
}

/**
 * rdma_create_qp with a PD and one CQ of the id's context. After the test the QP goes first
 * (through its id when the id still holds it), then the CQ and the PD it used: this runs
 * before the channel's cleanup (scope cleanups run last-registered first).
 */
export function createCmQp(s: Scope, id: CmId, qp_type: number = IBV_QPT_RC): CmEnd {
  const ctx = id.verbs!;
  const pd = ctx.allocPd();
  const cq = ctx.createCq(32);
  const qp = id.createQp(pd, { send_cq: cq, recv_cq: cq, qp_type, cap: DEFAULT_CAP, sq_sig_all: 1 });
  s.defer(() => {
    let held = false;
    unlessGone("id.qp", () => {
      held = id.qp === qp;
    });
    unlessGone("ibv_destroy_qp", () => (held ? id.destroyQp() : qp.destroy()));
    unlessGone("ibv_destroy_cq", () => cq.destroy());
    unlessGone("ibv_dealloc_pd", () => pd.dealloc());
  });
  return { id, pd, cq, qp };
}

/** Client side up to ROUTE_RESOLVED: rxe0 → rxe1 over IPv4 by default. */
export async function resolve(
  ch: CmEventChannel,
  port: number,
  o: { ps?: number; src?: string; dst?: string } = {},
): Promise<CmId> {
  const id = createId(ch, o.ps ?? RDMA_PS_TCP);
  id.resolveAddr({ addr: o.src ?? RXE0_IP, port: 0 }, { addr: o.dst ?? RXE1_IP, port }, 2000);
  (await expectEvent(ch, RDMA_CM_EVENT_ADDR_RESOLVED)).ack();
  id.resolveRoute(2000);
  (await expectEvent(ch, RDMA_CM_EVENT_ROUTE_RESOLVED)).ack();
  return id;
}

/** A listening id on `addr:port`. */
export function listen(ch: CmEventChannel, port: number, o: { ps?: number; addr?: string } = {}): CmId {
  const id = createId(ch, o.ps ?? RDMA_PS_TCP);
  id.bindAddr({ addr: o.addr ?? RXE1_IP, port });
  id.listen(8);
  return id;
}

export const PARAM: ConnParam = { responder_resources: 1, initiator_depth: 1, retry_count: 7, rnr_retry_count: 7 };

/** Server on rxe1 and client on rxe0, connected (RC) or resolved through SIDR (UD), events acknowledged. */
export async function connectPair(
  s: Scope,
  o: { ps?: number; clientParam?: ConnParam; serverParam?: ConnParam } = {},
): Promise<{ sch: CmEventChannel; cch: CmEventChannel; listener: CmId; server: CmEnd; client: CmEnd; port: number }> {
  const ps = o.ps ?? RDMA_PS_TCP;
  const qpType: number = ps === RDMA_PS_TCP ? IBV_QPT_RC : IBV_QPT_UD;
  const sch = channel(s);
  const cch = channel(s);
  const port = freshPort();
  const listener = listen(sch, port, { ps });
  const cid = await resolve(cch, port, { ps });
  const client = createCmQp(s, cid, qpType);
  cid.connect(o.clientParam ?? PARAM);
  const req = await expectEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
  const server = createCmQp(s, req.id, qpType);
  req.ack();
  req.id.accept(o.serverParam ?? PARAM);
  (await expectEvent(cch, RDMA_CM_EVENT_ESTABLISHED)).ack();
  if (ps === RDMA_PS_TCP) (await expectEvent(sch, RDMA_CM_EVENT_ESTABLISHED)).ack();
  return { sch, cch, listener, server, client, port };
}
