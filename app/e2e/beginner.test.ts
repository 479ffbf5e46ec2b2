/**
 * The whole course as a beginner takes it, in one browser page on the simulator: every lesson,
 * every step. On each step the learner reads the goals (each must state the values its check
 * constrains, in English and in Chinese: lessons/goals.ts's rule applied to what is on screen),
 * pastes the step's beginner mistakes (its break-it files, which name in `stepFails` the goal
 * they fail and what the learner reads under it), runs them and sees that goal go red with that
 * explanation and no "✓ Step passed"; then pastes the reference solution, sees every goal pass
 * and the banner, and goes on to the next step and the next lesson.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCourse } from "../../lessons/load.js";
import type { Language, Lesson, Step } from "../../lessons/schema.js";
import { breakItOf, screenLabelProblems, solutionOf } from "./lessons.js";
import {
  checkMarks,
  closeLab,
  hasChromium,
  openLab,
  runAndWait,
  resultsDir,
  selectLesson,
  setEditorCode,
  type Lab,
} from "./harness.js";

const course = loadCourse();
/** Lessons with fewer mistakes than this are reported (console) as teaching too little. */
const MIN_MISTAKES = 2;

/** What each goal on screen says: its label, and the explanation under it when it failed. */
async function goalsShown(page: Page): Promise<{ label: string; detail: string | null; pass: string | null }[]> {
  return page.$$eval("[data-testid=checks] li", (lis) =>
    lis.map((li) => {
      const body = li.querySelector(":scope > span:not(.mark)")!.cloneNode(true) as HTMLElement;
      const muted = body.querySelector(".muted");
      muted?.remove();
      return { label: body.textContent ?? "", detail: muted?.textContent ?? null, pass: li.getAttribute("data-pass") };
    }),
  );
}

/** The goal labels in one language, judged by lessons/goals.ts (switches the pane's language and back). */
async function labelProblemsIn(page: Page, step: Step, lang: Language): Promise<string[]> {
  await page.selectOption("select[aria-label=language]", lang);
  await page.waitForFunction(
    (title) => document.querySelector(".lesson .steps li.current")?.textContent?.includes(title),
    step.title[lang],
  );
  const labels = (await goalsShown(page)).map((g) => g.label);
  return screenLabelProblems(step, step.checks, labels, lang);
}

/** The goal list and, below it, the error the program ended with (if any): what the learner reads after Run. */
async function goalsScreenshot(page: Page, name: string): Promise<void> {
  mkdirSync(resultsDir, { recursive: true });
  await page.locator("[data-testid=checks]").scrollIntoViewIfNeeded();
  // The error sits under the goals: bring it into the pane's view too (the goals' top stays when both fit).
  if ((await page.locator(".lesson .bad-hint").count()) > 0)
    await page.locator(".lesson .bad-hint").scrollIntoViewIfNeeded();
  const boxes = await page.$$eval("[data-testid=checks], .lesson .bad-hint", (els) =>
    els
      .map((e) => e.getBoundingClientRect())
      .map((r) => ({ top: r.top, bottom: r.bottom, left: r.left, right: r.right })),
  );
  const top = Math.max(0, Math.min(...boxes.map((b) => b.top)));
  const left = Math.min(...boxes.map((b) => b.left));
  const clip = {
    x: left,
    y: top,
    width: Math.max(...boxes.map((b) => b.right)) - left,
    height: Math.max(...boxes.map((b) => b.bottom)) - top,
  };
  await page.screenshot({ path: join(resultsDir, `${name}.png`), clip });
}

/** Mistakes driven per lesson, for the report at the end. */
const driven: { lesson: string; mistakes: string[] }[] = [];

describe.skipIf(!hasChromium)("a beginner takes the whole course (web mode, simulator)", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ lab, browser, page, errors } = await openLab(13));
  }, 240_000);

  afterAll(async () => {
    await closeLab(lab, browser);
    const few = driven.filter((d) => d.mistakes.length < MIN_MISTAKES);
    console.log(
      driven.map((d) => `${d.lesson}: ${d.mistakes.length} (${d.mistakes.join(", ") || "none"})`).join("\n") +
        (few.length ? `\nfewer than ${MIN_MISTAKES} mistakes: ${few.map((d) => d.lesson).join(", ")}` : ""),
    );
  });

  it("the course loads without problems", () => {
    expect(course.problems).toEqual([]);
    expect(course.lessons.length).toBeGreaterThanOrEqual(13);
  });

  course.lessons.forEach((lesson: Lesson, li) => {
    const onSim = lesson.steps.filter((s) => s.backends !== "native");
    it.skipIf(onSim.length === 0)(
      `${lesson.folder}: mistakes fail the goals they should, the solution passes`,
      async () => {
        const mistakes: string[] = [];
        driven.push({ lesson: lesson.folder, mistakes });
        // The previous lesson's "next lesson" button brought the learner here; if it did not, pick it.
        if ((await page.getAttribute(".lesson", "data-lesson")) !== lesson.id) await selectLesson(page, lesson.id);
        for (const step of lesson.steps) {
          if (step.backends === "native") continue;
          if ((await page.getAttribute(".lesson", "data-step")) !== String(step.number))
            await page.click(`.lesson .steps li >> nth=${step.number - 1}`);
          await page.waitForSelector(`.lesson[data-lesson="${lesson.id}"][data-step="${step.number}"]`);

          // Before running anything: do the goals say what done looks like?
          const labelProblems = [
            ...(await labelProblemsIn(page, step, "zh")),
            ...(await labelProblemsIn(page, step, "en")),
          ];
          expect(labelProblems, `${lesson.folder} step ${step.number}: goal labels`).toEqual([]);

          for (const b of step.breakIt ?? []) {
            if (!b.stepFails) continue;
            const what = `${lesson.folder} step ${step.number} mistake "${b.id}"`;
            await setEditorCode(page, breakItOf(lesson.id, step.number, b.id));
            await runAndWait(page);
            const goals = await goalsShown(page);
            expect(goals.length, what).toBe(step.checks.length);
            for (const f of b.stepFails) {
              expect(goals[f.goal]?.pass, `${what}: goal ${f.goal} "${goals[f.goal]?.label}"`).toBe("false");
              expect(goals[f.goal]?.detail, `${what}: under goal ${f.goal} "${goals[f.goal]?.label}"`).toContain(
                f.detail,
              );
            }
            expect(await page.locator("[data-testid=step-passed]").count(), `${what}: "Step passed" shown`).toBe(0);
            await goalsScreenshot(page, `beginner-${lesson.folder}-${step.number}-${b.id}`);
            mistakes.push(`${step.number}/${b.id}`);
          }

          await setEditorCode(page, solutionOf(lesson.id, step.number));
          await runAndWait(page);
          await page.waitForSelector("[data-testid=step-passed]", { timeout: 30_000 });
          expect(await checkMarks(page), `${lesson.folder} step ${step.number}: solution`).toEqual(
            step.checks.map(() => "true"),
          );
          const next = step.number < lesson.steps.length ? "next-step" : "next-lesson";
          if (next === "next-step" || li < course.lessons.length - 1) await page.click(`[data-testid=${next}]`);
        }
        expect(mistakes.length, `${lesson.folder}: beginner mistakes driven`).toBeGreaterThanOrEqual(MIN_MISTAKES);
        expect(errors).toEqual([]);
      },
      180_000,
    );
  });
});
