import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runInNewContext } from "node:vm";
import { build } from "esbuild";
import { describe, expect, it, vi } from "vitest";
import { IPC_EVENT_CHANNEL, IPC_REQUEST_CHANNEL, PRELOAD_GLOBAL } from "../bridge/channels.js";
import { createElectronBridge, findPreloadApi, type PreloadApi } from "../bridge/client-electron.js";
import { createPreloadApi } from "./api.js";

function fakeIpc() {
  const listeners = new Map<string, Set<(...a: unknown[]) => void>>();
  return {
    invoke: vi.fn(async (_channel: string, method: string, params: unknown) => ({
      ok: true,
      result: { method, params },
    })),
    on(channel: string, l: (...a: unknown[]) => void) {
      if (!listeners.has(channel)) listeners.set(channel, new Set());
      listeners.get(channel)!.add(l);
      return this;
    },
    removeListener(channel: string, l: (...a: unknown[]) => void) {
      listeners.get(channel)?.delete(l);
      return this;
    },
    fire(channel: string, ...args: unknown[]) {
      for (const l of listeners.get(channel) ?? []) l(...args);
    },
    count: (channel: string) => listeners.get(channel)?.size ?? 0,
  };
}

describe("preload API", () => {
  it("sends requests on the one request channel only", async () => {
    const ipc = fakeIpc();
    const api = createPreloadApi(ipc as never);
    await api.request("gate.step", {});
    expect(ipc.invoke).toHaveBeenCalledWith(IPC_REQUEST_CHANNEL, "gate.step", {});
  });

  it("hands events to the page without the IpcRendererEvent (which would leak ipcRenderer)", () => {
    const ipc = fakeIpc();
    const api = createPreloadApi(ipc as never);
    const got: unknown[][] = [];
    const off = api.onEvent((...args) => got.push(args));
    ipc.fire(IPC_EVENT_CHANNEL, { sender: "ipcRenderer!" }, "log", { text: "x" });
    expect(got).toEqual([["log", { text: "x" }]]);
    off();
    expect(ipc.count(IPC_EVENT_CHANNEL)).toBe(0);
    expect(() => api.onEvent("not a function" as never)).toThrow(TypeError);
  });

  it("is what the renderer's Electron client uses", async () => {
    const ipc = fakeIpc();
    const scope = { [PRELOAD_GLOBAL]: createPreloadApi(ipc as never) };
    const api = findPreloadApi(scope) as PreloadApi;
    expect(api).not.toBeNull();
    const bridge = createElectronBridge(api);
    expect(bridge.host).toBe("electron");
    expect(await bridge.request("transcript.export", { format: "c" })).toEqual({
      method: "transcript.export",
      params: { format: "c" },
    });
  });

  it("bundles to one CommonJS file that requires only electron and exposes only the bridge", async () => {
    const dir = mkdtempSync(join(tmpdir(), "verbslab-preload-"));
    const outfile = join(dir, "preload.cjs");
    const here = createRequire(import.meta.url).resolve("./preload.ts");
    await build({
      entryPoints: [here],
      outfile,
      bundle: true,
      format: "cjs",
      platform: "node",
      external: ["electron"],
      logLevel: "silent",
    });
    const required: string[] = [];
    const exposed: Record<string, unknown> = {};
    const ipc = fakeIpc();
    const electron = {
      contextBridge: { exposeInMainWorld: (key: string, api: unknown) => (exposed[key] = api) },
      ipcRenderer: ipc,
    };
    const module = { exports: {} };
    runInNewContext(readFileSync(outfile, "utf8"), {
      require: (name: string) => {
        required.push(name);
        if (name !== "electron") throw new Error(`a sandboxed preload cannot require ${name}`);
        return electron;
      },
      module,
      exports: module.exports,
    });
    expect(required).toEqual(["electron"]);
    expect(Object.keys(exposed)).toEqual([PRELOAD_GLOBAL]);
    expect(Object.keys(exposed[PRELOAD_GLOBAL] as object).sort()).toEqual(["onEvent", "request"]);
  });
});
