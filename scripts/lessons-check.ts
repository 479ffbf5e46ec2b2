/**
 * npm run lessons:check [-- --backend sim|native] [--only <lesson ids or numbers, comma-separated>] [--transcripts <dir>]
 *
 * Refuses a malformed lesson (schema version, duplicate ids, a step without hints or
 * checks, a missing language, a stray file), then replays every reference solution and
 * every "break it" variation (and every starter, which must run but not yet pass) headless through a session, awaiting each, and fails if any
 * check does not pass. Exit code 0 only when everything passed.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { toJsonLines } from "../app/session/transcript.js";
import { checkCourse, type BackendKind } from "../lessons/course-check.js";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i !== -1) return process.argv[i + 1];
  const eq = process.argv.find((a) => a.startsWith(`--${name}=`));
  return eq?.slice(name.length + 3);
}

const kind = (arg("backend") ?? "sim") as BackendKind;
if (kind !== "sim" && kind !== "native") {
  console.error(`--backend must be sim or native (got ${kind})`);
  process.exit(2);
}
const only = arg("only");
/** --transcripts <dir>: keep every replay's transcript as JSON lines (the session's export format). */
const transcripts = arg("transcripts");

const t0 = Date.now();
const result = await checkCourse(kind, {
  ...(only !== undefined && { only }),
  onResult: (r, failed) => {
    if (transcripts) {
      const file = join(transcripts, r.program.replace(/\.ts$/, ".jsonl"));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, toJsonLines(r.transcript));
    }
    const mark = failed.length ? "FAIL" : "ok  ";
    console.log(`${mark} ${r.program}  (${r.wallMs} ms wall, ${Math.round(r.clockMs)} ms on the ${kind} clock)`);
    for (const line of failed) console.log(`       ${line}`);
  },
});

for (const p of result.problems) console.error(`format: ${p}`);
for (const s of result.skipped) console.log(`skip ${s}`);
if (result.unavailable) {
  // No RDMA device here: a visible skip, exit 0 — except where native must work (inside the lab
  // VM, VERBSLAB_IN_RXE_VM=1, so `npm run test:rxe` fails) and for the simulator, which always should.
  const mustRun = kind === "sim" || process.env.VERBSLAB_IN_RXE_VM === "1";
  console.log(
    `\n${result.lessons} lessons, ${result.steps} steps: ${result.problems.length} format problem(s); ` +
      `skipped: no ${kind} backend (${result.unavailable}); 0 replays run` +
      `${mustRun ? ` — a failure here${kind === "native" ? " (VERBSLAB_IN_RXE_VM=1: the lab VM must have rxe)" : ""}` : ""}`,
  );
  process.exit(result.problems.length === 0 && !mustRun ? 0 : 1);
}

const passed = result.results.length - result.failures.filter((f) => !f.lines[0]?.startsWith("could not run")).length;
const crashed = result.failures.filter((f) => f.lines[0]?.startsWith("could not run"));
for (const c of crashed) console.error(`FAIL ${c.program}\n       ${c.lines.join("\n       ")}`);
console.log(
  `\n${result.lessons} lessons, ${result.steps} steps: ${result.problems.length} format problem(s); ` +
    `${passed}/${result.results.length + crashed.length} replays passed on ${kind}` +
    `${result.skipped.length ? `, ${result.skipped.length} skipped` : ""} in ${Date.now() - t0} ms`,
);
const ok = result.problems.length === 0 && result.failures.length === 0 && !result.unavailable;
process.exit(ok ? 0 : 1);
