/**
 * The editor as a learner uses it: completion and hover docs that come from the verbs
 * contract's TSDoc (the typings Monaco is fed), and the keyboard shortcuts for run, step,
 * continue and stop, pressed with the focus in the editor and outside it.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solutionOf } from "./lessons.js";
import {
  editorText,
  hoverEditorText,
  hasChromium,
  screenshot,
  selectLesson,
  setEditorCode,
  transcriptRows,
  type Lab,
  openLab,
  closeLab,
} from "./harness.js";

const HEAD = `import { IBV_ACCESS_LOCAL_WRITE, type Verbs } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd();
`;

/** Numbers the app exposes for tests: the last event's seq, and the seq of the verb waiting at the gate. */
async function seqs(page: Page): Promise<{ seq: number; gate: number; running: boolean }> {
  return page.$eval(".app", (a) => ({
    seq: Number((a as HTMLElement).dataset.seq),
    gate: Number((a as HTMLElement).dataset.gateSeq),
    running: (a as HTMLElement).dataset.running === "true",
  }));
}

describe.skipIf(!hasChromium)("the editor: completion, hover docs, keyboard shortcuts", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ lab, browser, page, errors } = await openLab(3));
    await selectLesson(page, "qp-state-machine");
  }, 240_000);

  afterAll(() => closeLab(lab, browser));

  it("completes pd. with the verbs, and shows regMr's TSDoc next to it", async () => {
    // The program ends mid-line, so Ctrl+End puts the cursor right after "pd.".
    await setEditorCode(page, HEAD + "  const mr = await pd.");
    await page.keyboard.press("Control+End");
    await page.keyboard.type("reg");
    // Suggestions come up as the learner types (or on Ctrl+Space, once the TypeScript worker is warm).
    const widget = page.locator(".suggest-widget.visible");
    await widget.waitFor({ timeout: 5_000 }).catch(() => page.keyboard.press("Control+Space"));
    await widget.waitFor({ timeout: 30_000 });
    const row = widget.locator(".monaco-list-row", { hasText: "regMr" }).first();
    await row.waitFor();
    expect(await row.textContent()).toMatch(/regMr\(memory: .*access: number\)/);
    // Readable: the name sits inside its row (a page style once crushed Monaco's rows to half a line).
    const fits = await row.evaluate((r) => {
      const name = r.querySelector(".label-name") ?? r.querySelector(".monaco-icon-label");
      if (!name) return "no label";
      const a = r.getBoundingClientRect();
      const b = name.getBoundingClientRect();
      return b.top >= a.top - 1 && b.bottom <= a.bottom + 1 && b.height >= 12
        ? "fits"
        : `${b.top}-${b.bottom} in ${a.top}-${a.bottom}`;
    });
    expect(fits).toBe("fits");
    // "Show More" (Ctrl+Space) opens the details with the TSDoc from verbs-api.ts.
    const details = page.locator(".suggest-details");
    if (!(await details.isVisible())) await page.keyboard.press("Control+Space");
    await page.waitForFunction(() =>
      /ibv_reg_mr: the bytes are copied/.test(document.querySelector(".suggest-details")?.textContent ?? ""),
    );
    await screenshot(page, "20-editor-completion");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => !document.querySelector(".suggest-widget.visible"));
    expect((await editorText(page)).replace(/\u00a0/g, " ")).toContain("const mr = await pd.regMr");
  }, 90_000);

  it("shows the verbs' TSDoc when hovering over a call", async () => {
    await setEditorCode(
      page,
      HEAD +
        `  const mr = await pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
  const sge = mr.sge(0, 8);
  await verbs.log("sge", sge);
}
`,
    );
    const hoverDoc = async (token: string, re: RegExp) => {
      await page.mouse.move(0, 0);
      await page.waitForFunction(() => !document.querySelector(".monaco-hover:not(.hidden) .hover-contents"));
      const hover = await hoverEditorText(page, token, re);
      // Visible in full: the hover's right edge is not cut off by the editor's panel.
      const visible = await hover.evaluate((h) => {
        const r = h.getBoundingClientRect();
        const hit = document.elementFromPoint(r.right - 4, r.top + r.height / 2);
        return !!hit && h.contains(hit);
      });
      expect(visible).toBe(true);
      return (await hover.textContent()) ?? "";
    };
    expect(await hoverDoc(".regMr", /ibv_reg_mr/)).toMatch(/the bytes are copied to the backend's memory/);
    await screenshot(page, "21-editor-hover");
    expect(await hoverDoc(".sge", /An SGE over/)).toMatch(/Not a verb: no await needed/);
    expect(await hoverDoc(".openDevice", /ibv_open_device/)).toMatch(/by name/);
  }, 90_000);

  it("flags a misspelt verb in the editor before it runs", async () => {
    await setEditorCode(page, HEAD + "  await pd.regMR(64, IBV_ACCESS_LOCAL_WRITE);\n}\n");
    // TypeScript's marker (a squiggle) names the verb the learner meant.
    await page.waitForSelector(".monaco-editor .squiggly-error", { timeout: 30_000 });
    const hover = await hoverEditorText(page, "regMR", /regMR/);
    expect(await hover.textContent()).toMatch(/Did you mean 'regMr'\?/);
  }, 90_000);

  it("steps with F10 and continues with F8 while typing in the editor: one verb per press", async () => {
    await page.mouse.move(0, 0);
    await setEditorCode(page, solutionOf("qp-state-machine", 3));
    await page.click(".monaco-editor .view-lines");
    await page.keyboard.press("F10");
    await page.waitForSelector("[data-testid=paused-before]");
    const start = await seqs(page);
    expect(start.running).toBe(true);
    expect(start.gate).toBe(start.seq + 1);
    expect(await page.locator("[data-testid=paused-before]").textContent()).toMatch(/paused before .*openDevice/);
    // The toolbar may cut the call short (a narrow editor column); its tooltip has all of it.
    expect(await page.getAttribute("[data-testid=paused-before]", "title")).toMatch(
      /^paused before .*openDevice\(.*rxe0/,
    );
    for (let i = 1; i <= 3; i++) {
      await page.keyboard.press("F10");
      await page.waitForFunction(
        (g) => Number(document.querySelector<HTMLElement>(".app")!.dataset.gateSeq) > g,
        start.gate + i - 1,
      );
      // Exactly one verb went through (a key handled twice would let two through).
      expect(await seqs(page)).toMatchObject({ seq: start.seq + i, gate: start.gate + i, running: true });
    }
    const runs = Number(await page.getAttribute(".app", "data-runs"));
    await page.keyboard.press("F8");
    await page.waitForSelector(`.app[data-runs="${runs + 1}"][data-running=false]`, { timeout: 60_000 });
    await page.click("[data-tab=transcript]");
    const rows = await transcriptRows(page);
    expect(rows.filter((r) => r.includes("ibv_modify_qp"))).toHaveLength(6);
    expect(await page.locator(".query-table th .state-pill").allTextContents()).toEqual(["RTS", "RTS"]);
    expect(errors).toEqual([]);
  }, 120_000);

  it("runs with Ctrl+Enter and stops with Shift+F5, with the focus outside the editor too", async () => {
    // Outside the editor: the lesson text has the focus.
    await page.click(".lesson h1");
    let runs = Number(await page.getAttribute(".app", "data-runs"));
    await page.keyboard.press("Control+Enter");
    await page.waitForSelector(`.app[data-runs="${runs + 1}"][data-running=false]`, { timeout: 60_000 });
    expect(await page.locator("[data-testid=run-error]").count()).toBe(0);
    expect((await transcriptRows(page)).filter((r) => r.includes("ibv_modify_qp"))).toHaveLength(6);

    // F10 from outside starts paused; Shift+F5 stops: the program ends, the app says so.
    runs = Number(await page.getAttribute(".app", "data-runs"));
    await page.keyboard.press("F10");
    await page.waitForSelector("[data-testid=paused-before]");
    await page.keyboard.press("F10");
    await page.waitForFunction(() => Number(document.querySelector<HTMLElement>(".app")!.dataset.seq) >= 1);
    await page.keyboard.press("Shift+F5");
    await page.waitForSelector(`.app[data-runs="${runs + 1}"][data-running=false]`, { timeout: 30_000 });
    expect(await page.locator(".panel[aria-label=editor] .notice").textContent()).toBe("Stopped.");
    expect(await page.locator("[data-testid=paused-before]").count()).toBe(0);
    // The transcript keeps what ran before the stop, and says it was stopped.
    const rows = await transcriptRows(page);
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows[0]).toContain("ibv_open_device");
    await screenshot(page, "22-stopped");
    expect(errors).toEqual([]);
  }, 120_000);
});
