/** Reads a lesson step's code files from lessons/ (what the editor opens on, or what a learner would type). */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./harness.js";
import { goalContext } from "../../lessons/checks.js";
import { constraintsOf, labelProblem } from "../../lessons/goals.js";
import type { Check, Language, Step } from "../../lessons/schema.js";

/** `step-N.<kind>.ts` of a lesson, found by its id (the folder name without its order prefix). */
function stepFile(lessonId: string, step: number, kind: string): string {
  const dir = join(repoRoot, "lessons");
  const folder = readdirSync(dir).find((f) => f.replace(/^\d+-/, "") === lessonId);
  if (!folder) throw new Error(`no lesson folder for ${lessonId}`);
  return readFileSync(join(dir, folder, `step-${step}.${kind}.ts`), "utf8");
}

/** A step's reference solution (what a learner who solved it would have typed). */
export const solutionOf = (lessonId: string, step: number): string => stepFile(lessonId, step, "solution");

/** A step's starter code (what the editor opens on). */
export const starterOf = (lessonId: string, step: number): string => stepFile(lessonId, step, "starter");

/** A step's break-it variation (step-N.break-ID.ts): the starter broken on purpose. */
export const breakItOf = (lessonId: string, step: number, id: string): string =>
  stepFile(lessonId, step, `break-${id}`);

/**
 * Why a goal label on screen leaves a constraint of its check unstated (empty: it states them
 * all). The rule and its wording are lessons/goals.ts's (what `npm run lessons:check` applies to
 * the labels it generates); here it judges the text the learner actually reads.
 */
export function screenLabelProblems(step: Step, checks: Check[], labels: string[], lang: Language): string[] {
  const out: string[] = [];
  if (labels.length !== checks.length) out.push(`${labels.length} goals on screen for ${checks.length} checks`);
  const base = goalContext(step, lang);
  checks.forEach((c, i) => {
    for (const k of constraintsOf(c)) {
      const problem = labelProblem(k, labels[i] ?? "", step.text[lang], lang, base);
      if (problem)
        out.push(`step ${step.number} goal ${i} (${c.kind}) [${lang}]: ${problem} — on screen: "${labels[i]}"`);
    }
  });
  return out;
}
