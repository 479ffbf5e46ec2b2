/**
 * A classroom in Chromium: a real JupyterHub (the repo's jupyterhub_config.py), two learners
 * who log in through the Hub's page, each completes lesson 1 in their own VerbsLab server
 * (making one mistake on the way); the instructor sees both at the right step with the
 * failure each last had; a third user outside the instructors group is refused the view.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCourse } from "../../lessons/load.js";
import { hasJupyterHub, startTestHub, type TestHub } from "../classroom/test-hub.js";
import { breakItOf, solutionOf } from "./lessons.js";
import {
  ensureRendererBuilt,
  hasChromium,
  launch,
  runAndWait,
  screenshot,
  setEditorCode,
  waitInteractive,
} from "./harness.js";

const LESSON = "bypassing-the-kernel";
const lesson = loadCourse().lessons.find((l) => l.id === LESSON)!;

/** What a break-it file makes the learner read under its failed goal (lesson.json stepFails). */
const failureOf = (step: number, breakIt: string) =>
  lesson.steps[step - 1]!.breakIt!.find((b) => b.id === breakIt)!.stepFails![0]!.detail;

/** Each learner's one mistake: the step and the break-it file pasted before the solution. */
const MISTAKES: Record<string, { step: number; breakIt: string }> = {
  alice: { step: 2, breakIt: "never-polled" },
  bob: { step: 2, breakIt: "dst-without-remote-write" },
};

async function logIn(browser: Browser, hub: TestHub, user: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
  const page = await context.newPage();
  await page.goto(`${hub.url}/hub/login`);
  await page.fill("#username_input", user);
  await page.fill("#password_input", "verbslab");
  await Promise.all([page.waitForURL(/\/hub\/(home|spawn)/), page.click("#login_submit")]);
  return { context, page };
}

describe.skipIf(!hasChromium || !hasJupyterHub)("a classroom on JupyterHub, in Chromium", { timeout: 600_000 }, () => {
  let hub: TestHub;
  let browser: Browser;
  const errors: string[] = [];

  beforeAll(async () => {
    await ensureRendererBuilt();
    hub = await startTestHub({ learners: ["alice", "bob", "carol"], instructors: ["teacher"] });
    await Promise.all([hub.startServer("alice"), hub.startServer("bob")]);
    browser = await launch();
  }, 400_000);
  afterAll(async () => {
    await browser?.close();
    await hub?.close();
  }, 60_000);

  for (const user of ["alice", "bob"]) {
    it(`${user} logs in and completes lesson 1 in their own server`, async () => {
      const { context, page } = await logIn(browser, hub, user);
      page.on("pageerror", (e) => errors.push(`${user}: ${e.message}`));
      await page.goto(`${hub.url}/user/${user}/`);
      await waitInteractive(page, 120_000);
      expect(new URL(page.url()).pathname).toBe(`/user/${user}/`);
      await page.waitForSelector(`.lesson[data-lesson="${LESSON}"][data-step="1"]`);
      for (const step of lesson.steps) {
        await page.waitForSelector(`.lesson[data-lesson="${LESSON}"][data-step="${step.number}"]`);
        const mistake = MISTAKES[user]!;
        if (mistake.step === step.number) {
          await setEditorCode(page, breakItOf(LESSON, step.number, mistake.breakIt));
          await runAndWait(page);
          expect(await page.locator("[data-testid=step-passed]").count()).toBe(0);
        }
        await setEditorCode(page, solutionOf(LESSON, step.number));
        await runAndWait(page);
        await page.waitForSelector("[data-testid=step-passed]", { timeout: 30_000 });
        if (step.number < lesson.steps.length) await page.click("[data-testid=next-step]");
      }
      await screenshot(page, `classroom-${user}-lesson-1`);
      await context.close();
    });
  }

  it("the instructor sees both learners at the right step, with the failure each last had", async () => {
    const { context, page } = await logIn(browser, hub, "teacher");
    await page.goto(`${hub.url}/services/instructor/`);
    const last = lesson.steps.length;
    // The learners' servers post their events as the runs are checked: the page refreshes itself.
    for (const user of ["alice", "bob"])
      await page.waitForSelector(`tr[data-learner="${user}"]:has(td.passed)`, { timeout: 30_000 });
    for (const user of ["alice", "bob"]) {
      const row = page.locator(`tr[data-learner="${user}"]`);
      const cells = await row.locator("td").allTextContents();
      expect(cells.slice(0, 5), user).toEqual([user, LESSON, String(last), "passed", "2"]);
      const m = MISTAKES[user]!;
      expect(await row.locator("td.goal").textContent(), user).toContain(failureOf(m.step, m.breakIt));
    }
    await screenshot(page, "classroom-instructor-view");
    // A learner's transcript, read-only: the verbs their last run made.
    await page.click(`tr[data-learner="alice"] a`);
    await page.waitForSelector("pre.transcript");
    expect(await page.locator("pre.transcript").textContent()).toContain("ibv_post_send");
    await context.close();
  });

  it("a user outside the instructors group is refused the instructor view", async () => {
    const { context, page } = await logIn(browser, hub, "carol");
    const res = await page.goto(`${hub.url}/services/instructor/`);
    expect(res?.status()).toBe(403);
    // The Hub itself refuses to authorize her for the service (no access:services scope).
    expect(await page.locator("body").textContent()).toContain("You do not have permission");
    expect(await page.locator("tr[data-learner]").count()).toBe(0);
    await screenshot(page, "classroom-instructor-refused");
    await context.close();
  });

  it("nothing failed in the learners' pages", () => {
    expect(errors).toEqual([]);
  });
});
