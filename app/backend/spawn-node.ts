/**
 * Spawning the backend process with Node's child_process.fork (web mode, the CLI, tests).
 * The Electron app spawns the same entry with utilityProcess instead (app/main).
 */
import { fork } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Spawn } from "./supervisor.js";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The backend entry to run: entry.js next to this file when built (dist/app/app/backend),
 * or, from a source checkout, entry.ts run through tsx.
 */
export function backendEntry(): { path: string; execArgv: string[] } {
  const built = join(here, "entry.js");
  if (fileURLToPath(import.meta.url).endsWith(".js") && existsSync(built)) return { path: built, execArgv: [] };
  // tsx by its path: a bare "tsx" would be looked up from the working directory, which for a
  // learner's server under JupyterHub is their home, outside the repository.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  return { path: join(here, "entry.ts"), execArgv: ["--import", tsx] };
}

export function forkSpawner(entry = backendEntry(), env: NodeJS.ProcessEnv = process.env): Spawn {
  return (handlers) => {
    const child = fork(entry.path, [], {
      execArgv: entry.execArgv,
      env,
      serialization: "json",
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    let exited = false;
    const exit = (code: number | null, signal: string | null) => {
      if (exited) return;
      exited = true;
      handlers.onExit(code, signal);
    };
    child.on("message", (m) => handlers.onMessage(m));
    child.on("exit", (code, signal) => exit(code, signal));
    child.on("error", () => {
      // "error" without "exit" means it never ran (or cannot be signalled); treat as an exit.
      if (child.exitCode === null && child.signalCode === null && child.pid === undefined) exit(null, null);
    });
    return {
      get pid() {
        return child.pid;
      },
      send(message) {
        if (child.connected) child.send(message);
      },
      kill(force) {
        child.kill(force ? "SIGKILL" : "SIGTERM");
      },
    };
  };
}
