import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IBV_QPT_RC } from "../../verbs/constants.js";
import type { BackendStatus, EventName } from "../bridge/contract.js";
import { decodeValue, encodeValue, type WireValue } from "../session/wire.js";
import { importTranscript } from "../session/transcript.js";
import type { Ref } from "../session/wire.js";
import { forkSpawner } from "./spawn-node.js";
import { BackendSupervisor } from "./supervisor.js";

/** The real backend process (entry.ts through tsx) on the simulator, killed with SIGKILL mid-run. */
describe("backend supervisor", () => {
  let dataDir: string;
  let sup: BackendSupervisor;
  const events: { event: EventName; payload: unknown }[] = [];

  async function call<T = unknown>(method: string, params: unknown): Promise<T> {
    const env = await sup.request(method, encodeValue(params));
    if (!env.ok) throw Object.assign(new Error(env.error.message), env.error);
    return decodeValue(env.result) as T;
  }
  const verb = async (handle: number, method: string, ...args: unknown[]) =>
    (await call<{ value: unknown }>("verbs.call", { handle, method, args })).value;

  function waitForBackend(kind: string): Promise<BackendStatus> {
    return new Promise((resolve) => {
      const off = sup.onEvent((event, payload) => {
        const p = decodeValue(payload) as BackendStatus & { event: string };
        if (event === "backend" && p.event === kind) {
          off();
          resolve(p);
        }
      });
    });
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "verbslab-sup-"));
    sup = new BackendSupervisor({
      spawn: forkSpawner(),
      init: { backend: "sim", seed: 7, dataDir },
      restartDelaysMs: [0],
    });
    sup.onEvent((event, payload: WireValue) => events.push({ event, payload: decodeValue(payload) }));
    await sup.start();
  }, 60_000);
  afterAll(async () => {
    await sup?.stop();
  });

  it("runs verbs in the backend process and records them in the transcript file", async () => {
    const status = sup.status();
    expect(status.state).toBe("running");
    expect(status.kind).toBe("sim");
    expect(status.pid).toBeGreaterThan(0);
    expect(status.pid).not.toBe(process.pid);

    const { runId } = await call<{ runId: string }>("run.start", { stepping: false, program: "supervisor test" });
    const ctx = (await verb(0, "openDevice", "rxe0")) as Ref;
    expect(ctx.type).toBe("context");
    const pd = (await verb(ctx.$handle, "allocPd")) as Ref;
    const cq = (await verb(ctx.$handle, "createCq", 16)) as Ref;
    expect(cq.props?.cqe).toBeGreaterThanOrEqual(16);
    const qp = (await verb(pd.$handle, "createQp", {
      send_cq: cq,
      recv_cq: cq,
      cap: { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
      qp_type: IBV_QPT_RC,
    })) as Ref;
    expect(qp.type).toBe("qp");
    // A verb that fails comes back as the VerbsError a learner would see.
    const err = (await verb(qp.$handle, "modify", { qp_state: 3 }, 1).catch((e: unknown) => e)) as {
      name: string;
      code: string;
    };
    expect(err.name).toBe("VerbsError");
    expect(err.code).toBe("EINVAL");
    await call("run.end", { runId, ok: true });

    const file = sup.status().transcriptPath!;
    const t = importTranscript(readFileSync(file, "utf8"));
    expect(t.header.backend).toBe("sim");
    expect(t.events.map((e) => (e.kind === "verb" ? e.verb : e.kind))).toEqual([
      "ibv_open_device",
      "ibv_alloc_pd",
      "ibv_create_cq",
      "ibv_create_qp",
      "ibv_modify_qp",
      "end",
    ]);
    expect(events.some((e) => e.event === "transcript")).toBe(true);
  }, 60_000);

  it("restarts a killed backend, answers the call it was holding, and keeps the transcript intact", async () => {
    const { runId } = await call<{ runId: string }>("run.start", { stepping: true, program: "killed run" });
    const file = sup.status().transcriptPath!;
    const firstPid = sup.status().pid!;

    // Step through two verbs, then leave a third waiting at the gate.
    const open = verb(0, "openDevice", "rxe1");
    await waitForGate();
    await call("gate.step", {});
    const ctx = (await open) as Ref;
    const pdCall = verb(ctx.$handle, "allocPd");
    await waitForGate();
    await call("gate.step", {});
    await pdCall;
    const held = verb(ctx.$handle, "createCq", 8).then(
      () => "answered",
      (e: { name: string }) => e.name,
    );
    await waitForGate();
    const before = readFileSync(file, "utf8");
    expect(importTranscript(before).events).toHaveLength(2);

    const died = waitForBackend("died");
    const restarted = waitForBackend("restarted");
    process.kill(firstPid, "SIGKILL");
    const d = await died;
    expect(d.lastExit?.signal).toBe("SIGKILL");
    expect(await held).toBe("BackendDiedError");
    const r = await restarted;
    expect(r.state).toBe("running");
    expect(r.restarts).toBe(1);
    expect(r.pid).not.toBe(firstPid);
    expect(r.transcriptPath).toBe(file);

    // What was written is there byte for byte; one line says how the run ended.
    const after = readFileSync(file, "utf8");
    expect(after.startsWith(before)).toBe(true);
    const t = importTranscript(after);
    expect(t.events).toHaveLength(3);
    const end = t.events[2]!;
    expect(end.kind).toBe("end");
    expect(end.kind === "end" && end.outcome).toBe("error");
    expect(end.kind === "end" && end.error?.name).toBe("BackendDiedError");

    // The new process serves the re-opened transcript.
    const got = await call<{ events: { seq: number }[] }>("transcript.get", {});
    expect(got.events.map((e) => e.seq)).toEqual([1, 2, 3]);

    // The old run is gone; a new one works in a new transcript, and the old file is left alone.
    await expect(call("run.end", { runId, ok: true })).rejects.toMatchObject({ name: "NoSuchRunError" });
    const next = await call<{ runId: string }>("run.start", { stepping: false });
    const dev = (await verb(0, "openDevice", "rxe0")) as Ref;
    expect(dev.type).toBe("context");
    await call("run.end", { runId: next.runId, ok: true });
    expect(sup.status().transcriptPath).not.toBe(file);
    expect(readFileSync(file, "utf8")).toBe(after);
  }, 90_000);

  function waitForGate(): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no verb reached the gate")), 20_000);
      const check = async () => {
        const g = await call<{ pending: unknown }>("gate.state", {});
        if (g.pending) {
          clearTimeout(timer);
          resolve();
        } else setTimeout(check, 20);
      };
      void check();
    });
  }
});

/** A backend process that stops answering (here: frozen with SIGSTOP, as a verb that never returns would hold it). */
describe("backend supervisor liveness", () => {
  let sup: BackendSupervisor;
  afterAll(async () => {
    await sup?.stop();
  });

  it("kills and restarts a process that leaves its liveness check unanswered; the transcript says so", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "verbslab-hung-"));
    sup = new BackendSupervisor({
      spawn: forkSpawner(),
      init: { backend: "sim", seed: 3, dataDir },
      restartDelaysMs: [0],
      pingIntervalMs: 100,
      unresponsiveMs: 1500,
    });
    await sup.start();
    const call = async (method: string, params: unknown) => {
      const env = await sup.request(method, encodeValue(params));
      if (!env.ok) throw Object.assign(new Error(env.error.message), env.error);
      return decodeValue(env.result) as Record<string, unknown>;
    };
    const { runId } = await call("run.start", { stepping: false, program: "hung run" });
    await call("verbs.call", { handle: 0, method: "openDevice", args: ["rxe0"] });
    // Idle but alive: pings are answered, nothing is restarted.
    await new Promise((r) => setTimeout(r, 2000));
    expect(sup.status().restarts).toBe(0);
    const file = sup.status().transcriptPath!;
    const pid = sup.status().pid!;

    const restarted = new Promise<BackendStatus>((resolve) =>
      sup.onEvent((event, payload) => {
        const p = decodeValue(payload) as BackendStatus & { event: string };
        if (event === "backend" && p.event === "restarted") resolve(p);
      }),
    );
    process.kill(pid, "SIGSTOP");
    // Stop is pressed while it hangs: the answer comes once the process was replaced.
    const stop = sup.request("session.stop", encodeValue({}));
    const r = await restarted;
    expect(r.pid).not.toBe(pid);
    expect(r.lastExit?.signal).toBe("SIGKILL");
    expect(r.lastExit?.reason).toContain("stopped answering");
    expect((await stop).ok).toBe(false);
    const end = importTranscript(readFileSync(file, "utf8")).events.at(-1)!;
    expect(end).toMatchObject({ kind: "end", outcome: "error", error: { name: "BackendDiedError" } });
    expect(end.kind === "end" && end.error?.message).toContain("stopped answering");
    await expect(call("run.end", { runId, ok: true })).rejects.toMatchObject({ name: "NoSuchRunError" });
  }, 60_000);
});
