/**
 * The Electron security policy, as plain functions over the objects Electron hands us, so
 * tests can check every rule without the Electron binary: the window's webPreferences, the
 * CSP, new windows denied, navigation and webviews blocked, permissions refused, and the
 * sender of every IPC message checked.
 */
import type { BrowserWindowConstructorOptions, Session, WebContents, WebFrameMain } from "electron";
import { contentSecurityPolicy } from "../bridge/csp.js";

/** The renderer is served from this privileged custom scheme (never file://, never http). */
export const APP_SCHEME = "verbslab";
export const APP_HOST = "app";
export const APP_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;

export const CSP = contentSecurityPolicy();

export function windowOptions(preloadPath: string, iconPath?: string): BrowserWindowConstructorOptions {
  return {
    ...(iconPath !== undefined && { icon: iconPath }),
    width: 1440,
    height: 900,
    minWidth: 960,
    minHeight: 600,
    title: "VerbsLab",
    show: false,
    backgroundColor: "#0f1419",
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      safeDialogs: true,
    },
  };
}

/** Is this URL the app's own page (the custom scheme and host)? */
export function isAppUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === `${APP_SCHEME}:` && u.host === APP_HOST;
  } catch {
    return false;
  }
}

/**
 * An IPC message is trusted only when it comes from the main frame of our window, showing
 * our own page. Anything else (another window, an iframe, a page navigated elsewhere) is refused.
 */
export function isTrustedSender(
  event: { sender: Pick<WebContents, "id">; senderFrame: Pick<WebFrameMain, "url" | "parent"> | null },
  window: { webContents: Pick<WebContents, "id"> } | null,
): boolean {
  if (!window || event.sender.id !== window.webContents.id) return false;
  const frame = event.senderFrame;
  if (!frame || frame.parent !== null) return false;
  return isAppUrl(frame.url);
}

/** Rules for every web contents the app ever creates. */
export function hardenWebContents(
  contents: Pick<WebContents, "on" | "setWindowOpenHandler">,
  openExternal?: (url: string) => void,
): void {
  contents.setWindowOpenHandler(({ url }) => {
    // Links to documentation open in the system browser; nothing opens inside the app.
    if (openExternal && /^https:\/\//.test(url)) openExternal(url);
    return { action: "deny" };
  });
  contents.on("will-navigate", (event, url) => {
    if (!isAppUrl(url)) event.preventDefault();
  });
  contents.on("will-redirect", (event, url) => {
    if (!isAppUrl(url)) event.preventDefault();
  });
  contents.on("will-attach-webview", (event) => event.preventDefault());
}

/** Session-wide: CSP on every response, no permissions (camera, notifications, …) for anyone. */
export function hardenSession(
  session: Pick<Session, "setPermissionRequestHandler" | "setPermissionCheckHandler" | "webRequest">,
): void {
  session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
  session.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, "Content-Security-Policy": [CSP] } });
  });
}

/** Headers for every file the app protocol serves. */
export function appResponseHeaders(contentType: string): Record<string, string> {
  return {
    "Content-Type": contentType,
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Opener-Policy": "same-origin",
  };
}
