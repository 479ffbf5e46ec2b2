/**
 * The bridge over Electron IPC, main side: one `invoke` channel for requests (validated by
 * the host core after the sender check) and one channel for events to the window.
 */
import type { IpcMain, IpcMainInvokeEvent, WebContents } from "electron";
import { IPC_EVENT_CHANNEL, IPC_REQUEST_CHANNEL } from "../bridge/contract.js";
import type { WireValue } from "../session/wire.js";
import type { HostCore } from "../backend/host.js";

export type SenderCheck = (event: IpcMainInvokeEvent) => boolean;

/** The handler registered for IPC_REQUEST_CHANNEL (exported for tests). */
export function requestHandler(core: HostCore, trusted: SenderCheck) {
  return async (event: IpcMainInvokeEvent, method: unknown, params: unknown): Promise<WireValue> => {
    if (!trusted(event))
      return {
        ok: false,
        error: { name: "ForbiddenSenderError", message: "this frame may not use the VerbsLab bridge" },
      };
    return core.handle(method, params);
  };
}

export function registerBridgeIpc(ipcMain: Pick<IpcMain, "handle">, core: HostCore, trusted: SenderCheck): void {
  ipcMain.handle(IPC_REQUEST_CHANNEL, requestHandler(core, trusted));
}

/** Sends every host event to the window while it lives. Returns the function that stops it. */
export function forwardEvents(core: HostCore, contents: () => Pick<WebContents, "send" | "isDestroyed"> | null) {
  return core.onEvent((event, payload) => {
    const wc = contents();
    if (wc && !wc.isDestroyed()) wc.send(IPC_EVENT_CHANNEL, event, payload);
  });
}
