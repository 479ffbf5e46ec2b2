/**
 * The main views mid bring-up, looked at closely: the query table's highlighted diffs (with
 * the value each field had before), the diagram on the state just entered, and close-up
 * screenshots of each pane for test-results/.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solutionOf } from "./lessons.js";
import {
  hasChromium,
  screenshot,
  screenshotOf,
  selectLesson,
  setEditorCode,
  stepThrough,
  type Lab,
  openLab,
  closeLab,
} from "./harness.js";

describe.skipIf(!hasChromium)("the views mid bring-up", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ lab, browser, page, errors } = await openLab(9));
  }, 240_000);

  afterAll(() => closeLab(lab, browser));

  it("highlights what INIT → RTR changed in ibv_query_qp, with the old values, and moves the diagram", async () => {
    await selectLesson(page, "qp-state-machine");
    await screenshotOf(page, ".panel[aria-label=lesson]", "40-lesson-pane");
    // Markdown fully rendered: no stray backticks or asterisks in the lesson text.
    const prose = await page.locator(".lesson .prose").first().innerText();
    expect(prose).toContain("ibv_query_qp");
    expect(prose).not.toMatch(/[`]|\*\*/);
    await setEditorCode(page, solutionOf("qp-state-machine", 3));
    await page.click("button[data-action=step]");
    await page.waitForSelector("[data-testid=paused-before]");
    // Up to the first INIT → RTR modify, then let exactly that one through.
    await stepThrough(page, 60, "RTR");
    expect(await page.locator("[data-testid=paused-before]").textContent()).toMatch(/modify\(.*RTR/);
    await stepThrough(page, 1);

    const changed = await page.$$eval(".query-table td.changed", (tds) =>
      tds.map((td) => ({
        field: td.getAttribute("data-field"),
        was: td.querySelector(".was")?.textContent ?? null,
        now: td.lastChild?.textContent ?? null,
      })),
    );
    const fields = changed.map((c) => c.field);
    for (const f of ["attr.qp_state", "attr.path_mtu", "attr.dest_qp_num", "attr.rq_psn"]) expect(fields).toContain(f);
    // Only one QP moved: nothing of the other column is highlighted.
    const columns = await page.$$eval(".query-table tbody tr", (trs) =>
      trs.flatMap((tr) =>
        [...tr.querySelectorAll("td.value")].map((td, i) => (td.classList.contains("changed") ? i : -1)),
      ),
    );
    expect(new Set(columns.filter((i) => i >= 0)).size).toBe(1);
    const state = changed.find((c) => c.field === "attr.qp_state")!;
    expect(state.was).toMatch(/INIT/);
    expect(state.now).toMatch(/RTR/);
    expect(changed.find((c) => c.field === "attr.path_mtu")?.now).toMatch(/IBV_MTU_1024/);
    // The diagram: the QP that moved has its chip on RTR; its peer (the next verb's QP, now in focus) is still in INIT.
    const moved =
      (await page
        .locator(".query-table th")
        .nth(1 + [...columns].find((i) => i >= 0)!)
        .textContent()) ?? "";
    // The same name in both: the learner's variable and the QPN (model/names.ts).
    const name = /^(?:\S+ )?\(?QP 0x[0-9a-f]+\)?/.exec(moved)?.[0];
    expect(name).toBeDefined();
    expect(await page.locator(".qp-diagram .node[data-state=RTR] .chip:not(.ghost)").allTextContents()).toEqual([name]);
    expect(await page.getAttribute(".qp-diagram .node.current", "data-state")).toBe("INIT");
    expect(await page.locator("[data-testid=paused-before]").textContent()).toMatch(/modify\(.*RTR/);
    await screenshot(page, "08-query-table-diff");
    await screenshotOf(page, ".panel[aria-label=ibv_query_qp]", "08b-query-table-diff-closeup");
    await screenshotOf(page, ".panel[aria-label='QP state diagram']", "08c-diagram-mid-bring-up");

    // The connection pane flags what the two sides do not agree on yet (b is still in INIT).
    await page.click("[data-tab=connection]");
    await screenshotOf(page, ".inspector-tabs", "09-connection-mid-bring-up");

    await page.keyboard.press("F8");
    await page.waitForSelector(".app[data-running=false]", { timeout: 60_000 });
    expect(await page.locator(".query-table th .state-pill").allTextContents()).toEqual(["RTS", "RTS"]);
    await page.click("[data-tab=transcript]");
    await screenshotOf(page, ".panel:has(.transcript)", "09b-transcript-pane");
    await page.click("[data-tab=mr]");
    expect(await page.locator(".inspector-tabs .hex").count()).toBeGreaterThan(0);
    await screenshotOf(page, ".inspector-tabs", "09c-memory-closeup");
    await page.click("[data-tab=counters]");
    await screenshotOf(page, ".inspector-tabs", "09d-counters-closeup");
    expect(errors).toEqual([]);
  }, 180_000);
});
