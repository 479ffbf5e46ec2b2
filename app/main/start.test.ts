/**
 * `npm start` in web mode stops whole however it is stopped: a SIGTERM or a SIGKILL of npm
 * itself, or a SIGTERM of the app's own process. Nothing it started (the app, the backend
 * process, tsx's helpers) may outlive it.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "./build.js";

/** Every live descendant of pid, from /proc (ppid is the 4th field of /proc/<pid>/stat). */
function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // Gone while we looked.
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of parentOf)
      if (parent === p) {
        out.push(child);
        walk(child);
      }
  };
  walk(pid);
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts `npm start -- --web --backend sim`; resolves once the URL is printed, with npm's tree. */
async function startApp(): Promise<{ npm: number; tree: number[] }> {
  const child = spawn("npm", ["start", "--", "--web", "--backend", "sim"], {
    cwd: REPO_ROOT,
    env: { ...process.env, VERBSLAB_DATA_DIR: mkdtempSync(join(tmpdir(), "verbslab-start-")) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("?token=")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`npm start exited (${code}) before printing its URL:\n${out}`)));
  });
  const tree = descendants(child.pid!);
  return { npm: child.pid!, tree };
}

async function allGone(pids: number[], ms = 15_000): Promise<number[]> {
  const end = Date.now() + ms;
  while (Date.now() < end && pids.some(alive)) await new Promise((r) => setTimeout(r, 200));
  return pids.filter(alive);
}

describe("npm start (web mode) stops everything it started", () => {
  it.each(["SIGTERM", "SIGKILL"] as const)(
    "a %s of npm leaves no process behind",
    async (signal) => {
      const { npm, tree } = await startApp();
      // The app and its backend process at least.
      expect(tree.length).toBeGreaterThanOrEqual(2);
      process.kill(npm, signal);
      expect(await allGone([npm, ...tree])).toEqual([]);
    },
    120_000,
  );

  it("a SIGTERM of the app's own process leaves no process behind", async () => {
    const { npm, tree } = await startApp();
    const app = tree.find((p) => readFileSync(`/proc/${p}/cmdline`, "utf8").includes("app/main/start.ts"));
    expect(app).toBeDefined();
    process.kill(app!, "SIGTERM");
    expect(await allGone([npm, ...tree])).toEqual([]);
  }, 120_000);
});
