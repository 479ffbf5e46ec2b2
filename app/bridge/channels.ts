/** Where the bridge travels. Its own file so the sandboxed preload bundles only these names. */

/** Electron IPC channel names (the preload and main use exactly these). */
export const IPC_REQUEST_CHANNEL = "verbslab:request";
export const IPC_EVENT_CHANNEL = "verbslab:event";
/** The name under which the preload exposes the bridge on `window`. */
export const PRELOAD_GLOBAL = "verbslabBridge";
/** Web mode: the WebSocket path and the query parameter carrying the per-run token. */
export const WS_PATH = "/bridge";
export const TOKEN_PARAM = "token";
