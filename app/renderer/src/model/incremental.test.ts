/**
 * The incremental view builder (what useLabView uses) against buildView from scratch, on a
 * session recorded through the backend service exactly as the renderer's store receives it:
 * transcript events appended one at a time, snapshots folded from deltas, a gate holding the
 * next verb. Every intermediate view must be equal, and a view already handed out must not
 * change when later events are folded (React's memoised panes compare by reference).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../../../sim/index.js";
import { IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_STATE, IBV_SEND_SIGNALED, IBV_WR_SEND } from "../../../../verbs/constants.js";
import type { BridgeEvents, EventName, GateState, StateSnapshot } from "../../../bridge/contract.js";
import { createSnapshotFolder } from "../../../bridge/snapshot.js";
import { createBackendService } from "../../../backend/service.js";
import { createVerbsFacade } from "../../../session/facade.js";
import type { TranscriptEvent } from "../../../session/transcript.js";
import type { Verbs } from "../../../session/verbs-api.js";
import { buildView, createViewBuilder, foldEvent, type ViewBuilder, type ViewFold, type ViewInputs } from "./reduce.js";
import type { TranscriptRow } from "./view.js";
import { loopback } from "./traffic.test-util.js";

/** The store's states as a session runs: one per transcript or snapshot event. */
async function recordStates(): Promise<ViewInputs[]> {
  const emitted: { event: EventName; payload: unknown }[] = [];
  const svc = createBackendService(
    { backend: "sim", seed: 3, dataDir: mkdtempSync(join(tmpdir(), "verbslab-view-")) },
    {
      provider: {
        sim: (seed) => createSimBackend(seed === undefined ? {} : { seed }),
        native: async () => ({ unavailable: "no RDMA in this test" }),
      },
      emit: <E extends EventName>(event: E, payload: BridgeEvents[E]) => emitted.push({ event, payload }),
      sessionChanged: () => {},
    },
  );
  await svc.start();
  const { runId } = (await svc.handle("run.start", { stepping: false })) as { runId: string };
  const verbs: Verbs = createVerbsFacade(
    {
      call: async (handle, method, args) =>
        ((await svc.handle("verbs.call", { handle, method, args })) as { value: unknown }).value,
    },
    "sim",
  );
  const { ctx, cq, mr, a, b } = await loopback(verbs, { max_send_wr: 16, max_recv_wr: 16 });
  await ctx.queryPort(1);
  await verbs.log("sweep", [{ bytes: 64, gbps: 1.5 }]);
  for (let i = 0; i < 12; i++) {
    await mr.write(0, `message ${i}`);
    await b.postRecv({ wr_id: i, sg_list: [mr.sge(4096, 64)] });
    await a.postSend({
      wr_id: i,
      opcode: IBV_WR_SEND,
      send_flags: i % 3 ? IBV_SEND_SIGNALED : 0,
      sg_list: [mr.sge(0, 16)],
    });
    if (i % 3 === 2) await cq.pollWait(i === 2 ? 3 : 4, 1000);
  }
  // A modify the device refuses (RTS → RTR), then one it takes (RTS → RTS).
  await a.modify({ qp_state: IBV_QPS_RTR }, IBV_QP_STATE).catch(() => {});
  await a.modify({ qp_state: IBV_QPS_RTS }, IBV_QP_STATE).catch(() => {});
  await b.destroy().catch(() => {});
  await svc.handle("run.end", { runId, ok: true });

  const folder = createSnapshotFolder();
  const states: ViewInputs[] = [];
  let events: TranscriptEvent[] = [];
  let snapshot: StateSnapshot | null = null;
  let previousSnapshot: StateSnapshot | null = null;
  const verbEvents = emitted.filter((e) => e.event === "transcript").map((e) => e.payload as TranscriptEvent);
  for (const { event, payload } of emitted) {
    if (event === "transcript") events = [...events, payload as TranscriptEvent];
    else if (event === "snapshot") [previousSnapshot, snapshot] = [snapshot, folder.fold(payload)];
    else continue;
    // The gate holds the next verb, as when stepping (a modify's prediction reads it).
    const next = verbEvents[events.length];
    const gate: GateState | null =
      next?.kind === "verb"
        ? {
            mode: "step",
            stopped: false,
            pending: { seq: next.seq, verb: next.verb, target: next.target, method: next.method, args: next.args },
          }
        : null;
    states.push({ events, snapshot, previousSnapshot, gate });
  }
  return states;
}

/** Builds every state with `builder`, checking each against buildView and that earlier views stay as they were. */
function check(states: ViewInputs[], builder: ViewBuilder = createViewBuilder()) {
  const handedOut: { view: unknown; json: string }[] = [];
  for (const s of states) {
    const view = builder.build(s);
    expect(view).toEqual(buildView(s));
    if (s.gate?.pending) expect(builder.pausedBefore(s.gate.pending)).toEqual(buildView(s).pausedBefore);
    handedOut.push({ view, json: JSON.stringify(view) });
  }
  for (const h of handedOut) expect(JSON.stringify(h.view)).toBe(h.json);
}

describe("createViewBuilder", () => {
  it("folding events one at a time gives the view built from scratch, at every step of a session", async () => {
    const states = await recordStates();
    expect(states.length).toBeGreaterThan(60);
    const last = buildView(states.at(-1)!);
    // The session touched what the panes show: completions, MR bytes, packets, an error, a sweep point.
    expect(last.cqs[0]!.entries.length).toBeGreaterThan(8);
    expect(last.mrs[0]!.bytes).toBeDefined();
    expect(last.packets.rows.some((r) => r.kind === "packet")).toBe(true);
    expect(last.transcript.some((r) => r.outcome !== "ok")).toBe(true);
    expect(last.sweep).toHaveLength(1);
    check(states);
  }, 60_000);

  it("starts over when the events are not an extension of the last build (reset, import, resync)", async () => {
    const states = await recordStates();
    const builder = createViewBuilder();
    const mid = states[Math.floor(states.length / 2)]!;
    expect(builder.build(mid)).toEqual(buildView(mid));
    // A reset: no events; then a different (shorter) list, then a copy of the list (same events, new array).
    for (const s of [{ events: [] }, states[10]!, { ...mid, events: [...mid.events] }, states.at(-1)!])
      expect(builder.build(s)).toEqual(buildView(s));
    // The same events as new objects (a resync from transcript.get): not the objects folded before.
    const copied = { ...mid, events: mid.events.map((e) => ({ ...e })) };
    expect(builder.build(copied)).toEqual(buildView(copied));
  }, 60_000);

  it("catches a broken fold", async () => {
    const states = await recordStates();
    // Forgets completions after the first: the CQ pane and the queues' occupancy go stale.
    let seen = 0;
    const broken = (f: ViewFold, e: TranscriptEvent) =>
      foldEvent(f, e.kind === "verb" && e.completions?.length && seen++ ? { ...e, completions: [] } : e);
    expect(() => check(states, createViewBuilder(broken))).toThrow();
    // Hands out one array that grows in place: a view already rendered would change under React.
    const good = createViewBuilder();
    const grown: TranscriptRow[] = [];
    const aliasing: ViewBuilder = {
      build(s) {
        const v = good.build(s);
        grown.splice(0, grown.length, ...v.transcript);
        return { ...v, transcript: grown };
      },
      pausedBefore: (p) => good.pausedBefore(p),
    };
    expect(() => check(states, aliasing)).toThrow();
  }, 60_000);
});
