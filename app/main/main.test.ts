/**
 * Electron main without the Electron binary: a fake electron module records what main asks
 * of it, and each security rule is checked by what a page would experience.
 */
import { EventEmitter } from "node:events";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { IPC_EVENT_CHANNEL, IPC_REQUEST_CHANNEL } from "../bridge/channels.js";
import { decodeValue, encodeValue } from "../session/wire.js";
import type { HostToBackend } from "../backend/protocol.js";
import { createMainApp, serveApp, type ElectronModule } from "./app.js";
import { APP_URL, CSP, isTrustedSender, windowOptions } from "./security.js";

type Handler = (...args: unknown[]) => unknown;

class FakeContents extends EventEmitter {
  static nextId = 1;
  readonly id = FakeContents.nextId++;
  openHandler: ((details: { url: string }) => { action: string }) | null = null;
  sent: unknown[][] = [];
  setWindowOpenHandler(h: (details: { url: string }) => { action: string }) {
    this.openHandler = h;
  }
  send(...args: unknown[]) {
    this.sent.push(args);
  }
  isDestroyed() {
    return false;
  }
}

class FakeChild extends EventEmitter {
  pid = 4242;
  posted: HostToBackend[] = [];
  killed = false;
  postMessage(m: HostToBackend) {
    this.posted.push(m);
  }
  kill() {
    this.killed = true;
    this.emit("exit", 0);
    return true;
  }
}

function fakeElectron(userData: string) {
  const calls: string[] = [];
  const appEvents = new EventEmitter();
  const ipcHandlers = new Map<string, Handler>();
  const protocolHandlers = new Map<string, (req: { url: string }) => Response>();
  const windows: { options: Record<string, unknown>; webContents: FakeContents; loaded: string[] }[] = [];
  const children: FakeChild[] = [];
  const opened: string[] = [];
  let ready!: () => void;
  const whenReady = new Promise<void>((r) => (ready = r));
  const sessionState = {
    permissionRequest: null as null | Handler,
    permissionCheck: null as null | Handler,
    headers: null as null | Handler,
  };

  class BrowserWindow extends EventEmitter {
    webContents = new FakeContents();
    loaded: string[] = [];
    constructor(public options: Record<string, unknown>) {
      super();
      calls.push("new BrowserWindow");
      windows.push(this);
      appEvents.emit("web-contents-created", {}, this.webContents);
    }
    async loadURL(url: string) {
      this.loaded.push(url);
    }
    show() {}
  }

  const electron = {
    app: {
      enableSandbox: () => calls.push("enableSandbox"),
      getPath: () => userData,
      on: (name: string, h: Handler) => appEvents.on(name, h),
      whenReady: () => whenReady,
      quit: () => calls.push("quit"),
    },
    BrowserWindow,
    ipcMain: { handle: (channel: string, h: Handler) => ipcHandlers.set(channel, h) },
    protocol: {
      registerSchemesAsPrivileged: (schemes: unknown) =>
        calls.push(`registerSchemesAsPrivileged ${JSON.stringify(schemes)}`),
      handle: (scheme: string, h: (req: { url: string }) => Response) => protocolHandlers.set(scheme, h),
    },
    session: {
      defaultSession: {
        setPermissionRequestHandler: (h: Handler) => (sessionState.permissionRequest = h),
        setPermissionCheckHandler: (h: Handler) => (sessionState.permissionCheck = h),
        webRequest: { onHeadersReceived: (h: Handler) => (sessionState.headers = h) },
      },
    },
    utilityProcess: {
      fork: (entry: string) => {
        calls.push(`fork ${entry}`);
        const c = new FakeChild();
        children.push(c);
        return c;
      },
    },
    shell: { openExternal: async (url: string) => void opened.push(url) },
  };
  return {
    electron: electron as unknown as ElectronModule,
    calls,
    appEvents,
    ipcHandlers,
    protocolHandlers,
    windows,
    children,
    opened,
    sessionState,
    ready: () => ready(),
  };
}

function setup() {
  const dir = mkdtempSync(join(tmpdir(), "verbslab-main-"));
  const rendererDir = join(dir, "renderer");
  mkdirSync(join(rendererDir, "assets"), { recursive: true });
  writeFileSync(join(rendererDir, "index.html"), "<!doctype html><title>VerbsLab</title>");
  writeFileSync(join(rendererDir, "assets", "a.js"), "1");
  writeFileSync(join(dir, "secret.txt"), "secret");
  const fake = fakeElectron(dir);
  const main = createMainApp(fake.electron, {
    rendererDir,
    preloadPath: "/app/preload.cjs",
    backendEntry: "/app/backend/entry.js",
    appVersion: "9.9.9",
  });
  return { fake, main, rendererDir, dir };
}

/** An IPC event as Electron would build it for a sender. */
function ipcEvent(contents: { id: number }, url: string, parent: unknown = null) {
  return { sender: contents, senderFrame: { url, parent } } as never;
}

describe("window and session security", () => {
  it("creates the window sandboxed, context-isolated, without Node, with the preload", () => {
    const prefs = windowOptions("/p/preload.cjs").webPreferences!;
    expect(prefs.contextIsolation).toBe(true);
    expect(prefs.sandbox).toBe(true);
    expect(prefs.nodeIntegration).toBe(false);
    expect(prefs.nodeIntegrationInWorker).toBe(false);
    expect(prefs.nodeIntegrationInSubFrames).toBe(false);
    expect(prefs.webSecurity).toBe(true);
    expect(prefs.allowRunningInsecureContent).toBe(false);
    expect(prefs.webviewTag).toBe(false);
    expect(prefs.preload).toBe("/p/preload.cjs");
  });

  it("a strict CSP: nothing remote, no eval, no plugins, no framing", () => {
    expect(CSP).toContain("default-src 'none'");
    expect(CSP).toContain("script-src 'self' blob:");
    expect(CSP).toContain("object-src 'none'");
    expect(CSP).toContain("frame-ancestors 'none'");
    expect(CSP).not.toMatch(/unsafe-eval|https?:|\*/);
  });

  let env: ReturnType<typeof setup>;
  beforeEach(async () => {
    env = setup();
    env.fake.ready();
    await env.main.ready;
  });

  it("registers the app scheme before ready, enables the sandbox, and opens the app URL with those options", () => {
    const { calls, windows } = env.fake;
    const reg = calls.findIndex((c) => c.startsWith("registerSchemesAsPrivileged"));
    expect(reg).toBeGreaterThanOrEqual(0);
    expect(reg).toBeLessThan(calls.indexOf("new BrowserWindow"));
    expect(calls[reg]).toContain('"secure":true');
    expect(calls).toContain("enableSandbox");
    expect(windows).toHaveLength(1);
    const w = windows[0]!;
    expect(w.loaded).toEqual([APP_URL]);
    const prefs = (w.options as { webPreferences: Record<string, unknown> }).webPreferences;
    expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false });
  });

  it("denies every new window (https links go to the system browser instead)", () => {
    const wc = env.fake.windows[0]!.webContents;
    expect(wc.openHandler!({ url: "https://man7.org/linux/man-pages/man3/ibv_modify_qp.3.html" })).toEqual({
      action: "deny",
    });
    expect(wc.openHandler!({ url: "http://evil.example/" })).toEqual({ action: "deny" });
    expect(wc.openHandler!({ url: "file:///etc/passwd" })).toEqual({ action: "deny" });
    expect(env.fake.opened).toEqual(["https://man7.org/linux/man-pages/man3/ibv_modify_qp.3.html"]);
  });

  it("blocks navigation and redirects away from the app, and webviews", () => {
    const wc = env.fake.windows[0]!.webContents;
    const attempt = (event: string, url?: string) => {
      const e = { preventDefault: vi.fn() };
      wc.emit(event, e, url);
      return e.preventDefault.mock.calls.length > 0;
    };
    expect(attempt("will-navigate", "https://evil.example/")).toBe(true);
    expect(attempt("will-navigate", "file:///etc/passwd")).toBe(true);
    expect(attempt("will-redirect", "http://127.0.0.1:1/")).toBe(true);
    expect(attempt("will-navigate", "verbslab://app/index.html#lesson-2")).toBe(false);
    expect(attempt("will-attach-webview")).toBe(true);
  });

  it("refuses every permission and puts the CSP on every response", () => {
    const s = env.fake.sessionState;
    const answer = vi.fn();
    s.permissionRequest!({}, "media", answer);
    expect(answer).toHaveBeenCalledWith(false);
    expect(s.permissionCheck!({}, "notifications")).toBe(false);
    const cb = vi.fn();
    s.headers!({ responseHeaders: { "X-Other": ["1"] } }, cb);
    expect(cb.mock.calls[0]![0].responseHeaders["Content-Security-Policy"]).toEqual([CSP]);
    expect(cb.mock.calls[0]![0].responseHeaders["X-Other"]).toEqual(["1"]);
  });

  it("serves the built renderer with the CSP, and nothing outside it", async () => {
    const serve = env.fake.protocolHandlers.get("verbslab")!;
    const page = serve({ url: "verbslab://app/index.html" });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toBe(CSP);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await page.text()).toContain("VerbsLab");
    for (const url of ["verbslab://app/%2e%2e/secret.txt", "verbslab://app/assets/..%2f..%2fsecret.txt"]) {
      const r = serveApp(env.rendererDir, url);
      expect([403, 404], url).toContain(r.status);
      expect(await r.text()).not.toContain("secret");
    }
  });
});

describe("bridge IPC in main", () => {
  let env: ReturnType<typeof setup>;
  beforeEach(async () => {
    env = setup();
    env.fake.ready();
    await env.main.ready;
  });

  const handler = () => env.fake.ipcHandlers.get(IPC_REQUEST_CHANNEL)!;
  const ask = async (event: unknown, method: unknown, params: unknown) =>
    decodeValue(await handler()(event, method, encodeValue(params))) as {
      ok: boolean;
      result?: unknown;
      error?: { name: string; path?: string };
    };

  it("answers the app's own page", async () => {
    const wc = env.fake.windows[0]!.webContents;
    const r = await ask(ipcEvent(wc, APP_URL), "host.info", {});
    expect(r.ok).toBe(true);
    expect(r.result).toMatchObject({ host: "electron", appVersion: "9.9.9" });
  });

  it("checks the sender of every message: other contents, iframes and foreign pages are refused", async () => {
    const wc = env.fake.windows[0]!.webContents;
    const cases = [
      ipcEvent({ id: wc.id + 100 }, APP_URL),
      ipcEvent(wc, APP_URL, { url: APP_URL }),
      ipcEvent(wc, "https://evil.example/"),
      ipcEvent(wc, "file:///tmp/x.html"),
      { sender: wc, senderFrame: null },
    ];
    for (const e of cases) {
      const r = await ask(e, "backend.status", {});
      expect(r.ok).toBe(false);
      expect(r.error?.name).toBe("ForbiddenSenderError");
    }
    // And nothing reached the backend.
    const child = env.fake.children[0];
    expect(child?.posted.filter((m) => m.type === "request") ?? []).toHaveLength(0);
  });

  it("rejects bad payloads before they reach the backend", async () => {
    const wc = env.fake.windows[0]!.webContents;
    const e = ipcEvent(wc, APP_URL);
    const bad: [unknown, unknown, string][] = [
      ["fs.readFile", { path: "/etc/passwd" }, "method"],
      [{ toString: () => "host.info" }, {}, "method"],
      ["verbs.call", { handle: "1", method: "poll", args: [] }, "params.handle"],
      ["verbs.call", { handle: 1, method: "poll", args: [], extra: 1 }, "params.extra"],
      ["transcript.export", { format: "exe" }, "params.format"],
      ["backend.choose", { kind: "gpu" }, "params.kind"],
    ];
    for (const [method, params, path] of bad) {
      const r = await ask(e, method, params);
      expect(r.ok, JSON.stringify(method)).toBe(false);
      expect(r.error?.name).toBe("BridgeValidationError");
      expect(r.error?.path).toBe(path);
    }
    const child = env.fake.children[0];
    expect(child?.posted.filter((m) => m.type === "request") ?? []).toHaveLength(0);
  });

  it("relays valid requests to the backend utilityProcess and events back to the window", async () => {
    const wc = env.fake.windows[0]!.webContents;
    const child = env.fake.children[0]!;
    expect(env.fake.calls).toContain("fork /app/backend/entry.js");
    // Held until the process has spawned.
    expect(child.posted).toHaveLength(0);
    child.emit("spawn");
    expect(child.posted[0]).toMatchObject({ type: "init" });
    child.emit("message", { type: "ready", kind: "sim", pid: 4242 });

    const pending = ask(ipcEvent(wc, APP_URL), "gate.state", {});
    await new Promise((r) => setTimeout(r, 0));
    const req = child.posted.find((m) => m.type === "request")!;
    expect(req).toMatchObject({ type: "request", method: "gate.state" });
    child.emit("message", {
      type: "response",
      id: (req as { id: number }).id,
      ok: true,
      result: { mode: "idle", pending: null, stopped: false },
    });
    expect(await pending).toEqual({ ok: true, result: { mode: "idle", pending: null, stopped: false } });

    child.emit("message", { type: "event", event: "log", payload: { level: "info", text: "hi" } });
    const logs = wc.sent.filter((s) => s[0] === IPC_EVENT_CHANNEL && s[1] === "log");
    expect(logs).toEqual([[IPC_EVENT_CHANNEL, "log", { level: "info", text: "hi" }]]);
    // The supervisor's own "backend started" event reached the window too.
    expect(wc.sent.some((s) => s[1] === "backend")).toBe(true);
  });

  it("stops the backend before quitting", async () => {
    const child = env.fake.children[0]!;
    child.emit("spawn");
    child.emit("message", { type: "ready", kind: "sim", pid: 4242 });
    const e = { preventDefault: vi.fn() };
    env.fake.appEvents.emit("before-quit", e);
    expect(e.preventDefault).toHaveBeenCalled();
    await new Promise((r) => setTimeout(r, 0));
    expect(child.killed).toBe(true);
    expect(env.fake.calls).toContain("quit");
  });
});

describe("isTrustedSender", () => {
  it("needs our window, its main frame, and our page", () => {
    const win = { webContents: { id: 5 } };
    const ok = { sender: { id: 5 }, senderFrame: { url: APP_URL, parent: null } };
    expect(isTrustedSender(ok as never, win)).toBe(true);
    expect(isTrustedSender(ok as never, null)).toBe(false);
    expect(
      isTrustedSender({ ...ok, senderFrame: { url: "verbslab://other/index.html", parent: null } } as never, win),
    ).toBe(false);
  });
});
