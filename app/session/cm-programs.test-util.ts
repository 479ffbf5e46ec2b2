/**
 * rdma_cm programs for the renderer's CM pane tests, run on the simulator through a session: a client on
 * rxe0 connects to a listener on rxe1 and both disconnect (every event of lesson 17,
 * then DISCONNECTED on both sides), and lesson 18's server that rejects with private data.
 */
import { createSimBackend } from "../../sim/index.js";
import { createSession } from "./session.js";
import type { TranscriptEvent } from "./transcript.js";
import type { Verbs, VerbsCmChannel, VerbsCmEvent } from "./verbs-api.js";
import {
  IBV_QPT_RC,
  RDMA_CM_EVENT_ADDR_RESOLVED,
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_DISCONNECTED,
  RDMA_CM_EVENT_ESTABLISHED,
  RDMA_CM_EVENT_ROUTE_RESOLVED,
  RDMA_PS_TCP,
  rdmaEventStr,
} from "../../verbs/index.js";
import lesson18 from "../../lessons/18-when-rdma-cm-says-no/step-1.solution.js";

const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };

async function expectEvent(ch: VerbsCmChannel, type: number): Promise<VerbsCmEvent> {
  const e = await ch.getEvent(2000);
  if (e?.event !== type) throw new Error(`expected ${rdmaEventStr(type)}, got ${e ? rdmaEventStr(e.event) : "none"}`);
  return e;
}

/** Listen, connect, accept, ESTABLISHED on both sides, then the client disconnects. */
export async function connectAndDisconnect(verbs: Verbs): Promise<void> {
  const serverCh = await verbs.cm.createEventChannel();
  const listener = await serverCh.createId(RDMA_PS_TCP);
  await listener.bindAddr({ addr: "10.77.0.2", port: 7471 });
  await listener.listen(8);
  const clientCh = await verbs.cm.createEventChannel();
  const client = await clientCh.createId(RDMA_PS_TCP);
  await client.resolveAddr({ addr: "10.77.0.1", port: 0 }, { addr: "10.77.0.2", port: 7471 }, 2000);
  await (await expectEvent(clientCh, RDMA_CM_EVENT_ADDR_RESOLVED)).ack();
  await client.resolveRoute(2000);
  await (await expectEvent(clientCh, RDMA_CM_EVENT_ROUTE_RESOLVED)).ack();
  const cpd = await client.verbs!.allocPd();
  const ccq = await client.verbs!.createCq(8);
  await client.createQp(cpd, { send_cq: ccq, recv_cq: ccq, qp_type: IBV_QPT_RC, cap });
  await client.connect({ responder_resources: 1, initiator_depth: 1, retry_count: 7, rnr_retry_count: 7 });
  const req = await expectEvent(serverCh, RDMA_CM_EVENT_CONNECT_REQUEST);
  await req.ack();
  const spd = await req.id.verbs!.allocPd();
  const scq = await req.id.verbs!.createCq(8);
  await req.id.createQp(spd, { send_cq: scq, recv_cq: scq, qp_type: IBV_QPT_RC, cap });
  await req.id.accept({ responder_resources: 1, initiator_depth: 1, rnr_retry_count: 7 });
  await (await expectEvent(clientCh, RDMA_CM_EVENT_ESTABLISHED)).ack();
  await (await expectEvent(serverCh, RDMA_CM_EVENT_ESTABLISHED)).ack();
  // As on rxe: the peer hears DISCONNECTED at once, the side that began it once the peer disconnects too.
  await client.disconnect();
  await (await expectEvent(serverCh, RDMA_CM_EVENT_DISCONNECTED)).ack();
  await req.id.disconnect();
  await (await expectEvent(clientCh, RDMA_CM_EVENT_DISCONNECTED)).ack();
}

/** The transcript events of a program run on a fresh simulator session. */
export async function eventsOf(program: (verbs: Verbs) => Promise<void>): Promise<TranscriptEvent[]> {
  const s = createSession({ backend: createSimBackend({ seed: 3 }) });
  const r = await s.run(program);
  if (r.outcome !== "ok") throw r.error;
  const events = s.events();
  s.release();
  return events;
}

/** Lesson 18's reference solution: the server rejects with "busy, try later". */
export const rejectWithPrivateData = lesson18 as unknown as (verbs: Verbs) => Promise<void>;
