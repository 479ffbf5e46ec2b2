/**
 * `npm start`: the desktop app when the Electron binary is installed; otherwise web mode,
 * printing the URL to open, instead of failing. Builds what is missing first (the renderer
 * with Vite, the shell into dist/app). `npm start -- --web` asks for web mode explicitly;
 * other flags go to web mode (`--port`, `--backend`, `--seed`, `--data`, `--profile`).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { buildShell, REPO_ROOT } from "./build.js";

/** The Electron binary's path, or why there is none (`npm install` without the download). */
export function electronBinary(): { path: string } | { missing: string } {
  try {
    // The electron package's main export is the binary's path; it throws when dist/ was never downloaded.
    const path = createRequire(import.meta.url)("electron") as unknown;
    if (typeof path === "string" && existsSync(path)) return { path };
    return { missing: `the Electron binary is not at ${String(path)}` };
  } catch (err) {
    return { missing: (err as Error).message.split("\n")[0] ?? "the Electron binary is not installed" };
  }
}

async function ensureRenderer(): Promise<string> {
  const dir = join(REPO_ROOT, "dist", "renderer");
  if (!existsSync(join(dir, "index.html"))) {
    console.log("Building the renderer (first start)…");
    const { build } = await import("vite");
    await build({ configFile: join(REPO_ROOT, "app", "renderer", "vite.config.ts"), logLevel: "warn" });
  }
  return dir;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const wantWeb = args.includes("--web");
  const webArgs = args.filter((a) => a !== "--web");
  const staticDir = await ensureRenderer();
  const electron = electronBinary();

  if (!wantWeb && "path" in electron) {
    const built = await buildShell();
    const child = spawn(electron.path, [built.mainEntry], { stdio: "inherit", cwd: REPO_ROOT });
    child.on("exit", (code) => process.exit(code ?? 0));
    return;
  }
  if (!wantWeb && "missing" in electron)
    console.log(
      "Electron's binary is not installed, so VerbsLab starts in web mode (the same app, in your browser).\n" +
        "npm install never downloads it (package.json's allowScripts denies electron's download script).\n" +
        "For the desktop app, download it once: node node_modules/electron/install.js\n" +
        `(${electron.missing})`,
    );

  // Web mode: the same renderer and backend, served on 127.0.0.1 behind a per-run token.
  const { startWebMode } = await import("../server/cli.js");
  const { parseArgs } = await import("node:util");
  const { values } = parseArgs({
    args: webArgs,
    options: {
      port: { type: "string" },
      backend: { type: "string" },
      seed: { type: "string" },
      data: { type: "string" },
      profile: { type: "string" },
    },
  });
  const backend = values.backend === "sim" || values.backend === "native" ? values.backend : null;
  const web = await startWebMode({
    backend,
    staticDir,
    ...(values.port !== undefined && { port: Number(values.port) }),
    ...(values.seed !== undefined && { seed: Number(values.seed) }),
    ...(values.data !== undefined && { dataDir: values.data }),
    ...(values.profile !== undefined && { profile: values.profile }),
  });
  const s = web.supervisor.status();
  console.log(
    `VerbsLab web mode: ${s.kind} backend (backend process ${s.pid}), transcripts in ${s.transcriptPath ?? "?"}`,
  );
  console.log(`Open this URL in a browser (it carries this run's access token):\n\n  ${web.server.url}\n`);
  web.supervisor.onEvent((event, payload) => {
    if (event !== "backend") return;
    const p = payload as { event: string; pid?: number; lastExit?: { reason: string } };
    if (p.event === "died") console.error(`The backend process died (${p.lastExit?.reason}); restarting it.`);
    if (p.event === "restarted") console.error(`The backend process was restarted (pid ${p.pid}).`);
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void web.close().finally(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  // npm does not pass a SIGTERM on past the shell it runs the script in, and a SIGKILL reaches
  // nobody: when the process that started us is gone (we were handed to init), stop too.
  // The backend process follows by itself (it exits when its IPC channel closes).
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop();
  }, 500).unref();
}

main().catch((err: Error) => {
  console.error(`verbslab: ${err.stack ?? err.message}`);
  process.exit(1);
});
