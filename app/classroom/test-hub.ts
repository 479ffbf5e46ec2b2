/**
 * A real JupyterHub for tests (and the benchmark): Debian's `jupyterhub` with the repo's own
 * jupyterhub_config.py, on free ports in a temp dir, plus one API-only service whose token
 * lets a test create users' tokens and start their servers. `login()` walks the Hub's login
 * form and OAuth redirects the way a browser does, keeping cookies per path.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";

export const repoRoot = resolve(fileURLToPath(new URL(".", import.meta.url)), "../..");
export const JUPYTERHUB = process.env.VERBSLAB_JUPYTERHUB ?? "/usr/bin/jupyterhub";
/** Whether this machine can start a Hub (Debian's jupyterhub package, configurable-http-proxy from npm). */
export const hasJupyterHub =
  existsSync(JUPYTERHUB) && existsSync(join(repoRoot, "node_modules", ".bin", "configurable-http-proxy"));

/** A port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolvePort(port));
    });
  });
}

export interface TestHubOptions {
  learners?: string[];
  instructors?: string[];
  admins?: string[];
  /** The instructor store (default: a SQLite file in the Hub's dir). */
  instructorDb?: string;
  /** Extra environment for the Hub (and so its spawners and services). */
  env?: Record<string, string>;
}

export interface TestHub {
  /** The public URL (`http://127.0.0.1:PORT`), no trailing slash. */
  readonly url: string;
  readonly dir: string;
  readonly instructorPort: number;
  /** The Hub's REST API with the test service's token (admin:users, admin:servers, tokens). */
  api(method: string, path: string, body?: unknown): Promise<Response>;
  /** A new API token of `user` (all of the user's own permissions). */
  tokenFor(user: string): Promise<string>;
  /** Starts `user`'s server and waits until the Hub says it is ready; its URL path (`/user/alice/`). */
  startServer(user: string): Promise<string>;
  stopServer(user: string): Promise<void>;
  /** The Hub's log so far. */
  log(): string;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startTestHub(options: TestHubOptions = {}): Promise<TestHub> {
  const dir = mkdtempSync(join(tmpdir(), "verbslab-hub-"));
  const [port, hubPort, proxyApiPort, instructorPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const token = randomBytes(24).toString("hex");
  const config = join(dir, "test_config.py");
  writeFileSync(
    config,
    `load_subconfig(${JSON.stringify(join(repoRoot, "app", "classroom", "jupyterhub_config.py"))})
c.JupyterHub.services.append({"name": "classroom-test", "api_token": ${JSON.stringify(token)}})
c.JupyterHub.load_roles.append({"name": "classroom-test", "services": ["classroom-test"],
  "scopes": ["admin:users", "admin:servers", "tokens", "read:users", "list:users"]})
`,
  );
  const logFile = join(dir, "hub.log");
  const env = {
    ...process.env,
    VERBSLAB_CLASSROOM_DIR: join(dir, "state"),
    VERBSLAB_CLASSROOM_PORT: String(port),
    VERBSLAB_CLASSROOM_HUB_PORT: String(hubPort),
    VERBSLAB_CLASSROOM_PROXY_API_PORT: String(proxyApiPort),
    VERBSLAB_INSTRUCTOR_PORT: String(instructorPort),
    VERBSLAB_CLASSROOM_LEARNERS: (options.learners ?? ["alice", "bob"]).join(","),
    VERBSLAB_CLASSROOM_INSTRUCTORS: (options.instructors ?? ["teacher"]).join(","),
    VERBSLAB_CLASSROOM_ADMINS: (options.admins ?? []).join(","),
    ...(options.instructorDb && { VERBSLAB_INSTRUCTOR_DB: options.instructorDb }),
    ...options.env,
  };
  const { openSync } = await import("node:fs");
  const out = openSync(logFile, "a");
  // Its own process group: close() ends the Hub, its proxy, the service and every learner server.
  const child: ChildProcess = spawn(JUPYTERHUB, ["-f", config], {
    cwd: dir,
    env,
    stdio: ["ignore", out, out],
    detached: true,
  });
  let exited: number | null = null;
  child.on("exit", (code) => (exited = code ?? -1));
  const url = `http://127.0.0.1:${port}`;
  const log = () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : "");

  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${url}/hub/api${path}`, {
      method,
      headers: { Authorization: `token ${token}`, ...(body !== undefined && { "Content-Type": "application/json" }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });

  const deadline = Date.now() + 90_000;
  for (;;) {
    if (exited !== null) throw new Error(`jupyterhub exited (${exited}) while starting:\n${log().slice(-3000)}`);
    const ok = await api("GET", "/")
      .then((r) => r.ok)
      .catch(() => false);
    // The instructor service is routed once the Hub says it is running.
    if (ok && log().includes("JupyterHub is now running")) break;
    if (Date.now() > deadline) throw new Error(`jupyterhub did not start in 90 s:\n${log().slice(-3000)}`);
    await sleep(300);
  }

  const hub: TestHub = {
    url,
    dir,
    instructorPort,
    api,
    log,
    async tokenFor(user) {
      const res = await api("POST", `/users/${user}/tokens`, { note: "verbslab test", expires_in: 3600 });
      if (!res.ok) throw new Error(`token for ${user}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { token: string }).token;
    },
    async startServer(user) {
      const res = await api("POST", `/users/${user}/server`);
      if (res.status !== 201 && res.status !== 202 && res.status !== 400)
        throw new Error(`starting ${user}'s server: ${res.status} ${await res.text()}\n${log().slice(-4000)}`);
      const until = Date.now() + 150_000;
      for (;;) {
        const model = (await (await api("GET", `/users/${user}`)).json()) as {
          servers?: Record<string, { ready: boolean; url: string }>;
        };
        const server = model.servers?.[""];
        if (server?.ready) return server.url;
        if (Date.now() > until) throw new Error(`${user}'s server did not get ready:\n${log().slice(-3000)}`);
        await sleep(300);
      }
    },
    async stopServer(user) {
      await api("DELETE", `/users/${user}/server`);
    },
    async close() {
      if (exited === null) {
        const gone = new Promise<void>((r) => child.once("exit", () => r()));
        child.kill("SIGTERM");
        await Promise.race([gone, sleep(20_000)]);
        // Whatever is left of its group (a learner server that ignored the Hub).
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          /* already gone */
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return hub;
}

/** A browser's cookie jar and redirects, small: enough to log in to the Hub and follow OAuth. */
export class CookieClient {
  private readonly cookies = new Map<string, { value: string; path: string }>();
  constructor(readonly base: string) {}

  /** The Cookie header for `path` (cookies whose Path is a prefix of it). */
  cookieHeader(path: string): string {
    return [...this.cookies]
      .filter(([, c]) => path.startsWith(c.path))
      .map(([name, c]) => `${name}=${c.value}`)
      .join("; ");
  }

  /** The named cookie's value, whatever its path. */
  cookie(name: string): string | undefined {
    return this.cookies.get(name)?.value;
  }

  private keep(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const [name, ...v] = pair!.trim().split("=");
      const path =
        attrs
          .map((a) => a.trim())
          .find((a) => a.toLowerCase().startsWith("path="))
          ?.slice(5) ?? "/";
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || v.join("=") === '""';
      if (expired) this.cookies.delete(name!);
      else this.cookies.set(name!, { value: v.join("="), path });
    }
  }

  /** One request (no redirects followed). */
  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(path, this.base);
    const headers = new Headers(init.headers);
    const cookie = this.cookieHeader(target.pathname);
    if (cookie) headers.set("Cookie", cookie);
    const res = await fetch(target, { ...init, headers, redirect: "manual" });
    this.keep(res);
    return res;
  }

  /**
   * GET, following redirects on this origin; the last response and the path it came from.
   * With `consent`, a Hub page asking to authorize access (an admin entering another user's
   * server) is answered "Authorize" as a person would.
   */
  async get(path: string, options: { consent?: boolean } = {}): Promise<{ res: Response; path: string }> {
    let at = path;
    for (let i = 0; i < 10; i++) {
      let res = await this.request(at);
      if (options.consent && res.status === 200 && at.startsWith("/hub/api/oauth2/authorize")) {
        const html = await res.text();
        const scopes = [...html.matchAll(/<input type="hidden" name="scopes" value="([^"]*)"/g)].map((m) => m[1]!);
        const body = new URLSearchParams(
          scopes.map((v) => ["scopes", v.replace(/&amp;/g, "&").replace(/&#39;/g, "'")]),
        );
        res = await this.request(at, {
          method: "POST",
          // The Hub takes the form only from its own page, as a browser's Referer says.
          headers: { "Content-Type": "application/x-www-form-urlencoded", Referer: new URL(at, this.base).href },
          body,
        });
      }
      const location = res.headers.get("location");
      if (res.status < 300 || res.status >= 400 || !location) return { res, path: at };
      const next = new URL(location, new URL(at, this.base));
      if (next.origin !== new URL(this.base).origin) throw new Error(`redirected off the Hub: ${next.href}`);
      at = next.pathname + next.search;
    }
    throw new Error(`too many redirects from ${path}`);
  }

  /** Logs in with the Hub's form (the test authenticator's password). */
  async login(user: string, password = "verbslab"): Promise<void> {
    const form = await this.request("/hub/login");
    const html = await form.text();
    const xsrf = /name="_xsrf" value="([^"]+)"/.exec(html)?.[1];
    const body = new URLSearchParams({ username: user, password, ...(xsrf && { _xsrf: xsrf }) });
    const res = await this.request("/hub/login", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body,
    });
    if (res.status !== 302) throw new Error(`logging in ${user}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  }
}
