/**
 * Headless replay: runs a lesson program in a fresh session over a backend, then judges
 * the step's checks from the transcript. Used by `npm run lessons:check`, its vitest twin
 * and the CLI. Node only (it imports the program file).
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createSession } from "../app/session/session.js";
import type { Transcript } from "../app/session/transcript.js";
import type { Verbs } from "../app/session/verbs-api.js";
import type { VerbsBackend } from "../verbs/backend.js";
import { evaluateChecks, nonRxeDriver, type RunRecord, type Verdict } from "./checks.js";
import { LESSONS_DIR } from "./load.js";
import { recordFromTranscript } from "./record.js";
import type { Check, Lesson, Step, Text } from "./schema.js";

export interface ReplayResult {
  /** `06-first-message/step-1.solution.ts` */
  program: string;
  verdict: Verdict;
  record: RunRecord;
  transcript: Transcript;
  /** Wall time the run took, ms. */
  wallMs: number;
  /** The backend clock's advance over the run, ms (virtual on the simulator). */
  clockMs: number;
}

type Program = (verbs: Verbs) => unknown;

/** Wall-clock limit of one replay unless the step says otherwise. */
export const DEFAULT_TIMEOUT_MS = 20_000;

/** Imports a learner program file and returns its default export. */
export async function importProgram(file: string): Promise<Program> {
  const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  if (typeof mod.default !== "function") throw new Error(`${file}: no default export function`);
  return mod.default as Program;
}

/**
 * Runs `program` in a new session over `backend` and judges `checks`. A run that does not
 * finish within `timeoutMs` of wall time is stopped through the step gate and fails.
 */
export async function replayProgram(
  backend: VerbsBackend,
  program: Program,
  checks: Check[],
  opts: { name: string; timeoutMs?: number; seed?: number },
): Promise<ReplayResult> {
  const session = createSession({
    backend,
    program: opts.name,
    ...(opts.seed !== undefined && { seed: opts.seed }),
  });
  const t0 = Date.now();
  const clock0 = backend.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  });
  const run = session.run(program);
  const first = await Promise.race([run, timeout]);
  if (first === "timeout") {
    session.gate.stop();
    // A program stuck in a wait the gate cannot interrupt still must not hang the checker.
    await Promise.race([run, new Promise((r) => setTimeout(r, 1000))]);
  }
  clearTimeout(timer);
  session.release();
  const transcript = session.transcript();
  const record = recordFromTranscript(transcript.events);
  if (first === "timeout" && !record.thrown)
    record.thrown = { message: `did not finish within ${opts.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms of wall time` };
  return {
    program: opts.name,
    verdict: evaluateChecks(checks, record),
    record,
    transcript,
    wallMs: Date.now() - t0,
    clockMs: backend.now() - clock0,
  };
}

export interface StepReplay {
  lesson: Lesson;
  step: Step;
  /** "solution", "starter" or the break-it id. A starter must run but must NOT pass its checks yet. */
  variant: string;
  file: string;
  checks: Check[];
  /** For a break-it variation: what the step's own goals must say about it (lessons/schema.ts BreakIt.stepFails). */
  stepFails?: { goal: number; detail: string }[];
  /** For a break-it variation that shows only on rxe (BreakIt.rxeOnly): what another device does. */
  rxeOnly?: Text;
}

/** Every program `lessons:check` replays: each step's solution and each break-it variation. */
export function replaysOf(lessons: Lesson[], backendKind: "sim" | "native"): { run: StepReplay[]; skipped: string[] } {
  const run: StepReplay[] = [];
  const skipped: string[] = [];
  for (const lesson of lessons) {
    for (const step of lesson.steps) {
      const where = `${lesson.folder}/step-${step.number}`;
      if (step.backends === "native" && backendKind !== "native") {
        skipped.push(`${where}: native only (${step.nativeOnly?.en ?? "needs real rxe"})`);
        continue;
      }
      run.push({
        lesson,
        step,
        variant: "solution",
        file: join(LESSONS_DIR, lesson.folder, step.files.solution),
        checks: step.checks,
      });
      run.push({
        lesson,
        step,
        variant: "starter",
        file: join(LESSONS_DIR, lesson.folder, step.files.starter),
        checks: step.checks,
      });
      for (const b of step.breakIt ?? []) {
        run.push({
          lesson,
          step,
          variant: b.id,
          file: join(LESSONS_DIR, lesson.folder, step.files.breakIt[b.id]!),
          checks: b.checks,
          stepFails: b.stepFails ?? [],
          ...(b.rxeOnly && { rxeOnly: b.rxeOnly }),
        });
      }
    }
  }
  return { run, skipped };
}

/**
 * Runs one planned replay on a backend made fresh for it (so keys and QPNs start from a new
 * device). `timeoutScale` stretches the step's wall-clock limit (real rxe under emulation is slow).
 */
export async function replayStep(
  r: StepReplay,
  makeBackend: () => VerbsBackend | Promise<VerbsBackend>,
  timeoutScale = 1,
) {
  const program = await importProgram(r.file);
  const backend = await makeBackend();
  const file =
    r.variant === "solution" || r.variant === "starter" ? r.step.files[r.variant] : r.step.files.breakIt[r.variant];
  const name = `${r.lesson.folder}/${file}`;
  return replayProgram(backend, program, r.checks, {
    name,
    timeoutMs: (r.step.timeoutMs ?? DEFAULT_TIMEOUT_MS) * timeoutScale,
  });
}

/**
 * Why a replay counts as failed, one line each (empty: it did what it should). A solution or
 * break-it must pass every check; a starter must finish (not hang) and must not pass yet —
 * otherwise the step has nothing to teach.
 */
export function replayProblems(r: StepReplay, result: ReplayResult): string[] {
  if (r.variant === "solution") return result.verdict.passed ? [] : failureLines(result);
  // A mistake that shows only on rxe is explained off rxe (explainedLines), not judged.
  if (r.rxeOnly && nonRxeDriver(result.record) !== undefined) return [];
  if (r.stepFails) return [...(result.verdict.passed ? [] : failureLines(result)), ...stepGoalProblems(r, result)];
  const out: string[] = [];
  // On a device other than rxe a starter may pass only because the goals it misses are rxe's facts.
  if (result.verdict.passed && !result.verdict.results.some((x) => x.explained))
    out.push("the starter already passes every check: the step asks nothing of the learner");
  if (result.record.thrown?.message.startsWith("did not finish"))
    out.push(`the starter hangs: ${result.record.thrown.message}`);
  return out;
}

/** One line per check that passed only as an explanation (an rxe fact on another device, a counter it lacks). */
export function explainedLines(result: ReplayResult, r?: StepReplay): string[] {
  const driver = nonRxeDriver(result.record);
  if (r?.rxeOnly && driver !== undefined)
    return [`the whole variation is a fact about rxe, not judged on ${driver}: ${r.rxeOnly.en}`];
  return result.verdict.results.filter((x) => x.explained).map((x) => `check ${x.check.kind}: ${x.detail}`);
}

/** One line per failed check (and the unexpected error), for reports. */
export function failureLines(result: ReplayResult): string[] {
  const lines = result.verdict.results.filter((r) => !r.passed).map((r) => `check ${r.check.kind}: ${r.detail}`);
  const e = result.verdict.unexpectedError;
  if (e) lines.push(`program threw: ${e.verb ? `${e.verb} ` : ""}${e.code ? `${e.code}: ` : ""}${e.message}`);
  return lines;
}

/**
 * A break-it variation is a mistake the step's goals must catch: judged by the step's own
 * checks, it must not pass, and each goal its `stepFails` names must fail with that detail
 * (what the learner reads under the red goal).
 */
export function stepGoalProblems(r: StepReplay, result: ReplayResult): string[] {
  const step = evaluateChecks(r.step.checks, result.record);
  // On another device, a goal that is an rxe fact explains itself instead of failing.
  const fails = (r.stepFails ?? []).filter((f) => !step.results[f.goal]?.explained);
  const allExplained = fails.length === 0 && (r.stepFails ?? []).length > 0;
  if (step.passed && !allExplained)
    return ["the step's own goals all pass on this mistake: the learner would be told the step is done"];
  const out: string[] = [];
  for (const f of fails) {
    const got = step.results[f.goal];
    if (!got) out.push(`stepFails: the step has no goal ${f.goal}`);
    else if (got.passed)
      out.push(`step goal ${f.goal} (${got.check.kind}) passes, expected it to fail with "${f.detail}"`);
    else if (!got.detail.includes(f.detail))
      out.push(`step goal ${f.goal} (${got.check.kind}) fails with "${got.detail}", expected "${f.detail}"`);
  }
  return out;
}
