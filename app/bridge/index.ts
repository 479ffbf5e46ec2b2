/**
 * What the renderer imports: `getBridge()` picks the transport for where the page runs
 * (the Electron preload's API if present, else the web-mode WebSocket), plus the contract's
 * types. Nothing else in the renderer touches IPC or sockets.
 */
import { createElectronBridge, findPreloadApi } from "./client-electron.js";
import { createWebBridge } from "./client-web.js";
import type { Bridge } from "./client.js";

export * from "./contract.js";
export { type Bridge } from "./client.js";

let bridge: Bridge | null = null;

/** The one bridge of this page (created on first use). */
export function getBridge(): Bridge {
  if (!bridge) {
    const api = findPreloadApi();
    bridge = api ? createElectronBridge(api) : createWebBridge();
  }
  return bridge;
}

/** For tests: use this bridge instead (or forget it with null). */
export function setBridge(b: Bridge | null): void {
  bridge = b;
}
