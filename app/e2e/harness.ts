/**
 * End-to-end harness: web mode (the shell's server and backend supervisor) with a fresh
 * data directory, Debian's Chromium driven by playwright-core, and helpers that act the way
 * a learner does (click, type, read what is on screen).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";
import { startWebMode, type WebMode } from "../server/cli.js";

export const repoRoot = resolve(fileURLToPath(new URL(".", import.meta.url)), "../..");
export const CHROMIUM = process.env.VERBSLAB_CHROMIUM ?? "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM);
export const resultsDir = join(repoRoot, "test-results");
const distDir = join(repoRoot, "dist", "renderer");

/** The flags DEVELOPERS.md gives: no sandbox (root in CI), no GPU, and no traffic off this machine. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
];

function newestMtime(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const p = join(dir, name);
    const st = statSync(p);
    newest = Math.max(newest, st.isDirectory() ? newestMtime(p) : st.mtimeMs);
  }
  return newest;
}

/** Builds dist/renderer when it is missing or older than anything the renderer bundles. */
export async function ensureRendererBuilt(): Promise<void> {
  const index = join(distDir, "index.html");
  const sources = ["app/renderer", "app/bridge", "app/session", "verbs", "state-machines", "lessons"].map((d) =>
    join(repoRoot, d),
  );
  const newest = Math.max(...sources.filter(existsSync).map(newestMtime));
  if (existsSync(index) && statSync(index).mtimeMs >= newest) return;
  const { build } = await import("vite");
  // Vitest sets NODE_ENV=test, and Vite keeps it: the bundle would carry React's development build
  // (a 584 kB main chunk, steps ~20 ms slower). What is tested and timed is what ships.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = "production";
  try {
    await build({ configFile: join(repoRoot, "app/renderer/vite.config.ts"), logLevel: "warn" });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
}

export interface Lab {
  web: WebMode;
  url: string;
  dataDir: string;
  close(): Promise<void>;
}

/** Web mode on the simulator with a fresh data dir (transcripts, progress), serving `staticDir` (the built renderer). */
export async function startLab(seed = 1, staticDir = distDir): Promise<Lab> {
  const dataDir = mkdtempSync(join(tmpdir(), "verbslab-e2e-"));
  const web = await startWebMode({ backend: "sim", seed, dataDir, staticDir, port: 0 });
  return {
    web,
    url: web.server.url,
    dataDir,
    async close() {
      await web.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** Opens the app and waits until it is interactive: lesson shown, editor loaded, Run enabled. */
export async function openApp(browser: Browser, url: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  // What the console shows a learner who opens DevTools: React's errors, failed loads.
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}${m.location().url ? ` (${m.location().url})` : ""}`);
  });
  await page.goto(url);
  await waitInteractive(page);
  return { page, errors };
}

/** A test file's app: its own lab server and browser, with the page opened on web mode. */
export async function openLab(seed: number): Promise<{ lab: Lab; browser: Browser; page: Page; errors: string[] }> {
  await ensureRendererBuilt();
  const lab = await startLab(seed);
  const browser = await launch();
  return { lab, browser, ...(await openApp(browser, lab.url)) };
}

export async function closeLab(lab: Lab | undefined, browser: Browser | undefined): Promise<void> {
  await browser?.close();
  await lab?.close();
}

export async function waitInteractive(page: Page, timeout = 60_000): Promise<void> {
  await page.waitForSelector(".lesson h1", { timeout });
  await page.waitForSelector(".monaco-editor .view-lines", { timeout });
  await page.waitForSelector("button[data-action=run]:not([disabled])", { timeout });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(resultsDir, { recursive: true });
  const path = join(resultsDir, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

/**
 * Replaces the editor's program the way a learner would: select all, paste. The paste is a
 * real clipboard event on Monaco's input (typing it key by key would re-indent every line).
 */
export async function setEditorCode(page: Page, code: string): Promise<void> {
  await page.click(".monaco-editor .view-lines");
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Delete");
  await page.evaluate((text) => {
    const input = document.querySelector(".monaco-editor textarea, .monaco-editor .native-edit-context");
    if (!input) throw new Error("no editor input to paste into");
    const data = new DataTransfer();
    data.setData("text/plain", text);
    input.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, code);
}

/** The program as the editor draws it, without the outcomes the stepper writes after lines (.vl-result). */
export async function editorText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const lines = [...document.querySelectorAll(".monaco-editor .view-line")] as HTMLElement[];
    return lines
      .map((l) => {
        if (!l.querySelector(".vl-result")) return l.innerText;
        const copy = l.cloneNode(true) as HTMLElement;
        for (const r of copy.querySelectorAll(".vl-result")) r.remove();
        return copy.textContent ?? "";
      })
      .join("\n");
  });
}

/** Clicks Run and waits for the program to end (and the lesson's checks, if any, to come back). */
export async function runAndWait(page: Page, timeout = 60_000): Promise<void> {
  const runs = Number(await page.getAttribute(".app", "data-runs"));
  await page.click("button[data-action=run]");
  await page.waitForSelector(`.app[data-runs="${runs + 1}"]`, { timeout });
}

/**
 * Steps (clicking Step) until the program ends, `max` verbs have gone through, or (after the
 * first step) the program is paused before a verb whose text includes `stopBefore`; after
 * each step records what the diagram and the query table show. One round trip: the loop
 * runs in the page (as text, so no bundler helper leaks into it).
 */
export interface StepRecord {
  pausedBefore: string | null;
  /** The diagram's current state for the focused QP. */
  state: string | null;
  /** The diagram showed a prediction before this step. */
  predictedBefore: boolean;
  /** Fields highlighted in the query table after this step. */
  changed: string[];
}

export async function stepThrough(page: Page, max: number, stopBefore?: string): Promise<StepRecord[]> {
  const loop = `async (max, stopBefore) => {
    const app = document.querySelector(".app");
    const num = (k) => Number(app.dataset[k] ?? 0);
    const out = [];
    for (let i = 0; i < max && app.dataset.running === "true"; i++) {
      const released = num("gateSeq");
      const pausedBefore = document.querySelector("[data-testid=paused-before]")?.textContent ?? null;
      if (stopBefore && i > 0 && pausedBefore && pausedBefore.includes(stopBefore)) break;
      const predictedBefore = !!document.querySelector("[data-testid=prediction]");
      document.querySelector("button[data-action=step]").click();
      await new Promise((resolve, reject) => {
        const done = () => num("seq") >= released && num("snapshotSeq") >= released &&
          (num("gateSeq") > released || app.dataset.running === "false");
        const t = setTimeout(() => reject(new Error("step " + i + " did not complete")), 30000);
        const check = () => { if (done()) { clearTimeout(t); obs.disconnect(); resolve(); } };
        const obs = new MutationObserver(check);
        obs.observe(app, { attributes: true });
        check();
      });
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      out.push({
        pausedBefore,
        predictedBefore,
        state: document.querySelector(".qp-diagram .node.current")?.getAttribute("data-state") ?? null,
        changed: [...document.querySelectorAll(".query-table td.changed")].map((td) => td.getAttribute("data-field")),
      });
    }
    return out;
  }`;
  return (await page.evaluate(`(${loop})(${max}, ${JSON.stringify(stopBefore ?? null)})`)) as StepRecord[];
}

/** The lesson's goal list: pass/fail/undefined per check. */
export async function checkMarks(page: Page): Promise<(string | null)[]> {
  return page.$$eval("[data-testid=checks] li", (lis) => lis.map((li) => li.getAttribute("data-pass")));
}

export async function selectLesson(page: Page, id: string): Promise<void> {
  await page.selectOption("select[aria-label=lesson]", id);
  await page.waitForSelector(`.lesson[data-lesson="${id}"]`);
}

/** Milliseconds from `start` until `predicate` holds in the page (polled each animation frame). */
export async function timeUntil(page: Page, predicate: string, timeout = 30_000): Promise<void> {
  await page.waitForFunction(predicate, undefined, { timeout, polling: "raf" });
}

/** Clicks `selector` and returns the file the browser downloaded: its suggested name and its text. */
export async function downloadOf(page: Page, selector: string): Promise<{ name: string; text: string }> {
  const [download] = await Promise.all([page.waitForEvent("download", { timeout: 30_000 }), page.click(selector)]);
  const path = await download.path();
  if (!path) throw new Error(`the download from ${selector} failed: ${await download.failure()}`);
  return { name: download.suggestedFilename(), text: readFileSync(path, "utf8") };
}

/** The toasts on screen, as text. */
export async function noticeTexts(page: Page): Promise<string[]> {
  return page.locator(".notices .toast span").allTextContents();
}

/** Waits for a toast whose text matches `re`, and returns its text and level. */
export async function waitNotice(page: Page, re: RegExp, timeout = 30_000): Promise<{ text: string; level: string }> {
  const handle = await page.waitForFunction(
    (source) => {
      const r = new RegExp(source);
      const toast = [...document.querySelectorAll(".notices .toast")].find((t) => r.test(t.textContent ?? ""));
      return toast
        ? { text: toast.querySelector("span")?.textContent ?? "", level: toast.getAttribute("data-level") }
        : null;
    },
    re.source,
    { timeout },
  );
  return (await handle.jsonValue()) as { text: string; level: string };
}

/** Dismisses every toast (so the next assertion sees only new ones). */
export async function dismissNotices(page: Page): Promise<void> {
  while ((await page.locator(".notices .toast button").count()) > 0)
    await page.locator(".notices .toast button").first().click();
}

/** Chooses a file in the Transcript pane's "Import & replay…" picker, as a learner picking it would. */
export async function importFile(page: Page, name: string, content: string): Promise<void> {
  await page.setInputFiles("[data-testid=transcript-import]", {
    name,
    mimeType: name.endsWith(".json") ? "application/json" : "text/plain",
    buffer: Buffer.from(content, "utf8"),
  });
}

/** The Transcript pane's rows, cells joined with " | " (open the Transcript tab first). */
export async function transcriptRows(page: Page): Promise<string[]> {
  return page.$$eval(".transcript tbody tr", (trs) =>
    trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent?.trim() ?? "").join(" | ")),
  );
}

/** The verb named in a transcript row ("ibv_post_send", "verbslab_mr_write"). */
export function rowVerb(row: string): string {
  return row.split(" | ")[1] ?? "";
}

/** Screenshot of one element (a pane), for a closer look than the whole window gives. */
/** A screenshot of one element (a selector's first match, or a locator): for a scrolled list, pass its scroller. */
export async function screenshotOf(page: Page, what: string | Locator, name: string): Promise<string> {
  mkdirSync(resultsDir, { recursive: true });
  const path = join(resultsDir, `${name}.png`);
  await (typeof what === "string" ? page.locator(what) : what).first().screenshot({ path });
  return path;
}

/** Moves the mouse over the first occurrence of `text` in the editor's visible lines (Monaco merges tokens into spans). */
/** Points at `text` in the editor until Monaco shows a hover matching `re`, and returns it.
 *  Monaco asks the TypeScript worker once per mouse position; right after the code changes the
 *  worker may still be loading the new model and answer nothing, and Monaco does not ask again
 *  until the mouse moves. A learner would move the mouse again, so the test does too. */
export async function hoverEditorText(page: Page, text: string, re: RegExp, timeoutMs = 30_000): Promise<Locator> {
  const hover = page.locator(".monaco-hover:not(.hidden)", { hasText: re });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const box = await page.evaluate((needle) => {
      for (const line of document.querySelectorAll(".monaco-editor .view-line")) {
        const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const at = (n.textContent ?? "").replace(/\u00a0/g, " ").indexOf(needle);
          if (at < 0) continue;
          const range = document.createRange();
          range.setStart(n, at);
          range.setEnd(n, at + needle.length);
          const r = range.getBoundingClientRect();
          return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
        }
      }
      return null;
    }, text);
    if (!box) throw new Error(`"${text}" is not on screen in the editor`);
    await page.mouse.move(0, 0);
    await page.mouse.move(box.x, box.y, { steps: 2 });
    const left = deadline - Date.now();
    try {
      await hover.waitFor({ timeout: Math.max(1, Math.min(4_000, left)) });
      return hover;
    } catch (err) {
      if (Date.now() >= deadline) throw err;
    }
  }
}
