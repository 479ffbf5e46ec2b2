/** What the preload exposes: the bridge contract over two IPC channels, and nothing else. */
import type { contextBridge, ipcRenderer, IpcRendererEvent } from "electron";
import { IPC_EVENT_CHANNEL, IPC_REQUEST_CHANNEL, PRELOAD_GLOBAL } from "../bridge/channels.js";
import type { PreloadApi } from "../bridge/client-electron.js";
import type { WireValue } from "../session/wire.js";

export function createPreloadApi(ipc: Pick<typeof ipcRenderer, "invoke" | "on" | "removeListener">): PreloadApi {
  return {
    request(method: string, params: WireValue): Promise<WireValue> {
      // Only the two arguments cross: the page cannot pick the channel.
      return ipc.invoke(IPC_REQUEST_CHANNEL, String(method), params) as Promise<WireValue>;
    },
    onEvent(listener: (event: string, payload: WireValue) => void): () => void {
      if (typeof listener !== "function") throw new TypeError("onEvent needs a function");
      // The page never sees the IpcRendererEvent (it holds `sender`, i.e. ipcRenderer).
      const wrapped = (_e: IpcRendererEvent, event: string, payload: WireValue) => listener(event, payload);
      ipc.on(IPC_EVENT_CHANNEL, wrapped);
      return () => {
        ipc.removeListener(IPC_EVENT_CHANNEL, wrapped);
      };
    },
  };
}

export function expose(bridge: Pick<typeof contextBridge, "exposeInMainWorld">, ipc: typeof ipcRenderer): void {
  bridge.exposeInMainWorld(PRELOAD_GLOBAL, createPreloadApi(ipc));
}
