/**
 * Electron main: one window on the app's own scheme, the security policy of security.ts,
 * the bridge over IPC, and the backend in a supervised utilityProcess. The electron module
 * is passed in, so tests drive all of this with a fake one (the binary is not needed).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type * as Electron from "electron";
import { createHostCore, type HostCore } from "../backend/host.js";
import { BackendSupervisor, type Spawn } from "../backend/supervisor.js";
import { resolveStatic } from "../server/static.js";
import { forwardEvents, registerBridgeIpc } from "./ipc.js";
import {
  APP_SCHEME,
  APP_URL,
  appResponseHeaders,
  hardenSession,
  hardenWebContents,
  isTrustedSender,
  windowOptions,
} from "./security.js";

export type ElectronModule = Pick<
  typeof Electron,
  "app" | "BrowserWindow" | "ipcMain" | "protocol" | "session" | "utilityProcess" | "shell"
>;

export interface MainOptions {
  /** The built renderer (dist/renderer). */
  rendererDir: string;
  /** The bundled preload (CommonJS). */
  preloadPath: string;
  /** The window icon (a PNG rendered from assets/icon.svg). */
  iconPath?: string;
  /** The backend process entry (JavaScript). */
  backendEntry: string;
  appVersion: string;
  /** Where transcripts and progress go (default: userData/data). */
  dataDir?: string;
}

/** The app protocol: files of the built renderer, each with the CSP; nothing outside it. */
export function serveApp(rendererDir: string, url: string): Response {
  const found = resolveStatic(rendererDir, new URL(url).pathname);
  if (!found.ok) return new Response("not found", { status: found.status, headers: appResponseHeaders("text/plain") });
  return new Response(readFileSync(found.file), { status: 200, headers: appResponseHeaders(found.contentType) });
}

/** The backend entry in an Electron utilityProcess (messages held until it has spawned). */
export function utilitySpawner(utilityProcess: ElectronModule["utilityProcess"], entry: string): Spawn {
  return (handlers) => {
    const child = utilityProcess.fork(entry, [], { serviceName: "VerbsLab backend", stdio: "inherit" });
    let spawned = false;
    const held: unknown[] = [];
    child.on("spawn", () => {
      spawned = true;
      for (const m of held.splice(0)) child.postMessage(m);
    });
    child.on("message", (m: unknown) => handlers.onMessage(m));
    // utilityProcess reports only a code; a crash (e.g. SIGSEGV in native code) is a non-zero one.
    child.on("exit", (code: number) => handlers.onExit(code, null));
    return {
      get pid() {
        return child.pid;
      },
      send(message) {
        if (spawned) child.postMessage(message);
        else held.push(message);
      },
      kill() {
        child.kill();
      },
    };
  };
}

export interface MainApp {
  supervisor: BackendSupervisor;
  core: HostCore;
  window(): Electron.BrowserWindow | null;
  /** Resolves when the window has been created and asked to load the app. */
  ready: Promise<void>;
}

export function createMainApp(electron: ElectronModule, options: MainOptions): MainApp {
  const { app, BrowserWindow, ipcMain, protocol, session, utilityProcess, shell } = electron;

  // Must happen before "ready": our scheme behaves like https (secure, standard origin, fetch).
  protocol.registerSchemesAsPrivileged([
    { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true } },
  ]);
  app.enableSandbox();

  let win: Electron.BrowserWindow | null = null;
  const supervisor = new BackendSupervisor({
    spawn: utilitySpawner(utilityProcess, options.backendEntry),
    init: {
      backend: null,
      dataDir: options.dataDir ?? (process.env.VERBSLAB_DATA_DIR || join(app.getPath("userData"), "data")),
      ...(process.env.VERBSLAB_PROFILE && { profile: process.env.VERBSLAB_PROFILE }),
    },
  });
  const core = createHostCore({ supervisor, host: "electron", appVersion: options.appVersion });

  app.on("web-contents-created", (_event, contents) =>
    hardenWebContents(contents, (url) => void shell.openExternal(url)),
  );
  registerBridgeIpc(ipcMain, core, (event) => isTrustedSender(event, win));
  forwardEvents(core, () => win?.webContents ?? null);

  const ready = app.whenReady().then(async () => {
    hardenSession(session.defaultSession);
    protocol.handle(APP_SCHEME, (request) => serveApp(options.rendererDir, request.url));
    win = new BrowserWindow(windowOptions(options.preloadPath, options.iconPath));
    win.once("ready-to-show", () => win?.show());
    win.on("closed", () => {
      win = null;
    });
    // The window does not wait for the backend: the renderer hears "backend started".
    supervisor.start().catch((err: Error) => console.error(`VerbsLab: ${err.message}`));
    await win.loadURL(APP_URL);
  });

  app.on("window-all-closed", () => app.quit());
  let quitting = false;
  app.on("before-quit", (event) => {
    if (quitting) return;
    quitting = true;
    event.preventDefault();
    supervisor.stop().finally(() => app.quit());
  });

  return { supervisor, core, window: () => win, ready };
}
