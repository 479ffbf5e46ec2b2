/**
 * `npm run classroom [-- --port 8000 --learners alice,bob,carol --instructors teacher --dir DIR]`:
 * JupyterHub on this machine with app/classroom/jupyterhub_config.py — the test authenticator,
 * a few learners and an instructor, each learner's VerbsLab server spawned on login — and
 * prints where to log in. Ctrl-C (or SIGTERM) stops the Hub, its proxy, the instructor
 * service and every learner's server.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureRendererBuilt } from "../e2e/harness.js";
import { JUPYTERHUB, repoRoot } from "./test-hub.js";

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "8000" },
      learners: { type: "string", default: "alice,bob,carol" },
      instructors: { type: "string", default: "teacher" },
      admins: { type: "string", default: "" },
      password: { type: "string", default: "verbslab" },
      dir: { type: "string", default: join(homedir(), ".local", "share", "verbslab-classroom") },
    },
  });
  if (!existsSync(JUPYTERHUB))
    throw new Error(`${JUPYTERHUB} is missing: install Debian's package (apt-get install jupyterhub)`);
  if (!existsSync(join(repoRoot, "node_modules", ".bin", "configurable-http-proxy")))
    throw new Error("configurable-http-proxy is missing from node_modules: run npm install");
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`--port must be a port number, not "${values.port}"`);
  console.log("Building the renderer if it changed…");
  await ensureRendererBuilt();

  const env = {
    ...process.env,
    VERBSLAB_CLASSROOM_DIR: values.dir,
    VERBSLAB_CLASSROOM_PORT: String(port),
    VERBSLAB_CLASSROOM_LEARNERS: values.learners,
    VERBSLAB_CLASSROOM_INSTRUCTORS: values.instructors,
    VERBSLAB_CLASSROOM_ADMINS: values.admins,
    VERBSLAB_CLASSROOM_PASSWORD: values.password,
  };
  mkdirSync(values.dir, { recursive: true });
  const hub = spawn(JUPYTERHUB, ["-f", join(repoRoot, "app", "classroom", "jupyterhub_config.py")], {
    cwd: values.dir,
    env,
    stdio: ["ignore", "inherit", "pipe"],
  });
  // JupyterHub logs to stderr: pass it on, and say where to go once it is up.
  hub.stderr.on("data", (chunk: Buffer) => {
    process.stderr.write(chunk);
    if (chunk.toString().includes("JupyterHub is now running")) {
      const url = `http://127.0.0.1:${port}/`;
      console.log(`\nThe classroom is up: ${url}`);
      console.log(`  learners:    ${values.learners.split(",").join(", ")}`);
      console.log(
        `  instructors: ${values.instructors.split(",").join(", ")} (the instructor view: ${url}services/instructor/)`,
      );
      console.log(`  password:    ${values.password} (the same for everyone: the test authenticator)`);
      console.log("Ctrl-C stops the Hub and every learner's server.\n");
    }
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    console.log("\nStopping the classroom…");
    hub.kill("SIGTERM");
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const code = await new Promise<number>((resolve) => hub.on("exit", (c, signal) => resolve(c ?? (signal ? 0 : 1))));
  if (stopping) console.log("The classroom has stopped.");
  return stopping ? 0 : code;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`classroom: ${err.message}`);
    process.exit(1);
  },
);
