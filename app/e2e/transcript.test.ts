/**
 * The transcript end to end: a send/receive program recorded through the UI, the inspector
 * views it fills (connection, completions, memory, counters), each export button's download
 * read back and checked, a JSON export imported and replayed, and bad files refused with a
 * clear message while the transcript on screen stays as it was.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solutionOf } from "./lessons.js";
import {
  dismissNotices,
  downloadOf,
  editorText,
  hasChromium,
  importFile,
  runAndWait,
  screenshot,
  selectLesson,
  setEditorCode,
  rowVerb,
  transcriptRows,
  waitNotice,
  type Lab,
  openLab,
  closeLab,
} from "./harness.js";

interface JsonTranscript {
  header: { schema: string; backend: string; program?: string };
  events: { kind: string; seq: number; verb?: string; error?: { code?: string } }[];
}

const hasCc = existsSync("/usr/bin/gcc") && existsSync("/usr/include/infiniband/verbs.h");

describe.skipIf(!hasChromium)("the transcript: record, inspect, export, import, replay", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  /** The rows of the recorded send/receive program, as the Transcript pane shows them. */
  let recorded: string[] = [];
  let json = "";

  beforeAll(async () => {
    ({ lab, browser, page, errors } = await openLab(11));
  }, 240_000);

  afterAll(() => closeLab(lab, browser));

  it("records a send/receive program and fills the connection, completion, memory and counter views", async () => {
    await selectLesson(page, "first-message");
    await setEditorCode(page, solutionOf("first-message", 2));
    await runAndWait(page);
    await page.click("[data-tab=transcript]");
    recorded = await transcriptRows(page);
    // 2 QPs × 3 modifies, 3 receives, 3 sends, the poll: every verb is a row.
    expect(recorded.length).toBeGreaterThan(15);
    expect(recorded.filter((r) => rowVerb(r) === "ibv_post_send")).toHaveLength(3);
    expect(recorded.filter((r) => rowVerb(r) === "ibv_post_recv")).toHaveLength(3);
    expect(recorded.every((r) => r.endsWith("| ok"))).toBe(true);
    expect(await page.locator("[data-tab=transcript]").textContent()).toContain(`Transcript (${recorded.length})`);

    await page.click("[data-tab=connection]");
    const connection = page.locator(".inspector-tabs [role=tabpanel]");
    await connection.locator(".connection").first().waitFor();
    expect(await connection.textContent()).toContain("agree on everything");
    await screenshot(page, "10-connection");

    await page.click("[data-tab=cq]");
    expect(await page.locator("[data-tab=cq]").textContent()).toBe("Completions (6)");
    expect(await page.locator(".wc").evaluateAll((w) => w.map((x) => x.getAttribute("data-status")))).toEqual(
      Array(6).fill("IBV_WC_SUCCESS"),
    );
    await screenshot(page, "11-completions");

    await page.click("[data-tab=mr]");
    // "one two three" was written at offset 0 and the three messages landed at 128.
    const hex = (await page.locator(".inspector-tabs .hex").first().textContent()) ?? "";
    expect(hex).toContain("one two three");
    expect(hex).toMatch(/6f 6e 65/); // "one"
    await screenshot(page, "12-memory");

    await page.click("[data-tab=counters]");
    const counters = await page.locator(".inspector-tabs table.grid tbody tr").allTextContents();
    expect(counters.length).toBeGreaterThan(0);
    expect(counters.some((r) => /sent_pkts|rcvd_pkts/.test(r))).toBe(true);
    await screenshot(page, "13-counters");
    expect(errors).toEqual([]);
  }, 120_000);

  it("exports JSON that parses and lists every verb on screen", async () => {
    await page.click("[data-tab=transcript]");
    const out = await downloadOf(page, "button[data-export=json]");
    expect(out.name).toMatch(/^verbslab-.*\.json$/);
    json = out.text;
    const t = JSON.parse(json) as JsonTranscript;
    expect(t.header.schema).toBe("verbslab.transcript");
    expect(t.header.backend).toBe("sim");
    const verbs = t.events.filter((e) => e.kind === "verb");
    expect(verbs).toHaveLength(recorded.length);
    expect(verbs.map((e) => e.verb)).toEqual(recorded.map(rowVerb));
    expect(t.events.at(-1)).toMatchObject({ kind: "end", outcome: "ok" });
  }, 60_000);

  it("exports Markdown that names the verbs and the state changes", async () => {
    const md = await downloadOf(page, "button[data-export=md]");
    expect(md.name).toMatch(/\.md$/);
    expect(md.text).toMatch(/^# VerbsLab transcript/);
    for (const verb of ["ibv_open_device", "ibv_reg_mr", "ibv_modify_qp", "ibv_post_recv", "ibv_post_send"])
      expect(md.text).toContain(`. ${verb}`);
    expect(md.text).toMatch(/RESET → INIT/);
    expect(md.text).toMatch(/IBV_WC_SUCCESS/);
    expect(md.text).toContain("## End: ok");
  }, 60_000);

  it("exports self-contained HTML that shows the same calls when opened", async () => {
    const html = await downloadOf(page, "button[data-export=html]");
    expect(html.name).toMatch(/\.html$/);
    expect(html.text).toMatch(/^<!doctype html>/i);
    // Self-contained: nothing fetched from anywhere.
    expect(html.text).not.toMatch(/<(script|img|link)[^>]+(src|href)=["']?(https?:|\/\/)/i);
    const view = await browser.newPage();
    try {
      await view.setContent(html.text);
      const text = (await view.locator("body").innerText()) ?? "";
      for (const verb of ["ibv_modify_qp", "ibv_post_send", "ibv_post_recv"]) expect(text).toContain(verb);
      expect(text).toMatch(/IBV_WC_SUCCESS/);
    } finally {
      await view.close();
    }
  }, 60_000);

  it("exports the packets as a pcap, saying where a capture on real rxe sees them", async () => {
    const button = page.locator("button[data-export=pcap]");
    expect(await button.getAttribute("title")).toContain("looped inside rxe");
    const [download] = await Promise.all([page.waitForEvent("download", { timeout: 30_000 }), button.click()]);
    expect(download.suggestedFilename()).toMatch(/\.pcap$/);
    const bytes = readFileSync((await download.path())!);
    expect(bytes.readUInt32LE(0)).toBe(0xa1b2c3d4);
    expect(bytes.readUInt32LE(20)).toBe(1); // LINKTYPE_ETHERNET
    // At least one frame: the program's SENDs and their ACKs.
    expect(bytes.length).toBeGreaterThan(24 + 16 + 60);
    await page.locator(".transcript .toolbar").screenshot({ path: "test-results/transcript-export-toolbar.png" });
  }, 60_000);

  it("exports a C program with the same verbs that compiles against <infiniband/verbs.h>", async () => {
    const c = await downloadOf(page, "button[data-export=c]");
    expect(c.name).toMatch(/\.c$/);
    expect(c.text).toContain("#include <infiniband/verbs.h>");
    expect(c.text).toMatch(/\bint main\s*\(/);
    for (const fn of ["ibv_open_device", "ibv_alloc_pd", "ibv_reg_mr", "ibv_create_qp", "ibv_modify_qp"])
      expect(c.text).toContain(`${fn}(`);
    expect(c.text.match(/ibv_post_send\(/g)?.length ?? 0).toBeGreaterThanOrEqual(3);
    expect(c.text.match(/ibv_post_recv\(/g)?.length ?? 0).toBeGreaterThanOrEqual(3);
    expect(c.text).toContain("IBV_WR_SEND_WITH_IMM");
    if (hasCc) {
      const dir = mkdtempSync(join(tmpdir(), "verbslab-c-"));
      writeFileSync(join(dir, c.name), c.text);
      // Throws (and fails the test) with the compiler's message if the program does not compile.
      execFileSync("gcc", ["-fsyntax-only", "-Wall", "-Werror", join(dir, c.name)], { stdio: "pipe" });
    }
  }, 60_000);

  it("imports the JSON export and replays it with no divergences", async () => {
    await dismissNotices(page);
    await importFile(page, "first-message.json", json);
    const imported = await waitNotice(page, /^Imported \d+ events/);
    const events = (JSON.parse(json) as JsonTranscript).events.length;
    expect(imported.text).toContain(`Imported ${events} events`);
    const replayed = await waitNotice(page, /^Replayed/, 60_000);
    expect(replayed).toEqual({ text: `Replayed ${events} events, 0 divergences.`, level: "info" });
    // The replayed session is what the panes show now: the same calls, in order.
    await page.waitForFunction((n) => document.querySelectorAll(".transcript tbody tr").length === n, recorded.length);
    expect(await transcriptRows(page)).toEqual(recorded);
    await page.click("[data-tab=cq]");
    expect(await page.locator("[data-tab=cq]").textContent()).toBe("Completions (6)");
    await page.click("[data-tab=transcript]");
    await screenshot(page, "14-transcript-replayed");
    // And the replay is a transcript of its own: it exports like any other.
    const again = JSON.parse((await downloadOf(page, "button[data-export=json]")).text) as JsonTranscript;
    expect(again.events.filter((e) => e.kind === "verb").map((e) => e.verb)).toEqual(recorded.map(rowVerb));
    expect(errors).toEqual([]);
  }, 120_000);

  it("refuses a bad transcript file with a clear message, and loses nothing", async () => {
    await dismissNotices(page);
    const before = await transcriptRows(page);
    const code = await editorText(page);
    expect(before.length).toBeGreaterThan(0);

    // Not JSON at all (the wrong file picked).
    await importFile(page, "notes.json", "this is not a transcript\n");
    const notJson = await waitNotice(page, /Could not import/);
    expect(notJson.level).toBe("error");
    expect(notJson.text).toMatch(/line 1: not a VerbsLab transcript .*not JSON/);
    await dismissNotices(page);

    // JSON, but something else's.
    await importFile(page, "package.json", JSON.stringify({ name: "verbslab", version: "1.0.0" }));
    expect(await waitNotice(page, /Could not import/)).toEqual({
      level: "error",
      text: expect.stringMatching(/line 1, field "kind": not a VerbsLab transcript/) as unknown as string,
    });
    await dismissNotices(page);

    // A transcript of another schema.
    const other = JSON.parse(json) as JsonTranscript;
    other.header.schema = "something.else";
    await importFile(page, "other.json", JSON.stringify(other));
    expect((await waitNotice(page, /Could not import/)).text).toMatch(
      /not a VerbsLab transcript \(schema "something\.else"\)/,
    );
    await dismissNotices(page);

    // JSON lines torn by a crash: the message says which line, and why.
    const t0 = JSON.parse(json) as JsonTranscript;
    const lines = [JSON.stringify({ kind: "header", ...t0.header }), ...t0.events.map((e) => JSON.stringify(e))];
    lines[lines.length - 1] = lines[lines.length - 1]!.slice(0, 15);
    await importFile(page, "torn.jsonl", lines.join("\n"));
    const torn = await waitNotice(page, /Could not import/);
    expect(torn.text).toContain(`line ${lines.length}: not valid JSON (the line is cut short`);
    await screenshot(page, "15-import-refused");

    // Nothing lost: the same rows, the same program, and the transcript still exports.
    expect(await transcriptRows(page)).toEqual(before);
    expect(await editorText(page)).toBe(code);
    const t = JSON.parse((await downloadOf(page, "button[data-export=json]")).text) as JsonTranscript;
    expect(t.events.filter((e) => e.kind === "verb")).toHaveLength(before.length);
    expect(errors).toEqual([]);
  }, 60_000);

  it("a long transcript shows its rows wherever it is scrolled, with only those near the view in the page", async () => {
    // 300 writes and a poll: about 20 chunks of rows.
    await setEditorCode(
      page,
      `import { IBV_ACCESS_LOCAL_WRITE, type Verbs } from "verbslab";
export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(4);
  const mr = await pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
  for (let i = 0; i < 300; i++) await mr.write(0, "row " + i);
  await cq.poll(1);
}
`,
    );
    await runAndWait(page);
    await page.click("[data-tab=transcript]");
    const panel = page.locator(".transcript").locator("xpath=ancestor::*[@role='tabpanel'][1]");
    const total = Number(await page.getAttribute(".transcript-list", "data-rows"));
    expect(total).toBeGreaterThanOrEqual(304);
    // Rows fill the pane below its header, top to bottom: no blank spacer where rows belong.
    const filled = () =>
      panel.evaluate((el) => {
        const view = el.getBoundingClientRect();
        const top = el.querySelector(".transcript-head")!.getBoundingClientRect().bottom;
        const rows = [...el.querySelectorAll<HTMLElement>(".transcript-list tbody tr")]
          .map((tr) => ({ r: tr.getBoundingClientRect(), verb: tr.children[1]?.textContent ?? "" }))
          .filter(({ r }) => r.bottom > top && r.top < view.bottom);
        const h = rows[0]?.r.height ?? 20;
        return {
          fills:
            rows.length > 3 &&
            rows[0]!.r.top <= top + 1 &&
            rows.at(-1)!.r.bottom >= Math.min(view.bottom, el.scrollHeight) - h,
          last: rows.at(-1)?.verb,
          inPage: el.querySelectorAll(".transcript-list tbody tr").length,
        };
      });
    const scrollTo = async (f: number) => {
      await panel.evaluate((el, f) => (el.scrollTop = f * (el.scrollHeight - el.clientHeight)), f);
      await expect.poll(async () => (await filled()).fills, { timeout: 5_000 }).toBe(true);
      return filled();
    };
    const end = await scrollTo(1);
    expect(end.last).toBe("ibv_poll_cq");
    const middle = await scrollTo(0.5);
    expect(middle.last).toBe("verbslab_mr_write");
    await scrollTo(0);
    // A few chunks of 16 rows around the view, not 300.
    for (const at of [end, middle]) expect(at.inPage).toBeLessThanOrEqual(128);
    await screenshot(page, "16-long-transcript");
  }, 60_000);
});
