/**
 * Builds the unpacked Linux app (`electron-builder --dir`) from electron-builder.yml with a
 * local `electronDist`, and checks what packaging decides: the app code and renderer in the
 * asar, the renderer-only dependencies left out, the native addon unpacked, the fuses set.
 *
 * Electron's binary cannot be downloaded here and no registry package ships one, so unless
 * VERBSLAB_ELECTRON_DIST names a real unpacked Electron, the dist is a stand-in: a file
 * named `electron` that carries Electron's fuse sentinel and wire with Electron's defaults.
 * Everything electron-builder does to it (copy, rename, asar, unpack, fuse flipping) is
 * real; only launching the packaged app needs the real binary, and that test says so.
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { extractFile, listPackage, statFile } from "@electron/asar";
import { getCurrentFuseWire } from "@electron/fuses";
import { Arch, build, Platform, type Configuration } from "electron-builder";
import { beforeAll, describe, expect, it } from "vitest";
import { buildShell, REPO_ROOT } from "./build.js";

// electron-builder's own YAML reader (untyped), to read the config the CLI would.
const yaml = createRequire(import.meta.url)("js-yaml") as { load(text: string): unknown };

const SENTINEL = "dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX";
/** Electron's own defaults, in wire order: RunAsNode, CookieEncryption, NodeOptions, NodeCliInspect, AsarIntegrity, OnlyLoadAppFromAsar, BrowserV8Snapshot, FileProtocolExtraPrivileges. */
const ELECTRON_DEFAULT_WIRE = "10110001";
const realDist = process.env.VERBSLAB_ELECTRON_DIST;
const addonDir = join(REPO_ROOT, "native", "build", "Release");
const addonNames = existsSync(addonDir) ? readdirSync(addonDir).filter((n) => n.endsWith(".node")) : [];

function standInElectron(dir: string): string {
  mkdirSync(join(dir, "resources"), { recursive: true });
  const body = Buffer.concat([
    Buffer.from("#!/bin/sh\necho 'stand-in for the Electron binary (it cannot be downloaded here)'; exit 1\n# "),
    Buffer.from(SENTINEL),
    Buffer.from([1, ELECTRON_DEFAULT_WIRE.length]),
    Buffer.from(ELECTRON_DEFAULT_WIRE),
    Buffer.from("\n"),
  ]);
  writeFileSync(join(dir, "electron"), body, { mode: 0o755 });
  writeFileSync(join(dir, "LICENSE"), "MIT (stand-in)\n");
  writeFileSync(join(dir, "version"), "stand-in\n");
  return dir;
}

describe(`electron-builder --dir (${realDist ? "real Electron dist" : "stand-in Electron binary"})`, () => {
  let appDir: string;
  let asar: string;
  let files: string[];
  const config = yaml.load(readFileSync(join(REPO_ROOT, "electron-builder.yml"), "utf8")) as Configuration;

  beforeAll(async () => {
    // A copy of the project's shape in a temporary folder (package.json, dist/, and the
    // checkout's node_modules linked in), so the test neither needs nor disturbs the
    // checkout's dist/ and the config is used exactly as written.
    const staging = mkdtempSync(join(tmpdir(), "verbslab-pack-"));
    const project = join(staging, "project");
    mkdirSync(project);
    cpSync(join(REPO_ROOT, "package.json"), join(project, "package.json"));
    if (existsSync(join(REPO_ROOT, "package-lock.json")))
      cpSync(join(REPO_ROOT, "package-lock.json"), join(project, "package-lock.json"));
    symlinkSync(join(REPO_ROOT, "node_modules"), join(project, "node_modules"), "dir");
    cpSync(join(REPO_ROOT, "assets"), join(project, "assets"), { recursive: true });
    await buildShell(join(project, "dist", "app"));
    const renderer = join(project, "dist", "renderer");
    const built = join(REPO_ROOT, "dist", "renderer");
    mkdirSync(renderer, { recursive: true });
    try {
      cpSync(built, renderer, { recursive: true });
    } catch {
      // Not built, or being rebuilt right now by the end-to-end tests: the renderer's content
      // is not what this test is about, only that dist/renderer is packaged.
    }
    if (!existsSync(join(renderer, "index.html")))
      writeFileSync(join(renderer, "index.html"), "<!doctype html><title>VerbsLab</title>\n");

    const out = join(staging, "out");
    await build({
      projectDir: project,
      targets: Platform.LINUX.createTarget("dir", Arch.x64),
      publish: "never",
      config: {
        ...config,
        electronDist: realDist ?? standInElectron(join(staging, "electron-dist")),
        directories: { ...config.directories, output: out },
      },
    });
    appDir = join(out, "linux-unpacked");
    asar = join(appDir, "resources", "app.asar");
    files = listPackage(asar, { isPack: false });
  }, 240_000);

  it("packages the app under its own name, with the code in an asar", () => {
    expect(statSync(join(appDir, "verbslab")).mode & 0o111).not.toBe(0);
    expect(existsSync(asar)).toBe(true);
    const pkg = JSON.parse(extractFile(asar, "package.json").toString()) as { main: string };
    expect(pkg.main).toBe("dist/app/app/main/electron-main.js");
    for (const f of [
      pkg.main,
      "dist/app/app/preload/preload.cjs",
      "dist/app/app/backend/entry.js",
      "dist/app/sim/index.js",
      "dist/app/app/session/index.js",
      "dist/renderer/index.html",
      // The window's icon (electron-main.ts points at it).
      "dist/app/assets/icons/512x512.png",
    ])
      expect(files, f).toContain(`/${f}`);
    // Lessons are data read at run time.
    expect(files.some((f) => /^\/dist\/app\/lessons\/\d\d-[^/]+\/lesson\.json$/.test(f))).toBe(true);
  });

  it("ships the host side's dependencies and leaves the renderer's (bundled by Vite) and the tests out", () => {
    expect(files).toContain("/node_modules/ws/package.json");
    expect(files).toContain("/node_modules/xstate/package.json");
    for (const dep of ["monaco-editor", "react", "react-dom", "dompurify", "electron", "vitest", "typescript"])
      expect(files, dep).not.toContain(`/node_modules/${dep}/package.json`);
    expect(files.filter((f) => /\.test\.[jt]s$/.test(f) || (f.startsWith("/dist/") && f.endsWith(".map")))).toEqual([]);
    expect(files).not.toContain("/dist/app/app/main/start.js");
  });

  it("sets the fuses: no run-as-node, encrypted cookies, no NODE_OPTIONS, no --inspect, only a checked asar", async () => {
    const wire = await getCurrentFuseWire(join(appDir, "verbslab"));
    const on = 49; // FuseState.ENABLE ('1')
    const off = 48; // FuseState.DISABLE ('0')
    expect(wire).toMatchObject({
      0: off, // RunAsNode
      1: on, // EnableCookieEncryption
      2: off, // EnableNodeOptionsEnvironmentVariable
      3: off, // EnableNodeCliInspectArguments
      4: on, // EnableEmbeddedAsarIntegrityValidation
      5: on, // OnlyLoadAppFromAsar
      7: off, // GrantFileProtocolExtraPrivileges
    });
  });

  it.skipIf(addonNames.length === 0)("unpacks the native addon from the asar so it can be loaded", () => {
    for (const name of addonNames) {
      const inAsar = `dist/app/native/build/Release/${name}`;
      expect(files).toContain(`/${inAsar}`);
      expect((statFile(asar, inAsar) as { unpacked?: boolean }).unpacked).toBe(true);
      const unpacked = join(appDir, "resources", "app.asar.unpacked", inAsar);
      expect(readFileSync(unpacked).equals(readFileSync(join(addonDir, name)))).toBe(true);
    }
  });

  it.skipIf(!realDist)(
    "launches the packaged app (needs a real Electron: set VERBSLAB_ELECTRON_DIST; it cannot be downloaded here)",
    () => {
      const bin = readFileSync(join(appDir, "verbslab"));
      expect(bin.includes(Buffer.from(SENTINEL))).toBe(true);
      expect(bin.length).toBeGreaterThan(10_000_000);
    },
  );
});
