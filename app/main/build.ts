/**
 * Builds what Electron runs (`tsx app/main/build.ts`): the TypeScript of the host side
 * transpiled file by file into dist/app/ (same tree, so paths computed from
 * import.meta.url — the native addon, the lessons — still hold), the preload bundled into
 * one sandbox-safe CommonJS file, and the data next to the code (lesson folders, the
 * native addon). The renderer is built separately by Vite into dist/renderer.
 */
import { build, type BuildOptions } from "esbuild";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Folders of host-side code (never the renderer, which Vite builds for the browser). */
const SOURCE_DIRS = [
  "verbs",
  "sim",
  "native",
  "state-machines",
  "lessons",
  "app/bridge",
  "app/session",
  "app/backend",
  "app/server",
  "app/main",
  "app/preload",
];

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isDirectory()) {
      // Lesson folders are data (copied below); build output and tests are not shipped.
      if (
        /^\d{2}-/.test(name) ||
        name === "build" ||
        name === "test" ||
        name === "conformance" ||
        name === "node_modules"
      )
        continue;
      sources(path, out);
    } else if (/\.ts$/.test(name) && !/\.(test|d)\.ts$/.test(name)) out.push(path);
  }
  return out;
}

export interface ShellBuild {
  outDir: string;
  mainEntry: string;
  preload: string;
  backendEntry: string;
}

export async function buildShell(outDir = join(REPO_ROOT, "dist", "app")): Promise<ShellBuild> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const entryPoints = SOURCE_DIRS.flatMap((d) =>
    existsSync(join(REPO_ROOT, d))
      ? sources(join(REPO_ROOT, d)).filter((f) => !f.endsWith("app/preload/preload.ts"))
      : [],
  );
  const common: BuildOptions = { platform: "node", target: "node20", logLevel: "warning", sourcemap: "linked" };
  await build({ ...common, entryPoints, outdir: outDir, outbase: REPO_ROOT, format: "esm", bundle: false });
  // The preload runs sandboxed: one CommonJS file that requires nothing but "electron".
  const preload = join(outDir, "app", "preload", "preload.cjs");
  await build({
    ...common,
    entryPoints: [join(REPO_ROOT, "app", "preload", "preload.ts")],
    outfile: preload,
    format: "cjs",
    bundle: true,
    external: ["electron"],
  });
  // Data next to the code that reads it.
  const lessonsDir = join(REPO_ROOT, "lessons");
  if (existsSync(lessonsDir))
    for (const name of readdirSync(lessonsDir))
      if (/^\d{2}-/.test(name)) cpSync(join(lessonsDir, name), join(outDir, "lessons", name), { recursive: true });
  cpSync(join(REPO_ROOT, "assets", "icons"), join(outDir, "assets", "icons"), { recursive: true });
  const addonDir = join(REPO_ROOT, "native", "build", "Release");
  if (existsSync(addonDir))
    for (const name of readdirSync(addonDir))
      if (name.endsWith(".node"))
        cpSync(join(addonDir, name), join(outDir, "native", "build", "Release", name), { recursive: true });
  return {
    outDir,
    mainEntry: join(outDir, "app", "main", "electron-main.js"),
    preload,
    backendEntry: join(outDir, "app", "backend", "entry.js"),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  buildShell().then(
    (b) => console.log(`built ${relative(REPO_ROOT, b.outDir)} (main: ${relative(REPO_ROOT, b.mainEntry)})`),
    (err: Error) => {
      console.error(err.message);
      process.exit(1);
    },
  );
}
