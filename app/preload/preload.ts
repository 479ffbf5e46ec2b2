/**
 * The preload: exposes the bridge contract to the page and nothing else — no ipcRenderer,
 * no Node. Runs sandboxed, so it is bundled to one CommonJS file that requires only
 * "electron" (app/main/build.ts).
 */
import { contextBridge, ipcRenderer } from "electron";
import { expose } from "./api.js";

expose(contextBridge, ipcRenderer);
