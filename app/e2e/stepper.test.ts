/**
 * The stepper points at the code: paused at a verb, the editor highlights that verb's line;
 * a transcript row shows its line; a runtime error marks its line; each line's outcome sits
 * after it; Continue is off while the program runs; type errors ask first; the Quick Fix
 * imports a verbs constant. Lines are checked where Monaco draws them (the highlighted line's
 * box against the line number's), not only in the app's data attributes.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  hasChromium,
  hoverEditorText,
  screenshot,
  selectLesson,
  setEditorCode,
  type Lab,
  openLab,
  closeLab,
  runAndWait,
} from "./harness.js";

const PROGRAM = `import { IBV_QPT_RC, IBV_QPS_INIT, IBV_QP_STATE, type Verbs } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(16);
  const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  await verbs.log("made a");
  await a.modify({ qp_state: IBV_QPS_INIT }, IBV_QP_STATE);
}
`;

/** Monaco draws spaces as no-break spaces. */
const text = (s: string | null) => (s ?? "").replace(/\u00a0/g, " ");

/**
 * The line the editor shows `className` on (the paused and revealed lines' bands, the error line's
 * decoration), by the line number Monaco draws beside it. Monaco draws decorations, and scrolls,
 * on its next animation frame, so callers poll it.
 */
async function decoratedLine(page: Page, className: string): Promise<number | null> {
  return page.evaluate((cls) => {
    const mark = document.querySelector(`.monaco-editor .${cls}:not([hidden])`);
    if (!mark) return null;
    const top = mark.getBoundingClientRect().top;
    const numbers = [...document.querySelectorAll(".monaco-editor .margin-view-overlays .line-numbers")];
    const at = numbers.find((n) => Math.abs(n.getBoundingClientRect().top - top) < 2);
    return at ? Number(at.textContent) : null;
  }, className);
}

const pausedSeq = (page: Page) => page.$eval(".app", (a) => Number((a as HTMLElement).dataset.gateSeq));

async function stepTo(page: Page, line: number) {
  for (let i = 0; i < 20; i++) {
    if ((await page.getAttribute(".editor-wrap", "data-paused-line")) === String(line)) return;
    const g = await pausedSeq(page);
    await page.click("button[data-action=step]");
    await page.waitForFunction((s) => Number(document.querySelector<HTMLElement>(".app")!.dataset.gateSeq) > s, g, {
      timeout: 30_000,
    });
  }
  throw new Error(`never paused at line ${line}`);
}

describe.skipIf(!hasChromium)("the stepper points at the code", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ lab, browser, page, errors } = await openLab(5));
  }, 240_000);

  afterAll(() => closeLab(lab, browser));

  it("paused at a verb, the editor highlights that verb's line; the status names it in the learner's terms", async () => {
    await setEditorCode(page, PROGRAM);
    await page.click("button[data-action=step]");
    await page.waitForSelector("[data-testid=paused-before]");
    await expect.poll(() => decoratedLine(page, "vl-paused-line"), { timeout: 10_000 }).toBe(4);
    await stepTo(page, 5);
    await expect.poll(() => decoratedLine(page, "vl-paused-line"), { timeout: 10_000 }).toBe(5);
    await stepTo(page, 10);
    await expect.poll(() => decoratedLine(page, "vl-paused-line"), { timeout: 10_000 }).toBe(10);
    // And the bar in the gutter beside that line's number.
    expect(await decoratedLine(page, "vl-paused-glyph")).toBe(10);
    const status = (await page.locator("[data-testid=paused-before]").textContent()) ?? "";
    // The QP by the learner's variable and its number, and the line: no internal "qp0".
    expect(status).toMatch(/^line 10paused before a \(QP 0x[0-9a-f]+\)\.modify\(→ INIT/);
    expect(status).not.toMatch(/qp0|ctx0/);
    // The diagram and the query table call it the same.
    const name = /a \(QP 0x[0-9a-f]+\)/.exec(status)![0];
    expect(await page.locator(".qp-diagram .chip text").first().textContent()).toBe(name);
    expect(await page.locator(".query-table th").nth(1).textContent()).toContain(name);
    // Both read whole: the paused verb on the toolbar's row of its own, the model's prediction
    // (a long list of attributes) wrapped under the diagram.
    const clipped = (sel: string) => page.$eval(sel, (el) => el.scrollWidth > el.clientWidth + 1);
    expect(await clipped("[data-testid=paused-before]")).toBe(false);
    expect(await page.locator("[data-testid=predicted-error]").textContent()).toMatch(
      /^predicted: EINVAL — RESET → INIT needs .*IBV_QP_PORT: the mask has none of them/,
    );
    expect(await clipped("[data-testid=predicted-error]")).toBe(false);
    await screenshot(page, "60-stepper-paused-line");
    // Pointing at the paused line says why it is marked (a hover of its own: the mark is no decoration).
    await hoverEditorText(page, "modify", /paused before this line's verb/);
    await page.mouse.move(0, 0);
    // Continue: the modify fails, and its outcome sits after its line.
    const runs = Number(await page.getAttribute(".app", "data-runs"));
    await page.click("button[data-action=continue]");
    await page.waitForSelector(`.app[data-runs="${runs + 1}"]`, { timeout: 30_000 });
    await page.waitForSelector(".monaco-editor .vl-result-bad");
    expect(text(await page.locator(".monaco-editor .vl-result-bad").first().textContent())).toMatch(
      /→ EINVAL: missing IBV_QP_/,
    );
    const results = (await page.locator(".monaco-editor .vl-result").allTextContents()).map(text);
    expect(results.some((r) => r.includes(`→ ${name}`))).toBe(true);
    await expect.poll(() => decoratedLine(page, "vl-paused-line"), { timeout: 10_000 }).toBeNull();
    expect(await decoratedLine(page, "vl-paused-glyph")).toBeNull();
    await screenshot(page, "61-stepper-line-results");
  }, 120_000);

  it("clicking a transcript row or a log line reveals and highlights its line", async () => {
    await page.click("[data-tab=transcript]");
    await page.locator(".transcript tr.linked", { hasText: "ibv_alloc_pd" }).click();
    await page.waitForFunction(
      () => document.querySelector(".editor-wrap")?.getAttribute("data-revealed-line") === "5",
    );
    await expect.poll(() => decoratedLine(page, "vl-revealed-line"), { timeout: 10_000 }).toBe(5);
    await page.locator(".transcript tr.linked", { hasText: "ibv_modify_qp" }).click();
    await page.waitForFunction(
      () => document.querySelector(".editor-wrap")?.getAttribute("data-revealed-line") === "10",
    );
    await expect.poll(() => decoratedLine(page, "vl-revealed-line"), { timeout: 10_000 }).toBe(10);
    await page.click("[data-tab=log]");
    await page.locator(".log-line.linked", { hasText: "made a" }).click();
    await page.waitForFunction(
      () => document.querySelector(".editor-wrap")?.getAttribute("data-revealed-line") === "9",
    );
    await expect.poll(() => decoratedLine(page, "vl-revealed-line"), { timeout: 10_000 }).toBe(9);
    await page.click("[data-tab=transcript]");
  }, 60_000);

  it("a ReferenceError names its line and column, and the editor marks that line", async () => {
    await setEditorCode(
      page,
      `import type { Verbs } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  // @ts-expect-error: the learner's typo, on purpose
  const pd = await ctxx.allocPd();
}
`,
    );
    await runAndWait(page);
    const banner = (await page.locator("[data-testid=run-error]").textContent()) ?? "";
    expect(banner).toMatch(/ReferenceError/);
    // The line, and a column on the statement (V8 names the awaited expression that threw).
    const column = Number(/main\.ts line 6, column (\d+)/.exec(banner)?.[1]);
    expect(column).toBeGreaterThanOrEqual(14);
    expect(column).toBeLessThanOrEqual(20);
    await expect.poll(() => decoratedLine(page, "vl-error-line"), { timeout: 10_000 }).toBe(6);
    await screenshot(page, "62-stepper-reference-error");
  }, 60_000);

  it("an unawaited verb that fails ends the program at its line", async () => {
    await setEditorCode(
      page,
      `import { IBV_QPS_RTS, IBV_QP_STATE, IBV_QPT_RC, type Verbs } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(4);
  const cap = { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  void qp.modify({ qp_state: IBV_QPS_RTS }, IBV_QP_STATE);
  await verbs.sleep(1);
}
`,
    );
    await runAndWait(page);
    const banner = (await page.locator("[data-testid=run-error]").textContent()) ?? "";
    expect(banner).toMatch(/EINVAL/);
    expect(banner).toMatch(/at main\.ts line 9, column \d+ — the call was not awaited/);
    await expect.poll(() => decoratedLine(page, "vl-error-line"), { timeout: 10_000 }).toBe(9);
  }, 60_000);

  it("Continue is disabled while the program runs, enabled while it is paused", async () => {
    await setEditorCode(
      page,
      `import type { Verbs } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const cq = await ctx.createCq(4);
  for (let i = 0; i < 400; i++) await cq.poll(1);
}
`,
    );
    await page.click("button[data-action=step]");
    await page.waitForSelector("[data-testid=paused-before]");
    expect(await page.isEnabled("button[data-action=continue]")).toBe(true);
    await page.click("button[data-action=continue]");
    await page.waitForSelector(".app[data-running=true][data-paused=false]");
    expect(await page.isDisabled("button[data-action=continue]")).toBe(true);
    expect(await page.isEnabled("button[data-action=stop]")).toBe(true);
    await page.waitForSelector(".app[data-running=false]", { timeout: 60_000 });
    // A loop's line says how often it ran.
    await expect
      .poll(() => page.locator(".monaco-editor .vl-result", { hasText: "(×400)" }).count(), { timeout: 10_000 })
      .toBe(1);
  }, 90_000);

  it("a program with type errors asks before it runs", async () => {
    await setEditorCode(
      page,
      `import type { Verbs } from "verbslab";

export default async function main(verbs: Verbs) {
  const n: number = "one";
  const m: string = 2;
  await verbs.openDevice("rxe0");
}
`,
    );
    const runs = Number(await page.getAttribute(".app", "data-runs"));
    await page.click("button[data-action=run]");
    await page.waitForSelector("[data-testid=type-errors]");
    expect(await page.locator("[data-testid=type-errors]").textContent()).toMatch(/^2 type errors: run anyway\?/);
    // Each error says where and what, in the prompt itself; its line number shows the line.
    const problems = page.locator("[data-testid=type-errors] li");
    expect(await problems.allTextContents()).toEqual([
      expect.stringMatching(/^line 4 Type 'string' is not assignable to type 'number'/),
      expect.stringMatching(/^line 5 Type 'number' is not assignable to type 'string'/),
    ]);
    await page.locator("[data-testid=type-error-line]").nth(1).click();
    await expect.poll(() => page.getAttribute(".editor-wrap", "data-revealed-line")).toBe("5");
    await screenshot(page, "65-stepper-type-errors");
    expect(await page.getAttribute(".app", "data-running")).toBe("false");
    await page.click("button[data-action=run-anyway]");
    await page.waitForSelector(`.app[data-runs="${runs + 1}"]`, { timeout: 30_000 });
    expect(await page.locator("[data-testid=type-errors]").count()).toBe(0);
  }, 60_000);

  it("the Quick Fix imports a verbs constant that is used but not imported", async () => {
    await setEditorCode(
      page,
      `import { type Verbs } from "verbslab";

export default async function main(verbs: Verbs) {
  const s = IBV_QPS_INIT;
}
`,
    );
    // TypeScript's marker comes when its worker has checked the new program: until then the
    // light bulb has nothing to offer, so ask again (Escape closes an empty menu).
    const fix = page.locator(".action-widget .monaco-list-row", { hasText: 'Import IBV_QPS_INIT from "verbslab"' });
    for (let i = 0; i < 10 && !(await fix.isVisible()); i++) {
      await page.keyboard.press("Escape");
      await page
        .locator(".monaco-editor .view-line", { hasText: "IBV_QPS_INIT" })
        .locator("span", { hasText: "IBV_QPS_INIT" })
        .last()
        .click();
      await page.keyboard.press("Control+.");
      await fix.waitFor({ timeout: 2_000 }).catch(() => {});
    }
    await fix.waitFor({ timeout: 2_000 });
    await screenshot(page, "63-stepper-quick-fix");
    await fix.click();
    // The import now names it, and TypeScript's error on it is gone.
    await page.waitForFunction(() =>
      /import \{ IBV_QPS_INIT, type Verbs \} from "verbslab"/.test(
        [...document.querySelectorAll(".monaco-editor .view-line")]
          .map((l) => (l as HTMLElement).innerText.replace(/\u00a0/g, " "))
          .join("\n"),
      ),
    );
    await page.waitForSelector(".monaco-editor .squiggly-error", { state: "detached", timeout: 30_000 });
    expect(errors).toEqual([]);
  }, 60_000);

  it("on another lesson, the last run's results are marked as from before and point at no line", async () => {
    await setEditorCode(page, PROGRAM);
    await runAndWait(page);
    expect(await page.getAttribute(".app", "data-stale")).toBe("false");
    await expect.poll(() => page.locator(".monaco-editor .vl-result").count(), { timeout: 10_000 }).toBeGreaterThan(0);
    await selectLesson(page, "qp-state-machine");
    await page.waitForSelector("[data-testid=stale-results]");
    expect(await page.getAttribute(".app", "data-stale")).toBe("true");
    // The editor shows the new step's program: none of the old run's outcomes, no rows linking into it.
    await expect.poll(() => page.locator(".monaco-editor .vl-result").count(), { timeout: 10_000 }).toBe(0);
    await page.click("[data-tab=transcript]");
    expect(await page.locator(".transcript tbody tr").count()).toBeGreaterThan(0);
    expect(await page.locator(".transcript tr.linked").count()).toBe(0);
    await screenshot(page, "64-stepper-stale-results");
    // This step's own run: its results, current again.
    await runAndWait(page);
    expect(await page.getAttribute(".app", "data-stale")).toBe("false");
    expect(await page.locator("[data-testid=stale-results]").count()).toBe(0);
  }, 90_000);
});
