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

function service() {
  const events: { event: EventName; payload: unknown }[] = [];
  const sessions: string[] = [];
  const svc = createBackendService(
    { backend: "sim", seed: 3, dataDir: mkdtempSync(join(tmpdir(), "verbslab-svc-")) },
    {
      provider: {
        sim: (seed) => createSimBackend(seed === undefined ? {} : { seed }),
        native: async () => ({ unavailable: "no RDMA in this test" }),
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
    }
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
