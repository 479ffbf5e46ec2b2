/**
 * `npm run bench:classroom [-- --learners 30 --lessons 6 --json]`: a classroom under load on
 * this machine. A real JupyterHub (the repo's config) spawns one VerbsLab server per learner;
 * each learner is a scripted client on its server's WebSocket (Hub token, the page's Origin)
 * that runs lessons 1–N's reference solutions step by step — run.start, every verb as
 * `verbs.call`, run.end, lessons.check — all learners at the same time, on the simulator.
 * Reports the verb round trip and the step (run + check) p50/p95, each learner server's
 * memory (its process and its backend process, RSS), and how long the instructor view
 * takes to answer while the class works and after. A benchmark, not a test: nothing fails.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import WebSocket from "ws";
import { createWebBridge, type SocketLike } from "../bridge/client-web.js";
import { createVerbsFacade } from "../session/facade.js";
import { loadCourse } from "../../lessons/load.js";
import { repoRoot, startTestHub } from "./test-hub.js";

const { values } = parseArgs({
  options: {
    learners: { type: "string", default: "30" },
    lessons: { type: "string", default: "6" },
    json: { type: "boolean", default: false },
  },
});
const N = Number(values.learners);
const LESSONS = Number(values.lessons);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};

/** RSS (kB) of every process, and who its parent is. */
function processes(): Map<number, { ppid: number; rssKb: number; env: string; cmd: string }> {
  const out = new Map<number, { ppid: number; rssKb: number; env: string; cmd: string }>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, "utf8");
      const ppid = Number(/PPid:\s+(\d+)/.exec(status)?.[1]);
      const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      const env = readFileSync(`/proc/${name}/environ`, "utf8");
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").replace(/\0/g, " ");
      out.set(Number(name), { ppid, rssKb, env, cmd });
    } catch {
      /* gone, or not ours to read */
    }
  }
  return out;
}

/** MB per learner server: the `serve --jupyterhub` process plus its descendants (the backend). */
function learnerMemoryMb(users: string[]): number[] {
  const procs = processes();
  const children = (pid: number): number[] =>
    [...procs].filter(([, p]) => p.ppid === pid).flatMap(([c]) => [c, ...children(c)]);
  return users.flatMap((u) => {
    const root = [...procs].find(
      ([, p]) => p.cmd.includes("serve --jupyterhub") && p.env.includes(`\0JUPYTERHUB_USER=${u}\0`),
    );
    if (!root) return [];
    const pids = [root[0], ...children(root[0])];
    return [pids.reduce((kb, pid) => kb + (procs.get(pid)?.rssKb ?? 0), 0) / 1024];
  });
}

async function main(): Promise<void> {
  const course = loadCourse();
  const lessons = course.lessons.slice(0, LESSONS);
  const users = Array.from({ length: N }, (_, i) => `learner${String(i + 1).padStart(2, "0")}`);
  const t0 = Date.now();
  const hub = await startTestHub({ learners: users, instructors: ["teacher"] });
  const report: Record<string, unknown> = { learners: N, lessons: lessons.map((l) => l.id) };
  try {
    // Spawn every server at once, as a class arriving does.
    const spawnStart = Date.now();
    await Promise.all(users.map((u) => hub.startServer(u)));
    report.spawnAllSeconds = (Date.now() - spawnStart) / 1000;
    const teacher = await hub.tokenFor("teacher");
    const instructorTimes: number[] = [];
    const askInstructor = async () => {
      const s = performance.now();
      const res = await fetch(`${hub.url}/services/instructor/api/learners`, {
        headers: { Authorization: `token ${teacher}` },
      });
      const rows = (await res.json()) as unknown[];
      instructorTimes.push(performance.now() - s);
      return rows.length;
    };
    const verbTimes: number[] = [];
    const stepTimes: number[] = [];
    let failures = 0;
    const failed = new Set<string>();
    let running = true;
    const poller = (async () => {
      while (running) {
        await askInstructor();
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();

    const programs = new Map<string, (verbs: unknown) => Promise<unknown>>();
    for (const l of lessons)
      for (const s of l.steps) {
        if (s.backends === "native") continue;
        const file = join(repoRoot, "lessons", l.folder, `step-${s.number}.solution.ts`);
        programs.set(
          `${l.id}/${s.number}`,
          ((await import(pathToFileURL(file).href)) as { default: (v: unknown) => Promise<unknown> }).default,
        );
      }

    const classStart = Date.now();
    await Promise.all(
      users.map(async (user) => {
        const token = await hub.tokenFor(user);
        const bridge = createWebBridge({
          pageUrl: `${hub.url}/user/${user}/`,
          makeSocket: (url) =>
            new WebSocket(url, {
              headers: { Authorization: `token ${token}`, Origin: hub.url },
            }) as unknown as SocketLike,
        });
        try {
          // As the page does on first load: a fresh simulator session for this learner.
          await bridge.request("session.start", { backend: "sim" });
          const verbs = createVerbsFacade(
            {
              async call(handle, method, args) {
                const s = performance.now();
                const { value } = (await bridge.request("verbs.call", { handle, method, args })) as { value: unknown };
                verbTimes.push(performance.now() - s);
                return value;
              },
            },
            "sim",
          );
          for (const l of lessons)
            for (const s of l.steps) {
              const program = programs.get(`${l.id}/${s.number}`);
              if (!program) continue;
              const started = performance.now();
              const { runId } = (await bridge.request("run.start", {
                stepping: false,
                program: `${l.id} step ${s.number}`,
              })) as {
                runId: string;
              };
              let ok = true;
              try {
                await program(verbs);
              } catch {
                ok = false;
              }
              await bridge.request("run.end", { runId, ok });
              const verdict = (await bridge.request("lessons.check", { lessonId: l.id, step: s.number })) as {
                passed: boolean;
                results: { passed: boolean; detail: string }[];
                unexpectedError?: { message: string };
              };
              stepTimes.push(performance.now() - started);
              if (!verdict.passed) {
                failures++;
                const why = verdict.unexpectedError?.message ?? verdict.results.find((r) => !r.passed)?.detail;
                failed.add(`${l.id} step ${s.number}: ${why}`);
              }
            }
        } finally {
          bridge.close();
        }
      }),
    );
    report.classSeconds = (Date.now() - classStart) / 1000;
    running = false;
    await poller;
    const busy = [...instructorTimes];
    instructorTimes.length = 0;
    // After the class: the view over every learner's events.
    for (let i = 0; i < 10; i++) report.instructorRows = await askInstructor();
    report.memoryMbPerLearner = (() => {
      const mb = learnerMemoryMb(users);
      return { n: mb.length, p50: pct(mb, 50), max: Math.max(...mb), total: mb.reduce((a, b) => a + b, 0) };
    })();
    report.verbMs = { n: verbTimes.length, p50: pct(verbTimes, 50), p95: pct(verbTimes, 95) };
    report.stepMs = {
      n: stepTimes.length,
      p50: pct(stepTimes, 50),
      p95: pct(stepTimes, 95),
      failedChecks: failures,
      failed: [...failed],
    };
    report.instructorMs = {
      duringClass: { n: busy.length, p50: pct(busy, 50), p95: pct(busy, 95) },
      after: { n: instructorTimes.length, p50: pct(instructorTimes, 50), p95: pct(instructorTimes, 95) },
    };
    report.totalSeconds = (Date.now() - t0) / 1000;
  } finally {
    await hub.close();
  }
  const round = (v: unknown): unknown =>
    typeof v === "number"
      ? Math.round(v * 10) / 10
      : v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, round(x)]))
        : v;
  console.log(values.json ? JSON.stringify(round(report)) : JSON.stringify(round(report), null, 2));
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    console.error(`bench:classroom: ${err.message}`);
    process.exit(1);
  },
);
