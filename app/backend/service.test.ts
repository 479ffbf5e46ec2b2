/**
 * The backend service in-process (no child process): a lesson's reference solution runs
 * through `verbs.call` exactly as the renderer's worker sends it, then the step's checks,
 * every export, and an import + replay.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../sim/index.js";
import { LESSONS_DIR } from "../../lessons/load.js";
import type { BridgeEvents, EventName, RequestResults } from "../bridge/contract.js";
import { createVerbsFacade } from "../session/facade.js";
import type { Verbs } from "../session/verbs-api.js";
import { createBackendService } from "./service.js";
import type { VerbsBackend } from "../../verbs/backend.js";
import { IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE, IBV_WR_SEND } from "../../verbs/constants.js";
import { PACKETS_PER_SNAPSHOT, type StateSnapshot } from "../bridge/contract.js";
import { createSnapshotFolder } from "../bridge/snapshot.js";
import { loopback } from "../renderer/src/model/traffic.test-util.js";

function service(native?: () => VerbsBackend) {
  const events: { event: EventName; payload: unknown }[] = [];
  const sessions: string[] = [];
  const svc = createBackendService(
    { backend: "sim", seed: 3, dataDir: mkdtempSync(join(tmpdir(), "verbslab-svc-")) },
    {
      provider: {
        sim: (seed) => createSimBackend(seed === undefined ? {} : { seed }),
        native: async () => (native ? { backend: native() } : { unavailable: "no RDMA in this test" }),
      },
      emit: <E extends EventName>(event: E, payload: BridgeEvents[E]) => events.push({ event, payload }),
      sessionChanged: (info) => sessions.push(info.transcriptPath),
    },
  );
  const ask = <M extends keyof RequestResults>(method: M, params: unknown) =>
    svc.handle(method, params) as Promise<RequestResults[M]>;
  return { svc, ask, events, sessions };
}

describe("backend service", () => {
  it("runs a lesson solution through verbs.call, and the step's checks pass", async () => {
    const { svc, ask, events, sessions } = service();
    await svc.start();
    const { lessons } = await ask("lessons.list", {});
    expect(lessons.length).toBeGreaterThanOrEqual(5);
    const first = lessons.find((l) => l.order === 1)!;
    const { lesson } = await ask("lessons.load", { id: first.id });
    const step = lesson.steps[0]!;

    const { runId } = await ask("run.start", { stepping: false, program: `${lesson.id} step 1` });
    // The worker's CallSurface: every verb becomes one verbs.call request.
    const verbs: Verbs = createVerbsFacade(
      { call: async (handle, method, args) => (await ask("verbs.call", { handle, method, args })).value },
      "sim",
    );
    const program = (await import(pathToFileURL(join(LESSONS_DIR, lesson.folder, step.files.solution)).href)) as {
      default: (v: Verbs) => Promise<unknown>;
    };
    await program.default(verbs);
    expect(await ask("run.end", { runId, ok: true })).toEqual({ outcome: "ok" });

    const verdict = await ask("lessons.check", { lessonId: lesson.id, step: 1 });
    expect(verdict.results.length).toBeGreaterThan(0);
    expect(verdict.passed, JSON.stringify(verdict.results.filter((r) => !r.passed))).toBe(true);

    // Events streamed as it ran, and the file holds the same transcript.
    const streamed = events.filter((e) => e.event === "transcript").length;
    const { events: recorded } = await ask("transcript.get", {});
    expect(streamed).toBe(recorded.length);
    expect(readFileSync(sessions.at(-1)!, "utf8").trim().split("\n")).toHaveLength(recorded.length + 1);
    expect(events.some((e) => e.event === "snapshot")).toBe(true);
  }, 60_000);

  it("fails a step's checks for a run that does nothing, and says which", async () => {
    const { svc, ask } = service();
    await svc.start();
    const { lessons } = await ask("lessons.list", {});
    const first = lessons.find((l) => l.order === 1)!;
    const { runId } = await ask("run.start", { stepping: false });
    await ask("run.end", { runId, ok: true });
    const verdict = await ask("lessons.check", { lessonId: first.id, step: 1 });
    expect(verdict.passed).toBe(false);
    expect(verdict.results.some((r) => !r.passed)).toBe(true);
  });

  it("records a failing verb and a program error, exports all four formats, and replays an import", async () => {
    const { svc, ask } = service();
    await svc.start();
    const { runId } = await ask("run.start", { stepping: false, program: "export test" });
    const ctx = (await ask("verbs.call", { handle: 0, method: "openDevice", args: ["rxe0"] })).value as {
      $handle: number;
    };
    const err = await ask("verbs.call", { handle: ctx.$handle, method: "queryPort", args: [2] }).catch(
      (e: { code?: string }) => e,
    );
    expect((err as { code?: string }).code).toBe("EINVAL");
    await ask("run.end", { runId, ok: false, error: { name: "Error", message: "gave up" } });

    for (const format of ["md", "html", "json", "c"] as const) {
      const out = await ask("transcript.export", { format });
      expect(out.filename.endsWith(`.${format}`)).toBe(true);
      expect(out.content.length).toBeGreaterThan(50);
      expect(out.content).toContain("rxe0");
      // The downloaded C file's build line names the file it is saved as.
      if (format === "c") expect(out.content).toContain(`cc ${out.filename} -libverbs`);
    }
    // The packets: binary, as base64 (this program sent none: a pcap header and no frame).
    const pcap = await ask("transcript.export", { format: "pcap" });
    expect(pcap.filename.endsWith(".pcap")).toBe(true);
    expect(pcap.encoding).toBe("base64");
    const bytes = Buffer.from(pcap.content, "base64");
    expect([bytes.length, bytes.readUInt32LE(0), bytes.readUInt32LE(20)]).toEqual([24, 0xa1b2c3d4, 1]);
    const json = (await ask("transcript.export", { format: "json" })).content;
    const imported = await ask("transcript.import", { content: json });
    expect(imported.events.map((e) => e.kind)).toEqual(["verb", "verb", "end"]);

    const replay = await ask("transcript.replay", {});
    expect(replay.events).toBe(3);
    expect(replay.divergences).toEqual([]);
    const after = await ask("transcript.get", {});
    expect(after.events).toHaveLength(3);
  });

  it("refuses native with the reason, and a second run while one is going", async () => {
    const { svc, ask } = service();
    await svc.start();
    const list = await ask("backend.list", {});
    expect(list.backends.find((b) => b.kind === "native")).toMatchObject({
      available: false,
      unavailableReason: "no RDMA in this test",
    });
    await expect(ask("backend.choose", { kind: "native" })).rejects.toMatchObject({ name: "BackendUnavailableError" });
    await ask("run.start", { stepping: false });
    await expect(ask("run.start", { stepping: false })).rejects.toMatchObject({ name: "RunInProgressError" });
  });
});

describe("snapshots: packets, MR bytes and counters", () => {
  /** A program through verbs.call: a 2500-byte RDMA WRITE (three packets at MTU 1024), then a SEND. */
  async function writeThenSend(ask: ReturnType<typeof service>["ask"], writeBytes = 2500) {
    const verbs: Verbs = createVerbsFacade(
      { call: async (handle, method, args) => (await ask("verbs.call", { handle, method, args })).value },
      "sim",
    );
    const { cq, mr, a, b } = await loopback(verbs);
    await mr.write(0, "hello, rdma");
    await a.postSend({
      wr_id: 1,
      opcode: IBV_WR_RDMA_WRITE,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [mr.sge(0, writeBytes)],
      rdma: { remote_addr: mr.addr + 4096, rkey: mr.rkey },
    });
    await b.postRecv({ wr_id: 2, sg_list: [mr.sge(7168, 1024)] });
    await a.postSend({ wr_id: 3, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 16)] });
    return cq.pollWait(3, 100);
  }

  it("sends each packet once, tagged with its verb's event, and the folded picture matches state.snapshot", async () => {
    const { svc, ask, events } = service();
    await svc.start();
    const { runId } = await ask("run.start", { stepping: false });
    await writeThenSend(ask);
    await ask("run.end", { runId, ok: true });

    const snaps = events.filter((e) => e.event === "snapshot").map((e) => e.payload as StateSnapshot);
    expect(snaps[0]!.delta).toBeUndefined(); // a session's first snapshot is whole
    expect(snaps.slice(1).every((x) => x.delta)).toBe(true);
    const sent = snaps.flatMap((x) => x.packets?.records ?? []);
    expect(sent.map((p) => p.seq)).toEqual(sent.map((_, i) => i)); // each once, in order

    const { events: transcript } = await ask("transcript.get", {});
    const postSends = transcript.filter((e) => e.kind === "verb" && e.method === "postSend").map((e) => e.seq);
    expect(sent.map((p) => [p.opcode, p.psn, p.at])).toEqual([
      ["RC_RDMA_WRITE_FIRST", 0, postSends[0]],
      ["RC_RDMA_WRITE_MIDDLE", 1, postSends[0]],
      ["RC_RDMA_WRITE_LAST", 2, postSends[0]],
      ["RC_ACKNOWLEDGE", 2, postSends[0]],
      ["RC_SEND_ONLY", 3, postSends[1]],
      ["RC_ACKNOWLEDGE", 3, postSends[1]],
    ]);
    expect(sent[0]).toMatchObject({ src: "rxe0", dst: "rxe0", len: 1024, wr_id: 1, reth: { len: 2500 } });
    expect(sent[3]!.aeth).toMatchObject({ text: "ACK" });

    // MR bytes go only when they change: after mr.write and after the WRITE and SEND landed.
    const withBytes = snaps.map((x, i) => (x.mrBytes?.length ? i : -1)).filter((i) => i >= 0);
    expect(withBytes.length).toBeLessThanOrEqual(4);
    expect(snaps.every((x) => (x.mrBytes ?? []).every((m) => m.bytes.length <= 256))).toBe(true);
    // Counters: whole at first, then only when traffic moved them.
    expect(snaps[0]!.counters!.map((c) => c.device)).toEqual(["rxe0"]);
    expect(snaps.filter((x) => x.counters?.length).length).toBeLessThan(snaps.length / 2);

    const folder = createSnapshotFolder();
    let folded: StateSnapshot | undefined;
    for (const x of snaps) folded = folder.fold(x);
    const whole = (await ask("state.snapshot", {}))!;
    expect(folded!.packets).toEqual(whole.packets);
    expect(folded!.mrBytes).toEqual(whole.mrBytes);
    expect(folded!.counters).toEqual(whole.counters);
    expect(whole.counters![0]!.counters.sent_pkts).toBe(6);
    expect(new TextDecoder().decode(whole.mrBytes![0]!.bytes.subarray(0, 11))).toBe("hello, rdma");
  });

  it("caps a long burst per snapshot, keeping its first and last packets", async () => {
    const { svc, ask, events } = service();
    await svc.start();
    const { runId } = await ask("run.start", { stepping: false });
    const verbs: Verbs = createVerbsFacade(
      { call: async (handle, method, args) => (await ask("verbs.call", { handle, method, args })).value },
      "sim",
    );
    const { mr, a } = await loopback(verbs);
    const big = await mr.pd.regMr(1 << 20, 1 | 2);
    await a.postSend({
      wr_id: 7,
      opcode: IBV_WR_RDMA_WRITE,
      sg_list: [big.sge(0, 1 << 20)],
      rdma: { remote_addr: big.addr, rkey: big.rkey },
    });
    await ask("run.end", { runId, ok: true });
    const last = events.filter((e) => e.event === "snapshot").at(-1)!.payload as StateSnapshot;
    const records = last.packets!.records;
    expect(records).toHaveLength(PACKETS_PER_SNAPSHOT);
    expect(records[0]!.opcode).toBe("RC_RDMA_WRITE_FIRST");
    expect(records.some((p) => p.opcode === "RC_RDMA_WRITE_LAST")).toBe(true);
    expect(records.at(-1)!.seq - records[0]!.seq + 1).toBeGreaterThan(1024); // the gap is in seq
  });

  it("says packets are not observable on a backend without the packet-log capability (native)", async () => {
    // A stand-in for native: the simulator's verbs, without its packetLog.
    const { svc, ask, events } = service(() => {
      const sim = createSimBackend({ seed: 3 });
      const native: VerbsBackend = {
        kind: "native",
        getDeviceList: () => sim.getDeviceList(),
        openDevice: (name) => sim.openDevice(name),
        now: () => sim.now(),
        sleep: (ms) => sim.sleep(ms),
      };
      return native;
    });
    await svc.start();
    await ask("backend.choose", { kind: "native" });
    await ask("verbs.call", { handle: 0, method: "openDevice", args: ["rxe0"] });
    const snap = events.filter((e) => e.event === "snapshot").at(-1)!.payload as StateSnapshot;
    expect(snap.backend).toBe("native");
    expect(snap.packets).toEqual({ observable: false, records: [] });
  });

  it("shows the packets of any backend that has the packet-log capability, whatever its kind", async () => {
    const { svc, ask, events } = service(() => createSimBackend({ seed: 3 }));
    await svc.start();
    await ask("backend.choose", { kind: "native" });
    await ask("verbs.call", { handle: 0, method: "openDevice", args: ["rxe0"] });
    const snap = events.filter((e) => e.event === "snapshot").at(-1)!.payload as StateSnapshot;
    expect(snap.backend).toBe("native");
    expect(snap.packets?.observable).toBe(true);
  });
});
