/**
 * `tsx app/server/cli.ts [--port N] [--backend sim|native] [--seed N] [--data DIR] [--profile NAME] [--static DIR]`
 * Starts web mode: the backend process under its supervisor, the renderer and the bridge on
 * 127.0.0.1, and prints the URL with this run's token.
 */
import { homedir } from "node:os";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { DEFAULT_PROFILE, profileNameProblem } from "../../lessons/progress-file.js";
import { createHostCore, type HostCore } from "../backend/host.js";
import { forkSpawner } from "../backend/spawn-node.js";
import { BackendSupervisor } from "../backend/supervisor.js";
import { startWebServer, type HubMode, type WebServer } from "./server.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Where transcripts and progress go: $VERBSLAB_DATA_DIR, else $XDG_DATA_HOME/verbslab, else ~/.local/share/verbslab. */
export function defaultDataDir(): string {
  if (process.env.VERBSLAB_DATA_DIR) return process.env.VERBSLAB_DATA_DIR;
  const xdg = process.env.XDG_DATA_HOME || join(homedir(), ".local", "share");
  return join(xdg, "verbslab");
}

/** The learner profile progress and code belong to: $VERBSLAB_PROFILE, else "default". */
export function defaultProfile(): string {
  return process.env.VERBSLAB_PROFILE || DEFAULT_PROFILE;
}

export interface WebMode {
  server: WebServer;
  supervisor: BackendSupervisor;
  close(): Promise<void>;
}

export async function startWebMode(opts: {
  port?: number;
  backend?: "sim" | "native" | null;
  seed?: number;
  dataDir?: string;
  /** The learner profile (default: defaultProfile()). */
  profile?: string;
  staticDir?: string;
  token?: string;
  /** Run as a JupyterHub single-user server (app/classroom/learner-server.ts). */
  hub?: HubMode;
  /** Wraps the host core the server talks to (the classroom's progress reporter). */
  wrapCore?: (core: HostCore) => HostCore;
}): Promise<WebMode> {
  const staticDir = opts.staticDir ?? join(repoRoot, "dist", "renderer");
  const profile = opts.profile ?? defaultProfile();
  const problem = profileNameProblem(profile);
  if (problem) throw new Error(problem);
  const supervisor = new BackendSupervisor({
    spawn: forkSpawner(),
    init: {
      backend: opts.backend ?? null,
      dataDir: opts.dataDir ?? defaultDataDir(),
      profile,
      ...(opts.seed !== undefined && { seed: opts.seed }),
    },
  });
  await supervisor.start();
  const version = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version;
  const plain = createHostCore({ supervisor, host: "web", appVersion: version });
  const core = opts.wrapCore ? opts.wrapCore(plain) : plain;
  const server = await startWebServer({
    core,
    ...(opts.hub && { hub: opts.hub }),
    staticDir,
    ...(opts.port !== undefined && { port: opts.port }),
    ...(opts.token !== undefined && { token: opts.token }),
  });
  return {
    server,
    supervisor,
    async close() {
      await server.close();
      await supervisor.stop();
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string" },
      backend: { type: "string" },
      seed: { type: "string" },
      data: { type: "string" },
      profile: { type: "string" },
      static: { type: "string" },
    },
  });
  const backend = values.backend === "sim" || values.backend === "native" ? values.backend : null;
  if (values.backend !== undefined && backend === null) throw new Error(`--backend must be sim or native`);
  const staticDir = values.static ?? join(repoRoot, "dist", "renderer");
  if (!existsSync(join(staticDir, "index.html")))
    console.warn(
      `verbslab: ${staticDir}/index.html does not exist yet: build the renderer (npx vite build --config app/renderer/vite.config.ts)`,
    );
  const web = await startWebMode({
    backend,
    staticDir,
    ...(values.port !== undefined && { port: Number(values.port) }),
    ...(values.seed !== undefined && { seed: Number(values.seed) }),
    ...(values.data !== undefined && { dataDir: values.data }),
    ...(values.profile !== undefined && { profile: values.profile }),
  });
  const status = web.supervisor.status();
  console.log(`VerbsLab web mode (${status.kind ?? "?"} backend, backend process ${status.pid ?? "?"})`);
  console.log(`Open: ${web.server.url}`);
  web.supervisor.onEvent((event, payload) => {
    if (event !== "backend") return;
    const p = payload as { event: string; pid?: number; lastExit?: { reason: string } };
    if (p.event === "died") console.error(`verbslab: the backend process died (${p.lastExit?.reason}); restarting it`);
    if (p.event === "restarted") console.error(`verbslab: backend process restarted (pid ${p.pid})`);
  });
  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    web.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: Error) => {
    console.error(`verbslab: ${err.message}`);
    process.exit(1);
  });
}
