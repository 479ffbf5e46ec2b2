/**
 * Cold loads timed with no debugger attached while the page loads, as a learner's window loads.
 * A page that Playwright drives (the DevTools protocol, its Runtime and Network domains on) spends
 * main-thread time in V8.CollectSourcePositions, re-parsing whole scripts (Monaco's 2.5 MB chunk
 * among them) to give stack frames line numbers, which makes a cold load about 13% slower.
 * So bench:ui loads the page in its own Chromium, started with the harness's flags, through the
 * bare protocol: a new browser context (empty cache), a new tab on the URL, and only seconds
 * later a session to read the page's `verbslab:interactive` mark (App.tsx), in ms since
 * navigation start. Without Chromium's own window UI (NO_TOP_CHROME_WEBUI says why).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { CHROMIUM, CHROMIUM_ARGS } from "./harness.js";

const MARK = "verbslab:interactive";
/** How long a load gets before the first look at its mark, and between looks after that. */
const FIRST_LOOK_MS = 4000;
const LOOK_AGAIN_MS = 1000;
const GIVE_UP_MS = 60_000;

export interface ColdLoader {
  /** One load of `url` in a fresh browser context: ms from navigation start to interactive. */
  load(url: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * Chromium builds its own window UI for each new browser context's window: the omnibox popup and
 * its compose box are WebUI pages, loaded (about 350 chrome:// requests, traced as the "WebUI Top
 * Renderer": ~300 ms of CPU) in a renderer of their own during every load timed here, and on
 * 2 cores that competed with the page being timed. A learner's page opens in a browser window
 * that has them already, or in Electron, which has none: what is timed is the page's load.
 * (Paired on this machine, load 4-10: 1496/1136/1812/1633 ms with them, 1251/1079/1491/1058 without.)
 */
const NO_TOP_CHROME_WEBUI =
  "--disable-features=PreloadTopChromeWebUI,WebUIOmniboxPopup,WebUIOmniboxFullPopup,WebUIOmniboxAimPopup";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startColdLoader(): Promise<ColdLoader> {
  const profile = mkdtempSync(join(tmpdir(), "verbslab-cold-"));
  const chromium: ChildProcess = spawn(
    CHROMIUM,
    [
      ...CHROMIUM_ARGS,
      NO_TOP_CHROME_WEBUI,
      "--headless",
      "--remote-debugging-port=0",
      `--user-data-dir=${profile}`,
      "about:blank",
    ],
    // Its own process group, so that close() ends its helper processes too.
    { stdio: ["ignore", "ignore", "pipe"], detached: true },
  );
  const endpoint = await new Promise<string>((resolve, reject) => {
    let said = "";
    chromium.stderr!.on("data", (d: Buffer) => {
      said += d.toString();
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(said);
      if (m) resolve(m[1]!);
    });
    chromium.once("exit", (code) =>
      reject(new Error(`chromium exited (${code}) before listening: ${said.slice(-400)}`)),
    );
  });
  const ws = new WebSocket(endpoint);
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  let nextId = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  ws.on("message", (data) => {
    const m = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
    const w = m.id === undefined ? undefined : waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id!);
    if (m.error) w.reject(new Error(m.error.message));
    else w.resolve(m.result);
  });
  const send = <T>(method: string, params: object = {}, sessionId?: string) =>
    new Promise<T>((resolve, reject) => {
      const id = ++nextId;
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      ws.send(JSON.stringify({ id, method, params, ...(sessionId && { sessionId }) }));
    });

  /** The page's mark, looked up through a session opened for just that (null: not there yet). */
  async function markOf(targetId: string): Promise<number | null> {
    const { sessionId } = await send<{ sessionId: string }>("Target.attachToTarget", { targetId, flatten: true });
    try {
      const got = await send<{ result: { value: number | null } }>(
        "Runtime.evaluate",
        {
          expression: `performance.getEntriesByName(${JSON.stringify(MARK)})[0]?.startTime ?? null`,
          returnByValue: true,
        },
        sessionId,
      );
      return got.result.value;
    } finally {
      await send("Target.detachFromTarget", { sessionId });
    }
  }

  return {
    async load(url) {
      const { browserContextId } = await send<{ browserContextId: string }>("Target.createBrowserContext");
      try {
        const { targetId } = await send<{ targetId: string }>("Target.createTarget", {
          url,
          browserContextId,
          width: 1600,
          height: 1000,
        });
        await sleep(FIRST_LOOK_MS);
        for (let waited = FIRST_LOOK_MS; ; waited += LOOK_AGAIN_MS) {
          const at = await markOf(targetId);
          if (at !== null) return at;
          if (waited >= GIVE_UP_MS)
            throw new Error(`cold load: no ${MARK} mark ${GIVE_UP_MS / 1000} s after opening ${url}`);
          await sleep(LOOK_AGAIN_MS);
        }
      } finally {
        await send("Target.disposeBrowserContext", { browserContextId });
      }
    },
    async close() {
      ws.close();
      const exited = new Promise((r) => (chromium.exitCode !== null ? r(null) : chromium.once("exit", r)));
      try {
        process.kill(-chromium.pid!, "SIGTERM");
      } catch {
        // Already gone.
      }
      await exited;
      // Its helper processes may still be writing the profile as they exit (seen on a loaded
      // machine): a profile left in the temp folder must not cost the measurement.
      try {
        rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
      } catch (e) {
        console.warn(`cold load: could not remove ${profile}: ${(e as Error).message}`);
      }
    },
  };
}
