/**
 * Finalizers and memory (VM only), in a child `node --expose-gc` so collections are real:
 * registered JS memory stays alive while registered, is deregistered before V8 may free
 * it (the NIC then refuses the old rkey instead of writing into freed memory), and a whole
 * dropped object graph is torn down child-first by the finalizers.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { IBV_WC_REM_ACCESS_ERR, IBV_WC_SUCCESS } from "../../verbs/constants.js";
import { announceSkip } from "./native-env.js";

const skip = announceSkip("native/test/gc.test.ts");

describe.skipIf(skip)("native finalizers (--expose-gc child)", () => {
  it("keeps registered memory alive, deregisters before it is freed, tears dropped graphs down", () => {
    const child = fileURLToPath(new URL("./gc-child.ts", import.meta.url));
    const r = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", child], {
      encoding: "utf8",
      timeout: 240_000,
    });
    expect(r.status, `child failed (signal ${r.signal}):\n${r.stderr}`).toBe(0);
    const line = r.stdout.trim().split("\n").pop()!;
    const seen = JSON.parse(line) as Record<string, unknown>;
    expect(seen.aliveWhileRegistered).toBe(true);
    expect(seen.firstStatus).toBe(IBV_WC_SUCCESS);
    expect(seen.landed).toEqual([0xab, 0xab, 0xab, 0xab]);
    expect(seen.collectedAfterDrop).toBe(true);
    expect(seen.secondStatus).toBe(IBV_WC_REM_ACCESS_ERR);
    expect(seen.listedBefore).toBe(true);
    expect(seen.listedAfter).toBe(false);
  }, 300_000);
});
