/**
 * Learner servers under a real JupyterHub (Debian's package, the repo's jupyterhub_config.py):
 * who gets into whose server, its WebSocket and its files; activity reaching the Hub; progress
 * reaching the instructor service, and who may see it.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { CookieClient, hasJupyterHub, startTestHub, type TestHub } from "./test-hub.js";
import { encodeValue } from "../session/wire.js";
import { ensureRendererBuilt } from "../e2e/harness.js";

/** Opens a socket; "open" (and the socket) or the HTTP status it was refused with. */
function tryWs(url: string, headers: Record<string, string>): Promise<{ ws?: WebSocket; status?: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on("open", () => resolve({ ws }));
    ws.on("unexpected-response", (_req, res) => resolve({ status: res.statusCode ?? 0 }));
    ws.on("error", () => resolve({ status: -1 }));
  });
}

/** One bridge request over an open socket; its decoded envelope. */
function ask(
  ws: WebSocket,
  method: string,
  params: unknown,
): Promise<{ ok: boolean; result?: unknown; error?: unknown }> {
  const id = Math.floor(Math.random() * 1e9);
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      const parsed = JSON.parse(String(data)) as unknown;
      for (const frame of (Array.isArray(parsed) ? parsed : [parsed]) as { type: string; id?: number }[]) {
        if (frame.type === "response" && frame.id === id) {
          ws.off("message", onMessage);
          resolve(frame as never);
        }
      }
    };
    ws.on("message", onMessage);
    ws.send(JSON.stringify({ type: "request", id, method, params: encodeValue(params) }));
  });
}

describe.skipIf(!hasJupyterHub)("learner servers under JupyterHub", { timeout: 240_000 }, () => {
  let hub: TestHub;
  const browsers: Record<string, CookieClient> = {};
  let wsBase: string;

  beforeAll(async () => {
    await ensureRendererBuilt();
    hub = await startTestHub({
      learners: ["alice", "bob"],
      instructors: ["teacher"],
      admins: ["boss"],
      env: { JUPYTERHUB_ACTIVITY_INTERVAL: "1" },
    });
    wsBase = hub.url.replace(/^http/, "ws");
    await Promise.all([hub.startServer("alice"), hub.startServer("bob")]);
    for (const name of ["alice", "bob", "teacher", "boss"]) {
      browsers[name] = new CookieClient(hub.url);
      await browsers[name].login(name);
    }
    // Each learner has been through OAuth into their own server (so every test has their cookies).
    for (const name of ["alice", "bob"]) await browsers[name]!.get(`/user/${name}/`);
  }, 300_000);
  afterAll(async () => {
    await hub?.close();
  }, 60_000);

  it("a learner logs in through the Hub's OAuth and gets the app from their own server", async () => {
    const { res, path } = await browsers.alice!.get("/user/alice/");
    expect(path).toBe("/user/alice/");
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("<title>VerbsLab");
    // The token is kept in a cookie for her server's path only.
    expect(browsers.alice!.cookie("jupyterhub-user-alice")).toBeTruthy();
    expect(browsers.alice!.cookieHeader("/user/bob/")).not.toContain("jupyterhub-user-alice");
    // Without the trailing slash: sent to it (the bridge's socket URL is beside the page).
    const bare = await browsers.alice!.request("/user/alice");
    expect([301, 302]).toContain(bare.status);
  });

  it("another learner is refused a server that is not theirs (the Hub will not authorize it)", async () => {
    const { res } = await browsers.bob!.get("/user/alice/");
    expect(res.status).toBe(403);
    expect(await res.text()).not.toContain("<title>VerbsLab");
    expect(browsers.bob!.cookie("jupyterhub-user-alice")).toBeUndefined();
  });

  it("A's cookie or API token cannot open B's server; each opens only its owner's", async () => {
    await browsers.bob!.get("/user/bob/");
    const aliceCookie = browsers.alice!.cookie("jupyterhub-user-alice")!;
    // Alice's OAuth token presented to Bob's server under Bob's cookie name.
    const direct = await fetch(`${hub.url}/user/bob/`, {
      headers: { Cookie: `jupyterhub-user-bob=${aliceCookie}` },
      redirect: "manual",
    });
    expect(direct.status).toBe(403);
    expect(await direct.text()).not.toContain("<title>VerbsLab");
    const aliceToken = await hub.tokenFor("alice");
    const viaHeader = await fetch(`${hub.url}/user/bob/index.html`, {
      headers: { Authorization: `token ${aliceToken}` },
    });
    expect(viaHeader.status).toBe(403);
    const own = await fetch(`${hub.url}/user/alice/index.html`, { headers: { Authorization: `token ${aliceToken}` } });
    expect(own.status).toBe(200);
    // A made-up token is no one's.
    const madeUp = await fetch(`${hub.url}/user/alice/index.html`, {
      headers: { Authorization: "token 0123456789abcdef" },
    });
    expect(madeUp.status).toBe(401);
  });

  it("an admin given access:servers by the Hub's admin role gets into a learner's server", async () => {
    const { res, path } = await browsers.boss!.get("/user/alice/", { consent: true });
    expect(path).toBe("/user/alice/");
    expect(res.status).toBe(200);
  });

  it("the WebSocket needs Hub auth, the owner's, and the page's own Origin", async () => {
    const origin = hub.url;
    const aliceCookie = `jupyterhub-user-alice=${browsers.alice!.cookie("jupyterhub-user-alice")}`;
    const bridge = `${wsBase}/user/alice/bridge`;
    expect((await tryWs(bridge, { Origin: origin })).status).toBe(401);
    const bobToken = await hub.tokenFor("bob");
    expect((await tryWs(bridge, { Origin: origin, Authorization: `token ${bobToken}` })).status).toBe(403);
    const bobCookie = `jupyterhub-user-bob=${browsers.bob!.cookie("jupyterhub-user-bob")}`;
    expect((await tryWs(`${wsBase}/user/alice/bridge`, { Origin: origin, Cookie: bobCookie })).status).toBe(401);
    expect((await tryWs(bridge, { Origin: "http://evil.example", Cookie: aliceCookie })).status).toBe(403);
    const { ws } = await tryWs(bridge, { Origin: origin, Cookie: aliceCookie });
    expect(ws).toBeDefined();
    try {
      const info = await ask(ws!, "host.info", {});
      expect(info.ok).toBe(true);
      expect((info.result as { host: string }).host).toBe("web");
    } finally {
      ws!.close();
    }
  });

  it("each learner's work is kept in their own home; B's server cannot read A's", async () => {
    const open = async (name: string) => {
      const cookie = `jupyterhub-user-${name}=${browsers[name]!.cookie(`jupyterhub-user-${name}`)}`;
      const { ws } = await tryWs(`${wsBase}/user/${name}/bridge`, { Origin: hub.url, Cookie: cookie });
      if (!ws) throw new Error(`no socket for ${name}`);
      return ws;
    };
    const a = await open("alice");
    const b = await open("bob");
    try {
      expect((await ask(a, "lessons.code.save", { key: "free", code: "// alice's secret" })).ok).toBe(true);
      const mine = (await ask(a, "lessons.progress.get", {})).result as { code: Record<string, string> };
      expect(mine.code.free).toBe("// alice's secret");
      const theirs = (await ask(b, "lessons.progress.get", {})).result as { code: Record<string, string> };
      expect(theirs.code.free).toBeUndefined();
    } finally {
      a.close();
      b.close();
    }
    const home = (n: string) => join(hub.dir, "state", "home", n, ".local", "share", "verbslab");
    const workspace = join(home("alice"), "profiles", "default", "workspace.json");
    expect(existsSync(workspace)).toBe(true);
    expect(readFileSync(workspace, "utf8")).toContain("alice's secret");
    expect(existsSync(join(home("bob"), "profiles", "default", "workspace.json"))).toBe(false);
    // Over HTTP a server serves the built app and nothing else: no path reaches a home.
    const bobToken = await hub.tokenFor("bob");
    for (const path of ["/user/bob/..%2f..%2f..%2fhome%2falice", "/user/bob/%2e%2e/%2e%2e/state/home/alice/"]) {
      const r = await fetch(`${hub.url}${path}`, { headers: { Authorization: `token ${bobToken}` } });
      expect(r.status, path).not.toBe(200);
    }
  });

  it("reports activity to the Hub (for the idle culler)", async () => {
    const before = (await (await hub.api("GET", "/users/alice")).json()) as { last_activity: string };
    await new Promise((r) => setTimeout(r, 1200));
    const aliceToken = await hub.tokenFor("alice");
    expect(
      (await fetch(`${hub.url}/user/alice/index.html`, { headers: { Authorization: `token ${aliceToken}` } })).status,
    ).toBe(200);
    let after = before;
    for (let i = 0; i < 40 && after.last_activity === before.last_activity; i++) {
      await new Promise((r) => setTimeout(r, 250));
      after = (await (await hub.api("GET", "/users/alice")).json()) as { last_activity: string };
    }
    expect(Date.parse(after.last_activity)).toBeGreaterThan(Date.parse(before.last_activity));
  });
});

describe.skipIf(!hasJupyterHub)("the instructor service under JupyterHub", { timeout: 240_000 }, () => {
  let hub: TestHub;
  const browsers: Record<string, CookieClient> = {};
  let events: string;

  beforeAll(async () => {
    hub = await startTestHub({ learners: ["alice", "bob"], instructors: ["teacher"], admins: ["boss"] });
    events = `http://127.0.0.1:${hub.instructorPort}/services/instructor/api/events`;
    for (const name of ["alice", "teacher", "boss"]) {
      browsers[name] = new CookieClient(hub.url);
      await browsers[name].login(name);
    }
  }, 300_000);
  afterAll(async () => {
    await hub?.close();
  }, 60_000);

  const post = (token: string, body: unknown) =>
    fetch(events, {
      method: "POST",
      headers: { Authorization: `token ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });

  it("takes progress events only with a Hub token, and files them under the token's owner", async () => {
    const alice = await hub.tokenFor("alice");
    const event = {
      lessonId: "first-message",
      step: 2,
      passed: false,
      failingGoal: "qp a ends in RTS",
      failingDetail: "qp a is in INIT",
      error: "ibv_modify_qp: EINVAL",
      at: Date.now(),
      transcript: "# Transcript\n\n1. ibv_open_device(rxe0)",
    };
    const ok = await post(alice, event);
    expect(ok.status).toBe(201);
    expect(await ok.json()).toEqual({ recorded: true, learner: "alice" });
    expect((await post("not-a-hub-token", event)).status).toBe(401);
    const noHeader = await fetch(events, { method: "POST", body: JSON.stringify(event) });
    expect(noHeader.status).toBe(401);
    const bad = await post(alice, { ...event, step: "two" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("step");
  });

  it("shows every learner to the instructors group and admins, and refuses anyone else", async () => {
    const { res, path } = await browsers.teacher!.get("/services/instructor/");
    expect(path).toBe("/services/instructor/");
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('data-learner="alice"');
    expect(html).toContain("first-message");
    expect(html).toContain("qp a ends in RTS");
    expect(html).toContain("ibv_modify_qp: EINVAL");
    const admin = await browsers.boss!.get("/services/instructor/");
    expect(admin.res.status).toBe(200);
    const learner = await browsers.alice!.get("/services/instructor/");
    expect(learner.res.status).toBe(403);
    expect(await learner.res.text()).not.toContain('data-learner="alice"');
    // Alice's own API token is no way in either.
    const viaToken = await fetch(`${hub.url}/services/instructor/api/learners`, {
      headers: { Authorization: `token ${await hub.tokenFor("alice")}` },
    });
    expect(viaToken.status).toBe(403);
  });

  it("opens a learner's transcript read-only", async () => {
    const { res } = await browsers.teacher!.get("/services/instructor/transcript/alice");
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("ibv_open_device(rxe0)");
    const none = await browsers.teacher!.get("/services/instructor/transcript/nobody");
    expect(none.res.status).toBe(404);
    const rows = (await (await browsers.teacher!.get("/services/instructor/api/learners")).res.json()) as {
      learner: string;
      attempts: number;
      passed: boolean;
    }[];
    expect(rows).toEqual([expect.objectContaining({ learner: "alice", attempts: 1, passed: false })]);
  });
});
