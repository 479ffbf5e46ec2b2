/**
 * The app end to end, as a learner uses it: web mode on the simulator, Debian's Chromium,
 * clicks and keystrokes only. Screenshots of the main views go to test-results/.
 * Skips (visibly) where Chromium is not installed; CI installs it.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solutionOf, starterOf } from "./lessons.js";
import {
  checkMarks,
  editorText,
  hasChromium,
  runAndWait,
  screenshot,
  selectLesson,
  setEditorCode,
  stepThrough,
  type Lab,
  openLab,
  closeLab,
} from "./harness.js";

if (!hasChromium) console.warn("e2e: /usr/bin/chromium is not installed: the end-to-end tests are SKIPPED");

const FIVE = [
  "bypassing-the-kernel",
  "devices-ports-gids",
  "protection-domains-and-memory",
  "completion-queues",
  "qp-state-machine",
];

describe.skipIf(!hasChromium)("VerbsLab in Chromium (web mode, simulator)", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ lab, browser, page, errors } = await openLab(7));
  }, 240_000);

  afterAll(() => closeLab(lab, browser));

  it("opens on the first lesson's code, and marks the moment it became usable (bench:ui reads it)", async () => {
    expect(await page.locator(".lesson h1").count()).toBe(1);
    // Monaco draws the lines in view, with non-breaking spaces.
    const shown = (await editorText(page)).replace(/\u00a0/g, " ").split("\n");
    expect(shown.length).toBeGreaterThan(5);
    expect(starterOf("bypassing-the-kernel", 1).split("\n").slice(0, shown.length)).toEqual(shown);
    const marks = await page.evaluate(() => performance.getEntriesByName("verbslab:interactive").length);
    expect(marks).toBe(1);
  });

  it("shows the program read-only while Monaco loads, and is interactive only once Monaco drew it", async () => {
    const p = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    try {
      // Hold the editor's chunk back, as a slow load would.
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      await p.route(/\/assets\/EditorPane-[^/]*\.js$/, async (route) => {
        await held;
        await route.continue();
      });
      await p.goto(lab.url);
      await p.waitForSelector("[data-testid=code-preview] pre");
      const preview = (await p.locator("[data-testid=code-preview] pre").textContent()) ?? "";
      expect(preview).toBe(starterOf("bypassing-the-kernel", 1));
      expect(await p.locator(".monaco-editor").count()).toBe(0);
      expect(await p.evaluate(() => performance.getEntriesByName("verbslab:interactive").length)).toBe(0);
      await screenshot(p, "02-code-preview");
      release();
      await p.waitForSelector(".monaco-editor .view-line");
      await p.waitForFunction(() => performance.getEntriesByName("verbslab:interactive").length === 1);
      expect(await p.locator("[data-testid=code-preview]").count()).toBe(0);
    } finally {
      await p.close();
    }
  }, 120_000);

  it("completes the first five lessons through the UI", async () => {
    await screenshot(page, "01-lesson-start");
    for (const id of FIVE) {
      await selectLesson(page, id);
      const steps = await page.locator(".lesson .steps li").count();
      for (let s = 1; s <= steps; s++) {
        await page.waitForSelector(`.lesson[data-step="${s}"]`);
        // Type the reference solution into the editor, as a learner who solved it would.
        await setEditorCode(page, solutionOf(id, s));
        await runAndWait(page);
        try {
          await page.waitForSelector("[data-testid=step-passed]", { timeout: 30_000 });
        } catch (err) {
          await screenshot(page, `fail-${id}-step-${s}`);
          const why = await page.locator("[data-testid=checks], [data-testid=run-error]").allTextContents();
          throw new Error(`${id} step ${s} did not pass: ${why.join(" / ")}`, { cause: err });
        }
        const marks = await checkMarks(page);
        expect(marks.length).toBeGreaterThan(0);
        expect(marks.every((m) => m === "true")).toBe(true);
        if (id === "bypassing-the-kernel" && s === 1) await screenshot(page, "02-lesson-checks-green");
        if (s < steps) await page.click("[data-testid=next-step]");
      }
      const done = await page.$$eval(".lesson .steps .dot.done", (d) => d.length);
      expect(done).toBe(steps);
    }
    expect(errors).toEqual([]);
  }, 600_000);

  it("steps through a QP bring-up, watching the diagram and the query table change", async () => {
    // The full bring-up (lesson 5's last solution) in the editor, whichever step is open.
    await selectLesson(page, "qp-state-machine");
    await setEditorCode(page, solutionOf("qp-state-machine", 3));
    await page.keyboard.press("F10"); // Step: start paused before the first verb
    await page.waitForSelector("[data-testid=paused-before]");
    await screenshot(page, "03-step-paused");
    // Up to the first modify: the prediction is on the diagram before the step.
    const first = await stepThrough(page, 50, ".modify(");
    expect(await page.locator("[data-testid=prediction]").textContent()).toBe("prediction shown");
    expect(await page.locator(".qp-diagram .node.predicted").getAttribute("data-state")).toBe("INIT");
    await screenshot(page, "03b-step-prediction");
    const steps = [...first, ...(await stepThrough(page, 200))];
    await page.waitForSelector(".app[data-running=false]");
    await screenshot(page, "04-step-rts");
    // The diagram walked RESET → INIT → RTR → RTS, one transition per modify.
    const states = steps.map((s) => s.state).filter((s, i, all) => s && s !== all[i - 1]);
    expect(states).toEqual(["RESET", "INIT", "RTR", "RTS"]);
    // Before each state-changing modify the prediction was on screen, and after it qp_state was highlighted.
    const modifies = steps.filter((s) => s.pausedBefore?.includes(".modify("));
    expect(modifies.length).toBeGreaterThanOrEqual(6);
    expect(modifies.every((s) => s.predictedBefore)).toBe(true);
    expect(modifies.every((s) => s.changed.includes("attr.qp_state"))).toBe(true);
    expect(await page.locator(".query-table th .state-pill").allTextContents()).toEqual(["RTS", "RTS"]);
  }, 300_000);

  it("shows the missing attribute when a modify leaves out IBV_QP_DEST_QPN", async () => {
    await selectLesson(page, "qp-state-machine");
    const broken = solutionOf("qp-state-machine", 2).replace(/\s*\|\s*IBV_QP_DEST_QPN/g, "");
    expect(broken).not.toContain("| IBV_QP_DEST_QPN");
    await setEditorCode(page, broken);
    await runAndWait(page);
    const banner = page.locator("[data-testid=run-error]");
    await banner.waitFor();
    expect(await banner.getAttribute("data-code")).toBe("EINVAL");
    expect(await page.locator("[data-testid=error-attribute]").textContent()).toBe("IBV_QP_DEST_QPN");
    expect(await page.getAttribute(".qp-diagram .node.current", "data-state")).toBe("INIT");
    expect(await page.locator("[data-testid=failed-transition]").textContent()).toContain("EINVAL: DEST_QPN");
    await screenshot(page, "05-error-missing-attribute");
  }, 120_000);

  it("exports the transcript as JSON with every verb the program called", async () => {
    await page.click("[data-tab=transcript]");
    const rows = await page.locator(".transcript tbody tr").count();
    expect(rows).toBeGreaterThan(5);
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("button[data-export=json]")]);
    const text = readFileSync((await download.path())!, "utf8");
    const t = JSON.parse(text) as { header: { schema: string }; events: { kind: string; verb?: string }[] };
    expect(t.header.schema).toBe("verbslab.transcript");
    expect(t.events.filter((e) => e.kind === "verb")).toHaveLength(rows);
    expect(t.events.some((e) => e.verb === "ibv_modify_qp")).toBe(true);
    await screenshot(page, "06-transcript");
  }, 60_000);

  it("survives the backend process being killed, with the transcript intact", async () => {
    const rowsBefore = await page.locator(".transcript tbody tr").allTextContents();
    expect(rowsBefore.length).toBeGreaterThan(0);
    const pid = lab.web.supervisor.status().pid!;
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, "SIGKILL");
    await page.waitForSelector(".toast[data-level=error]", { timeout: 30_000 });
    await page.waitForSelector("[data-testid=backend-state][data-state=running]", { timeout: 60_000 });
    await page.waitForFunction(() =>
      /restarted/.test(document.querySelector("[data-testid=backend-state]")?.textContent ?? ""),
    );
    expect(lab.web.supervisor.status().pid).not.toBe(pid);
    await screenshot(page, "07-backend-restarted");
    // The panes still show every verb, and the host still has them.
    expect(await page.locator(".transcript tbody tr").allTextContents()).toEqual(rowsBefore);
    const files = readdirSync(lab.dataDir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(".jsonl"));
    expect(files.length).toBeGreaterThan(0);
    // And the app works again: a run goes through on the new process.
    await page.click(".lesson .steps li:nth-child(1)");
    await setEditorCode(page, solutionOf("qp-state-machine", 1));
    await runAndWait(page);
    await page.waitForSelector("[data-testid=step-passed]");
    expect(join(lab.dataDir)).toBeTruthy();
  }, 180_000);
});
