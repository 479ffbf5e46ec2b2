/**
 * What `npm run lessons:check` does, as a function the vitest twin can call too:
 * load and validate every lesson (schema version, ids, hints, checks, both languages,
 * no stray files, goals that state every constraint: lessons/goals.ts), then replay every reference solution and every break-it variation
 * headless through a session on a fresh backend, awaiting each, and judge its checks.
 */
import type { VerbsBackend } from "../verbs/backend.js";
import { goalProblems } from "./goals.js";
import { loadCourse } from "./load.js";
import { replayProblems, replaysOf, replayStep, type ReplayResult } from "./replay.js";

export type BackendKind = "sim" | "native";

// Loaded by specifier so this file typechecks and loads whichever backend module exists.
const SIM_MODULE = "../sim/index.js";
const NATIVE_MODULE = "../native/index.js";

/** A factory for fresh backends of one kind, or why there is none. */
export async function backendFactory(
  kind: BackendKind,
): Promise<{ make: (seed: number) => VerbsBackend | Promise<VerbsBackend> } | { unavailable: string }> {
  if (kind === "sim") {
    let mod: { createSimBackend(options: { seed?: number }): VerbsBackend };
    try {
      mod = await import(/* @vite-ignore */ SIM_MODULE);
    } catch (err) {
      return { unavailable: `the simulator could not be loaded: ${(err as Error).message}` };
    }
    return { make: (seed) => mod.createSimBackend({ seed }) };
  }
  let mod: {
    loadNativeBackend():
      | { backend: VerbsBackend }
      | { unavailable: string }
      | Promise<{ backend: VerbsBackend } | { unavailable: string }>;
  };
  try {
    mod = await import(/* @vite-ignore */ NATIVE_MODULE);
  } catch (err) {
    return { unavailable: `the native backend could not be loaded: ${(err as Error).message}` };
  }
  const first = await mod.loadNativeBackend();
  if ("unavailable" in first) return first;
  // Real devices keep their state between runs; one backend serves every replay.
  return { make: () => first.backend };
}

export interface CourseCheckResult {
  lessons: number;
  steps: number;
  /** Format problems (empty when every lesson is well formed). */
  problems: string[];
  results: ReplayResult[];
  /** Replays that failed, with why. */
  failures: { program: string; lines: string[] }[];
  skipped: string[];
  /** Set when no backend of the asked kind could be made (then nothing was replayed). */
  unavailable?: string;
}

export async function checkCourse(
  kind: BackendKind,
  opts: { only?: string; timeoutScale?: number; onResult?: (r: ReplayResult, failed: string[]) => void } = {},
): Promise<CourseCheckResult> {
  const course = loadCourse();
  // --only takes lesson ids or folder prefixes, comma-separated ("09,10,two-hosts").
  const wanted = opts.only?.split(",").filter(Boolean);
  const lessons = wanted
    ? course.lessons.filter((l) => wanted.some((w) => l.id === w || l.folder.startsWith(w)))
    : course.lessons;
  const out: CourseCheckResult = {
    lessons: lessons.length,
    steps: lessons.reduce((n, l) => n + l.steps.length, 0),
    // Goals that leave a constraint unstated are refused here, not by the loader: the app
    // still shows such a lesson, but the course does not pass.
    problems: [...course.problems, ...course.lessons.flatMap(goalProblems)],
    results: [],
    failures: [],
    skipped: [],
  };
  const factory = await backendFactory(kind);
  if ("unavailable" in factory) {
    out.unavailable = factory.unavailable;
    return out;
  }
  const { run, skipped } = replaysOf(lessons, kind);
  // Real rxe in the emulated lab VM runs programs tens of times slower than the simulator.
  const timeoutScale = opts.timeoutScale ?? (kind === "native" ? 6 : 1);
  out.skipped = skipped;
  let seed = 1;
  for (const r of run) {
    const s = seed++;
    let result: ReplayResult;
    try {
      result = await replayStep(r, () => factory.make(s), timeoutScale);
    } catch (err) {
      const program = `${r.lesson.folder}/step-${r.step.number} ${r.variant}`;
      out.failures.push({ program, lines: [`could not run: ${(err as Error).stack ?? String(err)}`] });
      continue;
    }
    out.results.push(result);
    const lines = replayProblems(r, result);
    if (lines.length) out.failures.push({ program: result.program, lines });
    opts.onResult?.(result, lines);
  }
  return out;
}
