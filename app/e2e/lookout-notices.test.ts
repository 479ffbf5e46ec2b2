/**
 * Two beginner mistakes in lesson 6 that pass, or fail, without saying why unless the session
 * says it: reading the message out of the receive buffer before polling the RECV's completion
 * (on one device the simulator, as rxe's loopback, has already written it, so it looks right),
 * and a CQ of 1 for a RECV and a signaled SEND posted before any poll (the CQ overflows and the
 * SEND's completion is lost). Each gets its notice under the diagram, in English and in Chinese,
 * and the goal the lost completion fails names the learner's QP as the panes do.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solutionOf } from "./lessons.js";
import {
  closeLab,
  hasChromium,
  openLab,
  runAndWait,
  screenshot,
  selectLesson,
  setEditorCode,
  type Lab,
} from "./harness.js";

const SOLUTION = solutionOf("first-message", 1);
const POLL = "const wcs = await cq.pollWait(2, 1000);";

describe.skipIf(!hasChromium)("lesson 6: the session's notices for a read before the poll and a CQ too small", () => {
  let lab: Lab | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ lab, browser, page, errors } = await openLab(3));
    await selectLesson(page, "first-message");
  }, 240_000);

  afterAll(() => closeLab(lab, browser));

  const notice = (id: string) => page.locator(`[data-testid=session-notice][data-notice=${id}]`);

  it("reading dst before polling b's RECV: a notice names the RECV; the goals still pass", async () => {
    expect(SOLUTION).toContain(POLL);
    const early = SOLUTION.replace(POLL, `const early = await dst.read(0, text.length);\n  ${POLL}`);
    await setEditorCode(page, early);
    await runAndWait(page);
    await notice("read_before_poll").waitFor();
    expect(await notice("read_before_poll").textContent()).toMatch(
      /^⚠ ?dst\.read\(0, 11\) reads bytes that a posted RECV \(wr_id 200 on b \(QP 0x12\)\) changes, before its completion was polled/,
    );
    expect(await page.locator("[data-testid=step-passed]").count()).toBe(1);
    await screenshot(page, "notice-read-before-poll-recv");
    await page.selectOption("select[aria-label=language]", "zh");
    expect(await notice("read_before_poll").textContent()).toMatch(
      /正被一个已提交的 RECV（b \(QP 0x12\) 上的 wr_id 200）/,
    );
    await page.selectOption("select[aria-label=language]", "en");
  }, 120_000);

  it("a CQ of 1: the overflow is foretold at the SEND, and the lost completion's goal names QP #0: a (QP 0x11)", async () => {
    expect(SOLUTION).toContain("ctx.createCq(32)");
    await setEditorCode(page, SOLUTION.replace("ctx.createCq(32)", "ctx.createCq(1)"));
    await runAndWait(page);
    await notice("cq_overflow").waitFor();
    expect(await notice("cq_overflow").textContent()).toMatch(
      /2 completions are on their way into cq, which holds 1 \(its cqe\).*IBV_EVENT_CQ_ERR/,
    );
    expect(await page.locator("[data-testid=checks] li").nth(1).textContent()).toMatch(
      /no completion on QP #0: a \(QP 0x11\)/,
    );
    expect(await page.locator("[data-testid=step-passed]").count()).toBe(0);
    await screenshot(page, "notice-cq-overflow");
    await page.selectOption("select[aria-label=language]", "zh");
    expect(await notice("cq_overflow").textContent()).toMatch(/有 2 个完成正在进入 cq，而它只能容纳 1 个/);
    await page.selectOption("select[aria-label=language]", "en");
    expect(errors).toEqual([]);
  }, 120_000);
});
