import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { brotliCompressSync } from "node:zlib";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { createWebBridge, type SocketLike } from "../bridge/client-web.js";
import { errorToData } from "../../verbs/errors.js";
import { parseRequest, type EventName } from "../bridge/contract.js";
import { decodeValue, encodeValue, type WireValue } from "../session/wire.js";
import type { HostCore } from "../backend/host.js";
import { startWebServer, TOKEN_COOKIE, type WebServer } from "./server.js";

/** A host core that answers from the contract alone (no backend process): validation is real. */
function fakeCore(): HostCore & { emit(event: EventName, payload: unknown): void; seen: string[] } {
  const listeners = new Set<(event: EventName, payload: WireValue) => void>();
  const seen: string[] = [];
  return {
    seen,
    async handle(method, params) {
      try {
        const p = parseRequest(method, decodeValue(params));
        seen.push(p.method);
        return encodeValue({ ok: true, result: { echo: p.params } });
      } catch (err) {
        return encodeValue({ ok: false, error: errorToData(err) });
      }
    },
    onEvent(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    emit(event, payload) {
      for (const l of listeners) l(event, encodeValue(payload));
    },
  };
}

function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, headers }, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Opens a socket; resolves "open" or the HTTP status the upgrade was refused with. */
function tryWs(url: string, headers: Record<string, string> = {}): Promise<{ opened: boolean; status?: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on("open", () => {
      ws.close();
      resolve({ opened: true });
    });
    ws.on("unexpected-response", (_req, res) => resolve({ opened: false, status: res.statusCode }));
    ws.on("error", () => resolve({ opened: false }));
  });
}

describe("web-mode server", () => {
  let server: WebServer;
  let core: ReturnType<typeof fakeCore>;
  let root: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "verbslab-static-"));
    mkdirSync(join(root, "assets"));
    writeFileSync(join(root, "index.html"), "<!doctype html><title>VerbsLab</title>");
    writeFileSync(join(root, "assets", "app.js"), "console.log(1)");
    writeFileSync(join(root, "assets", "big.js"), "console.log(2)");
    writeFileSync(join(root, "assets", "big.js.br"), brotliCompressSync("console.log(2)"));
    writeFileSync(join(root, "..", "verbslab-secret.txt"), "secret");
    core = fakeCore();
    server = await startWebServer({ core, staticDir: root });
  });
  afterAll(async () => {
    await server.close();
  });

  it("binds 127.0.0.1 and prints a URL carrying a long random token", () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}$/);
  });

  it("refuses HTTP requests without the token, or with a wrong one", async () => {
    for (const path of ["/", "/index.html", "/assets/app.js", "/?token=", `/?token=${"0".repeat(64)}`]) {
      const r = await get(server.port, path);
      expect(r.status, path).toBe(401);
      expect(r.body).not.toContain("VerbsLab</title>");
    }
    const r = await get(server.port, "/assets/app.js", { Authorization: `Bearer ${"1".repeat(64)}` });
    expect(r.status).toBe(401);
    const c = await get(server.port, "/", { Cookie: `${TOKEN_COOKIE}=wrong` });
    expect(c.status).toBe(401);
  });

  it("serves the page with the token, with CSP and a cookie for its own assets", async () => {
    const r = await get(server.port, `/?token=${server.token}`);
    expect(r.status).toBe(200);
    expect(r.body).toContain("<title>VerbsLab</title>");
    const csp = String(r.headers["content-security-policy"]);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self' blob:");
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(r.headers["x-content-type-options"]).toBe("nosniff");
    const cookie = String(r.headers["set-cookie"]);
    expect(cookie).toContain(`${TOKEN_COOKIE}=${server.token}`);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    // The page's scripts come without the query, with the cookie.
    const js = await get(server.port, "/assets/app.js", { Cookie: `${TOKEN_COOKIE}=${server.token}` });
    expect(js.status).toBe(200);
    expect(js.headers["content-type"]).toContain("text/javascript");
    const bearer = await get(server.port, "/assets/app.js", { Authorization: `Bearer ${server.token}` });
    expect(bearer.status).toBe(200);
  });

  it("sends the build's brotli copy to clients that take it, and lets hashed assets be cached", async () => {
    const auth = { Authorization: `Bearer ${server.token}` };
    const br = await get(server.port, "/assets/big.js", { ...auth, "Accept-Encoding": "gzip, deflate, br" });
    expect(br.status).toBe(200);
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers["content-type"]).toContain("text/javascript");
    expect(br.headers["cache-control"]).toContain("immutable");
    expect(br.headers.vary).toBe("Accept-Encoding");
    const plain = await get(server.port, "/assets/big.js", { ...auth, "Accept-Encoding": "gzip, br;q=0" });
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body).toBe("console.log(2)");
    const page = await get(server.port, "/", { ...auth, "Accept-Encoding": "br" });
    expect(page.headers["cache-control"]).toBe("no-store");
    expect(page.headers["content-encoding"]).toBeUndefined();
  });

  it("refuses a foreign Host header even with the token (DNS rebinding)", async () => {
    const r = await get(server.port, `/?token=${server.token}`, { Host: `evil.example:${server.port}` });
    expect(r.status).toBe(403);
  });

  it("never serves files outside the renderer folder", async () => {
    for (const path of [
      "/../verbslab-secret.txt",
      "/%2e%2e/verbslab-secret.txt",
      "/assets/..%2f..%2fverbslab-secret.txt",
    ]) {
      const r = await get(server.port, `${path}?token=${server.token}`);
      expect([403, 404], path).toContain(r.status);
      expect(r.body).not.toContain("secret");
    }
  });

  it("refuses WebSocket upgrades without the token, with a wrong one, or from another origin", async () => {
    const base = `ws://127.0.0.1:${server.port}/bridge`;
    expect(await tryWs(base)).toEqual({ opened: false, status: 401 });
    expect(await tryWs(`${base}?token=${"0".repeat(64)}`)).toEqual({ opened: false, status: 401 });
    expect(await tryWs(`${base}?token=${server.token}`, { Origin: "http://evil.example" })).toEqual({
      opened: false,
      status: 403,
    });
    expect(await tryWs(`ws://127.0.0.1:${server.port}/other?token=${server.token}`)).toEqual({
      opened: false,
      status: 404,
    });
    expect(await tryWs(`${base}?token=${server.token}`)).toEqual({ opened: true });
    expect(await tryWs(base, { Cookie: `${TOKEN_COOKIE}=${server.token}` })).toEqual({ opened: true });
  });

  it("carries typed requests, validation errors and events over the socket", async () => {
    const bridge = createWebBridge({
      pageUrl: server.url,
      makeSocket: (url) => new WebSocket(url) as unknown as SocketLike,
    });
    try {
      const ok = await bridge.request("transcript.export", { format: "md" });
      expect(ok).toEqual({ echo: { format: "md" } });
      const bad = await bridge.request("transcript.export", { format: "pdf" } as never).then(
        () => ({ name: "resolved", path: "" }),
        (e: { name: string; path: string }) => e,
      );
      expect(bad.name).toBe("BridgeValidationError");
      expect(bad.path).toBe("params.format");
      // The invalid request never got past validation.
      expect(core.seen.filter((m) => m === "transcript.export")).toHaveLength(1);

      const got = new Promise<unknown>((resolve) => bridge.on("log", resolve));
      core.emit("log", { level: "info", text: "hello" });
      expect(await got).toEqual({ level: "info", text: "hello" });
    } finally {
      bridge.close();
    }
  });

  it("the page refuses to send a request over the limit, and its bridge keeps working", async () => {
    const bridge = createWebBridge({
      pageUrl: server.url,
      makeSocket: (url) => new WebSocket(url) as unknown as SocketLike,
    });
    try {
      // A 50 MiB non-zero buffer is 100 MiB as hex: more than the 64 MiB the socket takes.
      const big = new Uint8Array(50 * 1024 * 1024).fill(7);
      const err = await bridge.request("verbs.call", { handle: 2, method: "regMr", args: [big, 1] }).then(
        () => null,
        (e: Error) => e,
      );
      expect(err).toBeInstanceOf(RangeError);
      expect(err?.message).toContain("more than the bridge carries");
      expect(await bridge.request("transcript.export", { format: "md" })).toEqual({ echo: { format: "md" } });
    } finally {
      bridge.close();
    }
  });

  it("closes only the socket that sends a message over the limit (1009); the server and other sockets carry on", async () => {
    const url = `ws://127.0.0.1:${server.port}/bridge?token=${server.token}`;
    const open = (u: string) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(u);
        ws.on("open", () => resolve(ws));
        ws.on("error", reject);
      });
    const big = await open(url);
    const other = await open(url);
    try {
      const closed = new Promise<number>((resolve) => big.on("close", (code) => resolve(code)));
      big.on("error", () => {}); // the refusal may surface as an error on this side too
      big.send(Buffer.alloc(70 * 1024 * 1024, 0x20)); // over the 64 MiB limit
      expect(await closed).toBe(1009);
      // The other socket still gets answers, and new pages still connect.
      const answer = new Promise<unknown>((resolve) => other.once("message", (d) => resolve(JSON.parse(String(d)))));
      other.send(JSON.stringify({ type: "request", id: 7, method: "transcript.export", params: { format: "md" } }));
      expect(await answer).toMatchObject({ type: "response", id: 7, ok: true });
      expect(await tryWs(url)).toEqual({ opened: true });
      expect((await get(server.port, `/?token=${server.token}`)).status).toBe(200);
    } finally {
      big.terminate();
      other.close();
    }
  });
});

describe("web-mode server and runs", () => {
  it("ends the run of a page that goes away (else every later Run is refused until Reset)", async () => {
    const ended: unknown[] = [];
    let n = 0;
    const core: HostCore = {
      async handle(method, params) {
        if (method === "run.start") return encodeValue({ ok: true, result: { runId: `run-${++n}` } });
        if (method === "run.end") {
          ended.push(decodeValue(params));
          return encodeValue({ ok: true, result: { outcome: "error" } });
        }
        return encodeValue({ ok: true, result: null });
      },
      onEvent: () => () => {},
    };
    const root = mkdtempSync(join(tmpdir(), "verbslab-static-"));
    writeFileSync(join(root, "index.html"), "<!doctype html>");
    const server = await startWebServer({ core, staticDir: root });
    const url = `ws://127.0.0.1:${server.port}/bridge?token=${server.token}`;
    const session = async (endItself: boolean) => {
      const ws = new WebSocket(url);
      await new Promise((r) => ws.on("open", r));
      const ask = (id: number, method: string, params: unknown) =>
        new Promise<{ result?: { runId: string } }>((resolve) => {
          ws.on("message", (d) => {
            const f = JSON.parse(String(d)) as { id: number; result?: { runId: string } };
            if (f.id === id) resolve(f);
          });
          ws.send(JSON.stringify({ type: "request", id, method, params }));
        });
      const { result } = await ask(1, "run.start", { stepping: false });
      if (endItself) await ask(2, "run.end", { runId: result!.runId, ok: true });
      const closed = new Promise((r) => ws.on("close", r));
      ws.close();
      await closed;
      return result!.runId;
    };
    try {
      await session(true);
      const abandoned = await session(false);
      await vi.waitFor(() => expect(ended).toHaveLength(2));
      expect(ended[1]).toMatchObject({ runId: abandoned, ok: false, error: { name: "PageClosedError" } });
    } finally {
      await server.close();
    }
  });
});
