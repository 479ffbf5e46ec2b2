/**
 * Interop (VM only): the native backend against an unmodified `ibv_rc_pingpong`, as its
 * client and as its server, over rxe0 ↔ rxe1 with link-local GIDs (-g 0).
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { runPingpong } from "../pingpong-peer.js";
import { B, announceSkip } from "./native-env.js";

const skip = announceSkip("native/test/pingpong.test.ts");
const ITERS = 20;

function pingpong(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn("ibv_rc_pingpong", args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.on("close", (code) => resolve({ code, out }));
  });
}

describe.skipIf(skip)("ibv_rc_pingpong interop", () => {
  it("as the client of an ibv_rc_pingpong server", async () => {
    const server = pingpong(["-d", "rxe1", "-g", "0", "-n", String(ITERS), "-p", "18515"]);
    const r = await runPingpong(B(), { device: "rxe0", gidIndex: 0, host: "127.0.0.1", port: 18515, iters: ITERS });
    const c = await server;
    expect(c.code, c.out).toBe(0);
    expect(c.out).toContain(`remote address: LID 0x0000, QPN 0x${r.local.qpn.toString(16).padStart(6, "0")}`);
    expect(c.out).toContain(`${ITERS} iters in`);
    expect(r.remote.gid).toMatch(/^fe80:/);
    expect(r.lastReceived.length).toBe(4096);
    expect(r.lastReceived.every((x) => x === 0x7b)).toBe(true);
  }, 120_000);

  it("as the server of an ibv_rc_pingpong client", async () => {
    let client: Promise<{ code: number | null; out: string }> | undefined;
    const r = await runPingpong(B(), {
      device: "rxe0",
      gidIndex: 0,
      port: 18516,
      iters: ITERS,
      onListening: () => {
        client = pingpong(["-d", "rxe1", "-g", "0", "-n", String(ITERS), "-p", "18516", "127.0.0.1"]);
      },
    });
    const c = await client!;
    expect(c.code, c.out).toBe(0);
    expect(c.out).toContain(`remote address: LID 0x0000, QPN 0x${r.local.qpn.toString(16).padStart(6, "0")}`);
    expect(r.iters).toBe(ITERS);
    expect(r.lastReceived.every((x) => x === 0x7b)).toBe(true);
  }, 120_000);
});
