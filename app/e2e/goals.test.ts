/**
 * The goal list as a learner meets it: a mistake after a passed step turns the goal red with
 * the constraint that failed and the value seen, and "✓ Step passed" goes away until the goals
 * pass again.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { breakItOf, solutionOf } from "./lessons.js";
import {
  checkMarks,
  closeLab,
  hasChromium,
  openLab,
  runAndWait,
  screenshotOf,
  selectLesson,
  setEditorCode,
  type Lab,
} from "./harness.js";

describe.skipIf(!hasChromium)("goals say what done looks like", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ({ lab, browser, page } = await openLab(7));
    await selectLesson(page, "first-message");
  }, 240_000);

  afterAll(() => closeLab(lab, browser));

  it("a passed step broken again shows the failed constraint and no 'Step passed'", async () => {
    const goals = page.locator("[data-testid=checks] li");
    expect(await goals.first().textContent()).toContain("wr_id 200");
    expect(await goals.nth(1).textContent()).toContain("wr_id 100");

    await setEditorCode(page, solutionOf("first-message", 1));
    await runAndWait(page);
    await page.waitForSelector("[data-testid=step-passed]", { timeout: 30_000 });
    // The fourth goal is rxe's IBV_WC_GRH on an RC receive ("on rxe: …"), judged here on the simulator's rxe.
    expect(await checkMarks(page)).toEqual(["true", "true", "true", "true"]);

    // The learner swaps the two wr_ids, as a program of their own (not the break-it button).
    await setEditorCode(page, breakItOf("first-message", 1, "swapped-wr-ids"));
    await runAndWait(page);
    await page.waitForSelector("[data-testid=checks] li[data-pass=false]");
    expect(await checkMarks(page)).toEqual(["false", "false", "true", "true"]);
    expect(await goals.first().textContent()).toContain("wr_id 100, expected 200");
    expect(await goals.nth(1).textContent()).toContain("wr_id 200, expected 100");
    expect(await page.locator("[data-testid=step-passed]").count()).toBe(0);
    await screenshotOf(page, "[data-testid=checks]", "goals-failed-after-pass");
    // The same goals and failures in Chinese.
    await page.selectOption("select[aria-label=language]", "zh");
    expect(await goals.first().textContent()).toContain("QP #1: b (QP 0x12) 上最接近的完成：wr_id 100，期望 200");
    await screenshotOf(page, "[data-testid=checks]", "goals-failed-after-pass-zh");
    await page.selectOption("select[aria-label=language]", "en");

    // Fixed again: the banner comes back.
    await setEditorCode(page, solutionOf("first-message", 1));
    await runAndWait(page);
    await page.waitForSelector("[data-testid=step-passed]", { timeout: 30_000 });
  }, 120_000);

  it("the goal is shown where it is about: the Memory tab lays the bytes it asks for beside dst's", async () => {
    // The solution ran last (above): dst holds them.
    await page.click("[data-tab=mr]");
    const goal = page.locator("[data-testid=mr-goal]");
    expect(await goal.count()).toBe(1);
    expect(await goal.getAttribute("data-seen")).toBe("match");
    expect(await goal.textContent()).toMatch(/^goal at offset 0: "Hello, RDMA" 48 65 6c 6c 6f/);
    await screenshotOf(page, "[aria-label=lesson] ~ .column.inspector, .inspector-tabs", "goals-memory-tab");
    // A receive that lands elsewhere: the MR holds other bytes, said beside the goal's.
    await setEditorCode(page, solutionOf("first-message", 1).replace("dst.sge(0, 64)", "dst.sge(16, 48)"));
    await runAndWait(page);
    await page.click("[data-tab=mr]");
    expect(await goal.getAttribute("data-seen")).toBe("differ");
    await page.click("[data-tab=connection]");
  }, 120_000);

  it("a goal about a QP's state is outlined on the diagram, and turns green once the QP gets there", async () => {
    await selectLesson(page, "qp-state-machine");
    const mark = page.locator(".qp-diagram g.goal");
    expect(await mark.getAttribute("data-goal")).toBe("INIT");
    expect(await mark.getAttribute("class")).toBe("goal");
    expect(await page.locator("[data-testid=legend-goal]").textContent()).toBe("goal state");
    await setEditorCode(page, solutionOf("qp-state-machine", 1));
    await runAndWait(page);
    await page.waitForSelector(".qp-diagram g.goal.passed");
    expect(await mark.locator("title").textContent()).toMatch(/^goal: qp \(QP 0x[0-9a-f]+\) ends in INIT ✓$/);
    await screenshotOf(page, ".qp-diagram", "goals-diagram-passed");
    await page.selectOption("select[aria-label=language]", "zh");
    expect(await mark.locator("title").textContent()).toMatch(/^目标：qp \(QP 0x[0-9a-f]+\) 最终处于 INIT ✓$/);
    await page.selectOption("select[aria-label=language]", "en");
  }, 120_000);
});
