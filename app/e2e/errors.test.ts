/**
 * Bad input and failure as a learner meets them: a program that throws, a syntax error, a
 * completion with an error status, and the native backend where there is none. Each must
 * give a clear message on screen and lose nothing (the program in the editor, the
 * transcript already recorded), and the app must keep working afterwards.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { breakItOf, solutionOf } from "./lessons.js";
import {
  dismissNotices,
  downloadOf,
  editorText,
  hasChromium,
  importFile,
  rowVerb,
  runAndWait,
  screenshot,
  selectLesson,
  setEditorCode,
  transcriptRows,
  waitNotice,
  type Lab,
  openLab,
  closeLab,
} from "./harness.js";

const THROWS = `import { type Verbs } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  await ctx.allocPd();
  throw new Error("my own bug: forgot to create the CQ");
}
`;

const SYNTAX = `import { type Verbs } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd(;
}
`;

/** The editor's text with Monaco's non-breaking spaces made plain. */
const plain = async (page: Page) => (await editorText(page)).replace(/\u00a0/g, " ");

describe.skipIf(!hasChromium)("bad input and failures: a clear message, nothing lost", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ lab, browser, page, errors } = await openLab(5));
    await selectLesson(page, "qp-state-machine");
    await page.click("[data-tab=transcript]");
  }, 240_000);

  afterAll(() => closeLab(lab, browser));

  it("a program that throws: its message on screen, the verbs before it in the transcript", async () => {
    await setEditorCode(page, THROWS);
    await runAndWait(page);
    const banner = page.locator("[data-testid=run-error]");
    await banner.waitFor();
    expect(await banner.textContent()).toContain("my own bug: forgot to create the CQ");
    expect(await banner.locator("code").first().textContent()).toBe("Error");
    // The two verbs that ran are recorded, both ok.
    expect((await transcriptRows(page)).map(rowVerb)).toEqual(["ibv_open_device", "ibv_alloc_pd"]);
    // The JSON export says how the run ended.
    const t = JSON.parse((await downloadOf(page, "button[data-export=json]")).text) as {
      events: { kind: string; outcome?: string; error?: { message: string } }[];
    };
    // With the line and column of main.ts it came from (the throw's).
    expect(t.events.at(-1)).toMatchObject({
      kind: "end",
      outcome: "error",
      error: { message: "my own bug: forgot to create the CQ (main.ts line 6, column 9)", line: 6, column: 9 },
    });
    expect(await plain(page)).toBe(THROWS);
    expect(await page.isEnabled("button[data-action=run]")).toBe(true);
    await screenshot(page, "30-program-threw");
  }, 90_000);

  it("a syntax error: named with its line, nothing run, the last transcript kept", async () => {
    const before = await transcriptRows(page);
    expect(before.length).toBe(2);
    await setEditorCode(page, SYNTAX);
    // Monaco marks it as the learner types.
    await page.waitForSelector(".monaco-editor .squiggly-error", { timeout: 30_000 });
    await runAndWait(page);
    const banner = page.locator("[data-testid=run-error]");
    await banner.waitFor();
    const text = (await banner.textContent()) ?? "";
    expect(text).toMatch(/does not parse, so nothing ran/);
    expect(text).toMatch(/line 5, column \d+: .*expected/);
    await screenshot(page, "31-syntax-error");
    // Nothing ran: the transcript on screen is the previous run's, and the program is as typed.
    expect(await transcriptRows(page)).toEqual(before);
    expect(await plain(page)).toBe(SYNTAX);
    // Fixed, it runs.
    await setEditorCode(page, solutionOf("qp-state-machine", 1));
    await runAndWait(page);
    await page.waitForSelector("[data-testid=step-passed]", { timeout: 30_000 });
    expect(await page.locator("[data-testid=run-error]").count()).toBe(0);
    expect(errors).toEqual([]);
  }, 90_000);

  it("a completion with an error status is shown with what it means", async () => {
    await selectLesson(page, "first-message");
    await setEditorCode(page, breakItOf("first-message", 1, "recv-too-small"));
    await runAndWait(page);
    await page.click("[data-tab=cq]");
    const wcs = page.locator(".wc");
    await wcs.first().waitFor();
    const statuses = await wcs.evaluateAll((w) => w.map((x) => x.getAttribute("data-status")));
    expect(statuses).toContain("IBV_WC_LOC_QP_OP_ERR");
    expect(statuses).toContain("IBV_WC_REM_OP_ERR");
    // Each error completion carries an explanation under it.
    const bad = wcs.filter({ hasText: "IBV_WC_LOC_QP_OP_ERR" }).first();
    expect(((await bad.locator(".muted").textContent()) ?? "").length).toBeGreaterThan(20);
    // Both QPs end in ERR, on the diagram and in the query table.
    expect(await page.locator(".query-table th .state-pill").allTextContents()).toEqual(["ERR", "ERR"]);
    await screenshot(page, "32-cq-error");
    expect(errors).toEqual([]);
  }, 90_000);

  it("picking the native backend where there is none: a clear message, the session and transcript untouched", async () => {
    await dismissNotices(page);
    await page.click("[data-tab=transcript]");
    const before = await transcriptRows(page);
    expect(before.length).toBeGreaterThan(0);
    const picker = page.locator("select[aria-label=backend]");
    expect(await picker.inputValue()).toBe("sim");
    // The picker says up front that native is not available here, and why (its tooltip).
    const native = picker.locator("option[value=native]");
    expect(await native.textContent()).toMatch(/not available here/);
    expect(await native.getAttribute("title")).toMatch(/rdma|rxe|libibverbs|addon/i);
    await picker.selectOption("native");
    const n = await waitNotice(page, /native backend is not available/);
    expect(n.level).toBe("error");
    expect(n.text).toMatch(/Still on the simulator, nothing lost/);
    await screenshot(page, "34-native-picker-refused");
    expect(await picker.inputValue()).toBe("sim");
    expect(await page.getAttribute("[data-testid=backend-state]", "data-state")).toBe("running");
    // Nothing lost: the same transcript on screen and on the host (it still exports).
    expect(await transcriptRows(page)).toEqual(before);
    const t = JSON.parse((await downloadOf(page, "button[data-export=json]")).text) as { events: { kind: string }[] };
    expect(t.events.filter((e) => e.kind === "verb")).toHaveLength(before.length);
    expect(errors).toEqual([]);
  }, 90_000);

  it("asking for the native backend where there is none: a clear message, and the simulator carries on", async () => {
    await dismissNotices(page);
    await page.click("[data-tab=transcript]");
    const before = await transcriptRows(page);
    // A transcript recorded on real rxe replays on native, which this machine does not have.
    const t = JSON.parse((await downloadOf(page, "button[data-export=json]")).text) as {
      header: { backend: string };
      events: unknown[];
    };
    t.header.backend = "native";
    t.events = t.events.slice(0, 3); // another, shorter program than the one on screen
    await importFile(page, "from-the-lab.json", JSON.stringify(t));
    const n = await waitNotice(page, /Could not import/);
    expect(n.level).toBe("error");
    expect(n.text).toMatch(/native backend is not available/);
    expect(n.text).toMatch(/rdma|rxe|libibverbs/i);
    expect(await page.getAttribute("[data-testid=backend-state]", "data-state")).toBe("running");
    await screenshot(page, "33-native-unavailable");
    // The panes show the learner's transcript again (the host never left it), not the import that could not run.
    await page.waitForFunction((n) => document.querySelectorAll(".transcript tbody tr").length === n, before.length);
    expect(await transcriptRows(page)).toEqual(before);
    // The simulator still runs programs.
    await dismissNotices(page);
    await setEditorCode(page, solutionOf("first-message", 1));
    await runAndWait(page);
    expect(await page.locator("[data-testid=run-error]").count()).toBe(0);
    const rows = await transcriptRows(page);
    expect(rows.length).toBeGreaterThanOrEqual(before.length - 2);
    expect(rows.filter((r) => rowVerb(r) === "ibv_post_send").length).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  }, 90_000);
});
