/**
 * The bridge over Electron IPC, through the API the preload exposes on `window` (and only
 * that: the renderer has no ipcRenderer of its own).
 */
import { PRELOAD_GLOBAL } from "./contract.js";
import { createBridge, type Bridge } from "./client.js";
import type { WireValue } from "../session/wire.js";

/** Exactly what app/preload exposes with contextBridge.exposeInMainWorld(PRELOAD_GLOBAL, …). */
export interface PreloadApi {
  /** ipcRenderer.invoke(IPC_REQUEST_CHANNEL, method, params) → the host's JSON envelope. */
  request(method: string, params: WireValue): Promise<WireValue>;
  /** Listens to IPC_EVENT_CHANNEL; returns the function that stops listening. */
  onEvent(listener: (event: string, payload: WireValue) => void): () => void;
}

/** The preload's API if this page runs inside the Electron app, else null. */
export function findPreloadApi(scope: object = globalThis): PreloadApi | null {
  const api = (scope as Record<string, unknown>)[PRELOAD_GLOBAL] as PreloadApi | undefined;
  return api && typeof api.request === "function" && typeof api.onEvent === "function" ? api : null;
}

export function createElectronBridge(api: PreloadApi): Bridge {
  return createBridge({
    host: "electron",
    send: (method, params) => api.request(method, params),
    subscribe: (listener) => api.onEvent(listener),
  });
}
