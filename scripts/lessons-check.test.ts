/**
 * `npm run lessons:check -- --backend native` where there is no RDMA device: a visible skip
 * (exit 0) on a developer machine, a failure inside the lab VM (VERBSLAB_IN_RXE_VM=1), where
 * `npm run test:rxe` relies on it.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { loadNativeBackend } from "../native/index.js";

const native = loadNativeBackend();
const script = new URL("./lessons-check.ts", import.meta.url).pathname;

async function check(env: Record<string, string | undefined>): Promise<{ code: number; stdout: string }> {
  const tsx = import.meta.resolve("tsx");
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", tsx, script, "--backend", "native"], {
      env: { ...process.env, ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout };
  } catch (e) {
    const err = e as { code?: number; stdout?: string };
    return { code: err.code ?? -1, stdout: err.stdout ?? "" };
  }
}

describe.skipIf(!("unavailable" in native))("lessons:check --backend native without an RDMA device", () => {
  const reason = "unavailable" in native ? native.unavailable : "";

  it("says it skipped and why, runs no replay, and exits 0", async () => {
    const r = await check({ VERBSLAB_IN_RXE_VM: undefined });
    expect(r.stdout).toContain(`skipped: no native backend (${reason}); 0 replays run`);
    expect(r.stdout).not.toContain("replays passed");
    expect(r.code).toBe(0);
  });

  it("inside the lab VM (VERBSLAB_IN_RXE_VM=1) it is a failure, so test:rxe fails", async () => {
    const r = await check({ VERBSLAB_IN_RXE_VM: "1" });
    expect(r.stdout).toContain("skipped: no native backend");
    expect(r.code).toBe(1);
  });
});
