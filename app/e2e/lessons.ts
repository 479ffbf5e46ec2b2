/** Reads a lesson step's reference solution from lessons/ (what a learner who solved it would have typed). */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./harness.js";

export function solutionOf(lessonId: string, step: number): string {
  const dir = join(repoRoot, "lessons");
  const folder = readdirSync(dir).find((f) => f.replace(/^\d+-/, "") === lessonId);
  if (!folder) throw new Error(`no lesson folder for ${lessonId}`);
  return readFileSync(join(dir, folder, `step-${step}.solution.ts`), "utf8");
}

/** A lesson step's starter code (what the editor opens on). */
export function starterOf(lessonId: string, step: number): string {
  const dir = join(repoRoot, "lessons");
  const folder = readdirSync(dir).find((f) => f.replace(/^\d+-/, "") === lessonId);
  if (!folder) throw new Error(`no lesson folder for ${lessonId}`);
  return readFileSync(join(dir, folder, `step-${step}.starter.ts`), "utf8");
}

/** A step's break-it variation (step-N.break-ID.ts): the starter broken on purpose. */
export function breakItOf(lessonId: string, step: number, id: string): string {
  const dir = join(repoRoot, "lessons");
  const folder = readdirSync(dir).find((f) => f.replace(/^\d+-/, "") === lessonId);
  if (!folder) throw new Error(`no lesson folder for ${lessonId}`);
  return readFileSync(join(dir, folder, `step-${step}.break-${id}.ts`), "utf8");
}
