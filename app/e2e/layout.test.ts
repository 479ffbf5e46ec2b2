/**
 * The window at the screen sizes learners have (1280×720, 1366×768, 1920×1080): the key
 * controls lie inside the viewport, the lesson pane never scrolls sideways (in any lesson), the
 * panes resize by their drag handles and keep their sizes over a reload. Screenshots of each
 * size go to test-results/layout-<w>x<h>.png.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solutionOf } from "./lessons.js";
import { loadCourse } from "../../lessons/load.js";
import { openLearnerProfile } from "../../lessons/progress-file.js";
import { startLessonFlow } from "../../state-machines/lesson-progress.js";
import {
  closeLab,
  ensureRendererBuilt,
  hasChromium,
  launch,
  runAndWait,
  screenshot,
  screenshotOf,
  selectLesson,
  setEditorCode,
  startLab,
  waitInteractive,
  type Lab,
} from "./harness.js";

const SIZES = [
  { width: 1280, height: 720 },
  { width: 1366, height: 768 },
  { width: 1920, height: 1080 },
];

/** What a learner must be able to see and reach, whatever the window's size. */
const KEY_CONTROLS = [
  ".qp-diagram .node[data-state=RTS] rect",
  ".qp-diagram .node[data-state=SQD] rect",
  "button[data-action=run]",
  "button[data-action=reset]",
  "[data-testid=backend-state]",
  "select[aria-label=lesson]",
  "select[aria-label=language]",
  "[role=tab]",
  "[data-testid=transcript-import-button]",
  ".lesson h1",
];

/** The Network tab's controls (panes/NetworkPane.tsx): each reachable, scrolled to, in the window and not cut. */
const NETWORK_CONTROLS = [
  "[data-field=loss]",
  "[data-field=delay]",
  "[data-field=reorder]",
  "[data-field=mtu0]",
  "[data-field=mtu1]",
  "[data-field=block]",
  "[data-action=net-apply]",
  "[data-action=net-clear]",
  "[data-testid=net-link-now]",
  "[data-testid=net-where]",
];

interface Box {
  selector: string;
  x: number;
  y: number;
  right: number;
  bottom: number;
  /** The box is hidden by an ancestor that clips it (overflow), fully or partly. */
  clipped: boolean;
}

/** Every key control's box, and whether an ancestor with overflow clipping cuts it. */
async function controlBoxes(page: Page, controls: string[] = KEY_CONTROLS): Promise<Box[]> {
  return page.evaluate((selectors) => {
    const out: Box[] = [];
    for (const selector of selectors) {
      const els = [...document.querySelectorAll(selector)];
      if (els.length === 0) out.push({ selector, x: NaN, y: NaN, right: NaN, bottom: NaN, clipped: true });
      for (const el of els) {
        const r = el.getBoundingClientRect();
        let clipped = false;
        for (let a = el.parentElement; a; a = a.parentElement) {
          const cs = getComputedStyle(a);
          if (cs.overflowX === "visible" && cs.overflowY === "visible") continue;
          const c = a.getBoundingClientRect();
          if (r.left < c.left - 0.5 || r.right > c.right + 0.5 || r.top < c.top - 0.5 || r.bottom > c.bottom + 0.5)
            clipped = true;
        }
        out.push({ selector, x: r.left, y: r.top, right: r.right, bottom: r.bottom, clipped });
      }
    }
    return out;
  }, controls);
}

/**
 * The inspector's tab body (Connection, Completions, …) must show a table, not three rows of one:
 * 160 px holds a heading and five rows of 24 px.
 */
const TAB_BODY_MIN_PX = 160;

/** A short program: every line fits the editor's width at 1366 px. */
const SHORT_PROGRAM = `import type { Verbs } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(4);
  await cq.destroy();
  await pd.dealloc();
  await ctx.close();
}
`;

/**
 * How the editor's text sits sideways: Monaco's own horizontal scroll (its lines layer's left),
 * every native scroll inside the editor, and how far the first line's text starts left of where
 * the text area begins (a positive value: shifted under the gutter).
 */
const editorSideways = (page: Page) =>
  page.evaluate(() => {
    const wrap = document.querySelector(".editor-wrap")!;
    const scrollable = wrap.querySelector(".editor-scrollable")!.getBoundingClientRect();
    const firstText = wrap.querySelector(".view-line span")!.getBoundingClientRect();
    return {
      monacoScrollLeft: (wrap.querySelector(".lines-content") as HTMLElement).style.left,
      nativeScrolled: [wrap, ...wrap.querySelectorAll("*")].filter((e) => e.scrollLeft !== 0).map((e) => e.className),
      textShiftedLeftPx: Math.max(0, Math.round(scrollable.left - firstText.left)),
    };
  });

/** How far the lesson pane's body scrolls sideways (0: not at all). */
const lessonOverflowX = (page: Page) =>
  page.$eval("section[aria-label=lesson] .panel-body", (el) => el.scrollWidth - el.clientWidth);

describe.skipIf(!hasChromium)("layout at 1280×720, 1366×768 and 1920×1080", () => {
  let lab: Lab;
  let browser: Browser;

  beforeAll(async () => {
    await ensureRendererBuilt();
    lab = await startLab(3);
    // Every step of every lesson passed, in the lab's profile: every step's text can be opened.
    const profile = openLearnerProfile(lab.dataDir);
    for (const l of loadCourse().lessons) {
      const flow = startLessonFlow(profile.progress, profile.name, {
        lessonId: l.id,
        hintCounts: l.steps.map((st) => st.hints.length),
      });
      flow.send({ type: "START" });
      l.steps.forEach((_, i) => {
        flow.send({ type: "CHECKED", passed: true });
        if (i < l.steps.length - 1) flow.send({ type: "NEXT_STEP" });
      });
      flow.stop();
    }
    browser = await launch();
  }, 240_000);
  afterAll(() => closeLab(lab, browser));

  for (const size of SIZES) {
    it(`${size.width}×${size.height}: key controls inside the window, no sideways scroll in any lesson`, async () => {
      const page = await browser.newPage({ viewport: size });
      try {
        await page.goto(lab.url);
        await waitInteractive(page);
        await screenshot(page, `layout-${size.width}x${size.height}`);
        const boxes = await controlBoxes(page);
        const outside = boxes.filter(
          (b) => !(b.x >= 0 && b.y >= 0 && b.right <= size.width && b.bottom <= size.height) || b.clipped,
        );
        expect(outside.map((b) => `${b.selector} ${JSON.stringify(b)}`)).toEqual([]);
        // The page itself never scrolls: every pane scrolls inside its own box.
        const page_ = await page.evaluate(() => ({
          x: document.documentElement.scrollWidth - window.innerWidth,
          y: document.documentElement.scrollHeight - window.innerHeight,
        }));
        expect(page_).toEqual({ x: 0, y: 0 });
        // The tabbed views below the query table have room for a table at every size.
        const tabBody = await page.$eval(".inspector-tabs [role=tabpanel]", (el) => el.clientHeight);
        expect(tabBody).toBeGreaterThanOrEqual(TAB_BODY_MIN_PX);
        // The Network tab: each of its controls, scrolled to in the tab's body, lies in the window uncut.
        await page.click("[data-tab=network]");
        await page.waitForSelector("[data-field=loss]");
        await screenshotOf(page, ".inspector-tabs", `layout-${size.width}x${size.height}-network`);
        const netOutside: string[] = [];
        for (const sel of NETWORK_CONTROLS) {
          await page.locator(sel).scrollIntoViewIfNeeded();
          for (const b of await controlBoxes(page, [sel]))
            if (!(b.x >= 0 && b.y >= 0 && b.right <= size.width && b.bottom <= size.height) || b.clipped)
              netOutside.push(`${sel} ${JSON.stringify(b)}`);
        }
        expect(netOutside).toEqual([]);
        expect(await page.evaluate(() => document.documentElement.scrollHeight - window.innerHeight)).toBe(0);
        const lessons = await page.$$eval("select[aria-label=lesson] option", (os) =>
          os.map((o) => (o as HTMLOptionElement).value),
        );
        expect(lessons.length).toBeGreaterThan(10);
        const wide: string[] = [];
        let checked = 0;
        for (const id of lessons) {
          await selectLesson(page, id);
          const steps = await page.locator(".lesson .steps li").count();
          for (let s = 1; s <= steps; s++) {
            const li = page.locator(".lesson .steps li").nth(s - 1);
            expect(await li.getAttribute("aria-disabled")).toBe("false");
            await li.click();
            await page.waitForSelector(`.lesson[data-step="${s}"]`);
            const over = await lessonOverflowX(page);
            if (over > 0) wide.push(`${id} step ${s}: ${over}px`);
            checked++;
          }
        }
        expect(wide).toEqual([]);
        expect(checked).toBe(loadCourse().lessons.reduce((n, l) => n + l.steps.length, 0));
      } finally {
        await page.close();
      }
    }, 120_000);
  }

  it("the panes resize by their drag handles, and keep their sizes over a reload", async () => {
    const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
    try {
      await page.goto(lab.url);
      await waitInteractive(page);
      const width = (sel: string) => page.$eval(sel, (el) => el.getBoundingClientRect().width);
      const lesson0 = await width("section[aria-label=lesson]");
      const inspector0 = await width(".inspector");
      const drag = async (handle: string, dx: number) => {
        const b = (await page.locator(handle).boundingBox())!;
        await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
        await page.mouse.down();
        await page.mouse.move(b.x + b.width / 2 + dx, b.y + b.height / 2, { steps: 5 });
        await page.mouse.up();
      };
      await drag("[data-testid=resize-lesson]", 80);
      await drag("[data-testid=resize-inspector]", -60);
      const lesson1 = await width("section[aria-label=lesson]");
      const inspector1 = await width(".inspector");
      expect(lesson1 - lesson0).toBeGreaterThan(70);
      expect(inspector1 - inspector0).toBeGreaterThan(50);
      await page.reload();
      await waitInteractive(page);
      expect(Math.abs((await width("section[aria-label=lesson]")) - lesson1)).toBeLessThan(2);
      expect(Math.abs((await width(".inspector")) - inspector1)).toBeLessThan(2);
      // The editor keeps room to work in, however far a handle is dragged.
      await drag("[data-testid=resize-lesson]", 2000);
      expect(await width("section[aria-label=editor]")).toBeGreaterThanOrEqual(300);
      await screenshot(page, "layout-1366x768-resized");
    } finally {
      await page.close();
    }
  }, 120_000);

  it("1366×768: the editor is not left scrolled sideways by a long program, a reveal, or a paste", async () => {
    const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
    try {
      await page.goto(lab.url);
      await waitInteractive(page);
      await selectLesson(page, "connecting-with-rdma-cm");
      // Lesson 17's solution has lines wider than the editor; a transcript row reveals the call on one.
      await setEditorCode(page, solutionOf("connecting-with-rdma-cm", 1));
      await runAndWait(page);
      await page.click("[data-tab=transcript]");
      await page.locator(".transcript tr.linked", { hasText: "rdma_create_qp" }).first().click();
      await page.waitForSelector(".editor-wrap[data-revealed-line]");
      await screenshot(page, "layout-1366x768-editor-revealed");
      // A program whose lines all fit: nothing scrolled sideways, its text starts after the gutter.
      await setEditorCode(page, SHORT_PROGRAM);
      await page.waitForFunction(() => document.querySelectorAll(".editor-wrap .view-line").length === 11);
      await screenshot(page, "layout-1366x768-editor-short");
      expect(await editorSideways(page)).toEqual({ monacoScrollLeft: "0px", nativeScrolled: [], textShiftedLeftPx: 0 });
      // The revealed line was of the program before: its mark went with it (it grew over the paste).
      expect(await page.locator(".editor-wrap .vl-revealed-line:not([hidden])").count()).toBe(0);
      await runAndWait(page);
      expect(await editorSideways(page)).toEqual({ monacoScrollLeft: "0px", nativeScrolled: [], textShiftedLeftPx: 0 });
    } finally {
      await page.close();
    }
  }, 120_000);

  it("1280×720: the transcript, scrolled, shows what each call did, under a header no row shows above", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    try {
      await page.goto(lab.url);
      await waitInteractive(page);
      await selectLesson(page, "connecting-with-rdma-cm");
      await setEditorCode(page, solutionOf("connecting-with-rdma-cm", 1));
      await runAndWait(page);
      await page.click("[data-tab=transcript]");
      const panel = page.locator(".transcript").locator("xpath=ancestor::*[@role='tabpanel'][1]");
      await panel.evaluate((el) => (el.scrollTop = el.scrollHeight));
      // The pane as the learner sees it (the table itself is taller than the pane that scrolls it).
      await screenshotOf(page, panel, "layout-1280x720-transcript-scrolled");
      const seen = await panel.evaluate((el) => {
        const top = el.getBoundingClientRect().top;
        // The header sits at the pane's top edge: a row scrolled past is behind it, none shows above it.
        const head = el.querySelector(".transcript-head")!.getBoundingClientRect();
        const what = el.querySelector<HTMLElement>(".transcript-chunk td.mono")!.getBoundingClientRect().width;
        return { headAtTop: Math.round(head.top - top), whatWide: what >= 48 };
      });
      expect(seen).toEqual({ headAtTop: 0, whatWide: true });
    } finally {
      await page.close();
    }
  }, 120_000);

  it("1280×720: the Throughput tab plots lesson 12's rxe0 -> rxe1 sweep on the simulator (bandwidth and packets per message)", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    try {
      await page.goto(lab.url);
      await waitInteractive(page);
      await selectLesson(page, "throughput");
      await setEditorCode(page, solutionOf("throughput", 1));
      await runAndWait(page);
      await page.click("[data-tab=plot]");
      await page.waitForSelector("[data-testid=plot-packets]");
      const points = await page.$$eval("[data-testid=plot-packets] .point", (gs) =>
        gs.map((g) => [Number(g.getAttribute("data-bytes")), Number(g.getAttribute("data-value"))]),
      );
      // ⌈bytes / 1024⌉ WRITE packets, as rxe0's sent_pkts counts them (the ACKs leave from rxe1).
      expect(points).toEqual([
        [64, 1],
        [256, 1],
        [1024, 1],
        [4096, 4],
        [16384, 16],
        [65536, 64],
      ]);
      // The timed wire between the devices gives MB/s: the ib_write_bw curve, rising with size.
      expect(await page.locator("[data-testid=plot-no-bandwidth]").count()).toBe(0);
      const gbps = await page.$$eval("[data-testid=plot-bandwidth] .point", (gs) =>
        gs.map((g) => [Number(g.getAttribute("data-bytes")), Number(g.getAttribute("data-value"))]),
      );
      expect(gbps.map(([bytes]) => bytes)).toEqual([64, 256, 1024, 4096, 16384, 65536]);
      for (let i = 1; i < gbps.length; i++) expect(gbps[i]![1]).toBeGreaterThan(gbps[i - 1]![1]!);
      await screenshotOf(page, ".inspector-tabs", "layout-1280x720-throughput");
    } finally {
      await page.close();
    }
  }, 120_000);

  it("中文: buttons, tabs, goals, feedback and errors in Chinese, not only the lesson text (1366×768)", async () => {
    const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
    try {
      await page.goto(lab.url);
      await waitInteractive(page);
      await selectLesson(page, "qp-state-machine");
      await page.selectOption("select[aria-label=language]", "zh");
      await page.click(".lesson .steps li >> nth=0");
      await page.waitForSelector(`.lesson[data-step="1"]`);
      // A break-it run: an error from the verb, the variation's own goals, and what to observe.
      await page.click("[data-break-it=missing-port]");
      await runAndWait(page);
      await page.waitForSelector("[data-testid=run-error]");
      await page.waitForSelector("[data-testid=checks] li[data-pass]");
      await screenshot(page, "layout-zh-1366x768");
      expect(await lessonOverflowX(page)).toBe(0);
      expect(await page.$eval("section[aria-label=lesson] .panel-body", (el) => el.scrollLeft)).toBe(0);
      const text = (sel: string) => page.locator(sel).allTextContents();
      const buttons = (await text("button")).join(" | ");
      for (const english of ["Run", "Step", "Continue", "Reset", "Import", "Back to the step", "Load the solution"])
        expect(buttons).not.toContain(english);
      expect(buttons).toMatch(/运行.*单步.*继续.*停止.*重置/);
      expect(buttons).toContain("回到本步");
      expect(buttons).toContain("导入并重放");
      const tabs = (await text("[role=tab]")).join(" ");
      expect(tabs).toMatch(/记录.*日志/);
      expect(tabs).toMatch(/连接.*资源.*完成.*内存.*计数器.*数据包.*吞吐量/);
      expect(await page.locator(".lesson h4").first().textContent()).toBe("目标");
      const error = await page.locator("[data-testid=run-error]").textContent();
      expect(error).toMatch(/ibv_modify_qp 失败，错误码 EINVAL/);
      // The reason too, worded from the call's data (the transition table), and the outcome after its line.
      expect(await page.locator("[data-testid=error-reason]").textContent()).toMatch(
        /^RESET → INIT 需要 .*IBV_QP_PORT；缺少：IBV_QP_PORT$/,
      );
      await page.waitForSelector(".monaco-editor .vl-result-bad");
      expect(await page.locator(".monaco-editor .vl-result-bad").first().textContent()).toMatch(
        /EINVAL：缺少 IBV_QP_PORT/,
      );
      const goals = (await text("[data-testid=checks] li")).join(" ");
      expect(goals).toMatch(/[\u4e00-\u9fff]/);
      expect(await page.locator("[data-testid=backend-state]").textContent()).toMatch(/^后端/);
      // Reload: the language stays chosen.
      await page.reload();
      await waitInteractive(page);
      expect(await page.inputValue("select[aria-label=language]")).toBe("zh");
      expect(await page.locator("button[data-action=run]").textContent()).toContain("运行");
    } finally {
      await page.close();
    }
  }, 120_000);
});
