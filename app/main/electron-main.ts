/**
 * The Electron entry (built to dist/app/app/main/electron-main.js by app/main/build.ts).
 * Paths are relative to the built tree: dist/app/app/{main,preload,backend}, dist/renderer.
 */
import * as electron from "electron";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createMainApp } from "./app.js";

const here = dirname(fileURLToPath(import.meta.url));
const distRoot = join(here, "..", "..", "..");
const pkg = JSON.parse(readFileSync(join(distRoot, "..", "package.json"), "utf8")) as { version: string };

createMainApp(electron, {
  rendererDir: join(distRoot, "renderer"),
  preloadPath: join(here, "..", "preload", "preload.cjs"),
  iconPath: join(here, "..", "..", "assets", "icons", "512x512.png"),
  backendEntry: join(here, "..", "backend", "entry.js"),
  appVersion: pkg.version,
});
