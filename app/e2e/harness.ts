/**
 * End-to-end harness: web mode (the shell's server and backend supervisor) with a fresh
 * data directory, Debian's Chromium driven by playwright-core, and helpers that act the way
 * a learner does (click, type, read what is on screen).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
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
  await build({ configFile: join(repoRoot, "app/renderer/vite.config.ts"), logLevel: "warn" });
}

export interface Lab {
  web: WebMode;
  url: string;
  dataDir: string;
  close(): Promise<void>;
}

/** Web mode on the simulator with a fresh data dir (transcripts, progress). */
export async function startLab(seed = 1): Promise<Lab> {
  const dataDir = mkdtempSync(join(tmpdir(), "verbslab-e2e-"));
  const web = await startWebMode({ backend: "sim", seed, dataDir, staticDir: distDir, port: 0 });
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
  await page.goto(url);
  await waitInteractive(page);
  return { page, errors };
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

export async function editorText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const lines = [...document.querySelectorAll(".monaco-editor .view-line")] as HTMLElement[];
    return lines.map((l) => l.innerText).join("\n");
  });
}

/** Clicks Run and waits for the program to end (and the lesson's checks, if any, to come back). */
export async function runAndWait(page: Page, timeout = 60_000): Promise<void> {
  await page.click("button[data-action=run]");
  await page.waitForSelector(".app[data-running=true]", { timeout: 10_000 }).catch(() => {});
  await page.waitForSelector(".app[data-running=false]", { timeout });
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
