/**
 * The learner's place survives a reload: the same lesson, the same step, the code they wrote
 * there (kept per step in their profile under the data folder); the end of a lesson offers the
 * next one.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solutionOf } from "./lessons.js";
import {
  closeLab,
  editorText,
  hasChromium,
  openLab,
  runAndWait,
  selectLesson,
  setEditorCode,
  waitInteractive,
  type Lab,
} from "./harness.js";

const LESSON = "bypassing-the-kernel";
const NEXT = "devices-ports-gids";

/** The profile's workspace file, once it holds `needle`. */
async function savedWorkspace(lab: Lab, needle: string): Promise<{ lessonId: string; code: Record<string, string> }> {
  const path = join(lab.dataDir, "profiles", "default", "workspace.json");
  for (let i = 0; i < 100; i++) {
    if (existsSync(path)) {
      const text = readFileSync(path, "utf8");
      if (text.includes(needle)) return JSON.parse(text) as { lessonId: string; code: Record<string, string> };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${path} never held ${needle}`);
}

const shown = async (page: Page) => (await editorText(page)).replace(/\u00a0/g, " ");

describe.skipIf(!hasChromium)("progress across a reload (web mode, simulator)", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ({ lab, browser, page } = await openLab(11));
  }, 240_000);
  afterAll(() => closeLab(lab, browser));

  it("reopens the same lesson and step with the code written there, each step its own", async () => {
    // Another lesson first, so that "the same lesson" is not just the first one.
    await selectLesson(page, NEXT);
    await selectLesson(page, LESSON);
    await setEditorCode(page, solutionOf(LESSON, 1));
    await runAndWait(page);
    await page.waitForSelector("[data-testid=step-passed]", { timeout: 30_000 });
    await page.click("[data-testid=next-step]");
    await page.waitForSelector(`.lesson[data-step="2"]`);
    const mine = `// my own notes for step 2\n${solutionOf(LESSON, 2)}`;
    await setEditorCode(page, mine);
    const saved = await savedWorkspace(lab, "my own notes for step 2");
    expect(saved.lessonId).toBe(LESSON);
    expect(Object.keys(saved.code).sort()).toEqual([`${LESSON}/1`, `${LESSON}/2`]);

    await page.reload();
    await waitInteractive(page);
    expect(await page.getAttribute(".lesson", "data-lesson")).toBe(LESSON);
    expect(await page.getAttribute(".lesson", "data-step")).toBe("2");
    expect((await shown(page)).split("\n")[0]).toBe("// my own notes for step 2");
    // Step 1 kept its own code: the solution typed there, not step 2's.
    await page.click(".lesson .steps li >> nth=0");
    await page.waitForSelector(`.lesson[data-step="1"]`);
    await page.waitForFunction(
      (first) => document.querySelector(".monaco-editor .view-line")?.textContent?.replace(/\u00a0/g, " ") === first,
      solutionOf(LESSON, 1).split("\n")[0],
    );
  }, 120_000);

  it("offers the next lesson once the last step passed, and opens it", async () => {
    await page.click(".lesson .steps li >> nth=1");
    await page.waitForSelector(`.lesson[data-step="2"]`);
    expect(await page.locator("[data-testid=next-lesson]").count()).toBe(0);
    await runAndWait(page);
    await page.waitForSelector("[data-testid=step-passed]", { timeout: 30_000 });
    await page.click("[data-testid=next-lesson]");
    await page.waitForSelector(`.lesson[data-lesson="${NEXT}"]`);
    await savedWorkspace(lab, `"lessonId": "${NEXT}"`);
    await page.reload();
    await waitInteractive(page);
    expect(await page.getAttribute(".lesson", "data-lesson")).toBe(NEXT);
  }, 120_000);
});
