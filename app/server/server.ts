/**
 * Web mode: the built renderer over HTTP and the bridge over a WebSocket, on 127.0.0.1
 * only, behind a random per-run token. Every HTTP request and every WebSocket upgrade must
 * carry the token (in `?token=`, an `Authorization: Bearer` header, or the HttpOnly cookie
 * set when the page was first opened with it); anything else gets 401/403 and no content.
 * The Host header must name this server (no DNS rebinding) and a socket's Origin, when
 * sent, must be this server's.
 *
 * Under JupyterHub (`hub`, app/classroom/learner-server.ts) the same app is served under the
 * Hub's prefix (`/user/alice/`) instead, and the token is the Hub's: every request and upgrade is
 * checked with the Hub (app/classroom/hub-auth.ts), a browser without one is sent through the
 * Hub's OAuth login, and a socket's Origin must be the host the page was served from.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createReadStream } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import {
  MAX_MESSAGE_BYTES,
  TOKEN_PARAM,
  WS_PATH,
  type EventFrame,
  type RequestFrame,
  type ResponseFrame,
} from "../bridge/contract.js";
import { contentSecurityPolicy } from "../bridge/csp.js";
import type { HostCore } from "../backend/host.js";
import { resolveStatic } from "./static.js";
import { readCookie, type HubAuth } from "../classroom/hub-auth.js";

export const TOKEN_COOKIE = "verbslab_token";

export interface WebServerOptions {
  core: HostCore;
  /** The built renderer (holding index.html). */
  staticDir: string;
  /** 0 (default): any free port. */
  port?: number;
  /** Default: 32 random bytes, hex. */
  token?: string;
  /** JupyterHub mode: serve under the Hub's prefix and let in whom the Hub's scopes let in (no local token). */
  hub?: HubMode;
}

/** What web mode needs to run as a JupyterHub single-user server. */
export interface HubMode {
  auth: HubAuth;
  /** The address to listen on (from JUPYTERHUB_SERVICE_URL: 127.0.0.1 on one machine, 0.0.0.0 in a pod). */
  listenHost: string;
  /** Called on every request and socket message let in (activity for the Hub's idle culler). */
  onActivity?: () => void;
}

export interface WebServer {
  /** The URL to open, with the token. */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  close(): Promise<void>;
}

const HOST = "127.0.0.1";

function securityHeaders(port: number, hub: boolean): Record<string, string> {
  // Under the Hub the page's host is the proxy's, which this server does not know: 'self' covers its socket.
  const connect = hub ? [] : [`ws://${HOST}:${port}`, `ws://localhost:${port}`];
  return {
    "Content-Security-Policy": contentSecurityPolicy({ connect }),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), usb=(), serial=(), hid=()",
    "Cache-Control": "no-store",
  };
}

function sameToken(given: string | null | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Which way the request proved it holds the token, or null. */
function tokenSource(req: IncomingMessage, url: URL, token: string): "query" | "header" | "cookie" | null {
  if (sameToken(url.searchParams.get(TOKEN_PARAM), token)) return "query";
  const auth = req.headers.authorization;
  if (auth?.startsWith("Bearer ") && sameToken(auth.slice(7), token)) return "header";
  if (sameToken(readCookie(req, TOKEN_COOKIE), token)) return "cookie";
  return null;
}

/** The host (and port) an Origin header names, or null when it is not a URL ("null" from a sandboxed page). */
function originHost(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}

function hostAllowed(req: IncomingMessage, port: number): boolean {
  return req.headers.host === `${HOST}:${port}` || req.headers.host === `localhost:${port}`;
}

export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const token = options.token ?? randomBytes(32).toString("hex");
  const root = resolve(options.staticDir);
  const hub = options.hub;
  const prefix = hub?.auth.env.prefix ?? "/";
  let port = 0;

  const refuse = (res: ServerResponse, status: number, text: string) => {
    res.writeHead(status, { ...securityHeaders(port, !!hub), "Content-Type": "text/plain; charset=utf-8" });
    res.end(text + "\n");
  };

  /** Under the Hub: checks the request with the Hub (or answers it: login, callback, refusal); the path below the prefix, or null. */
  async function hubGate(req: IncomingMessage, res: ServerResponse, url: URL, auth: HubAuth): Promise<string | null> {
    if (url.pathname === prefix.slice(0, -1)) {
      res.writeHead(302, { Location: prefix + url.search, "Cache-Control": "no-store" });
      res.end();
      return null;
    }
    if (!url.pathname.startsWith(prefix)) return (refuse(res, 404, "Not found."), null);
    if (url.pathname === auth.env.callbackPath) return (await auth.finishLogin(req, res, url), null);
    const who = await auth.identify(req);
    if (!who.ok) {
      // A browser (no Authorization header) without a valid cookie logs in; anything else is refused.
      if (who.status === 401 && !req.headers.authorization && req.method === "GET")
        return (auth.startLogin(req, res, url.pathname + url.search), null);
      return (refuse(res, who.status, `${who.status === 401 ? "Unauthorized" : "Forbidden"}: ${who.reason}.`), null);
    }
    hub?.onActivity?.();
    return "/" + url.pathname.slice(prefix.length);
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", `http://${HOST}:${port}`);
    if (hub) {
      hubGate(req, res, url, hub.auth).then(
        (path) => path !== null && serveFile(req, res, path, null),
        (err: Error) => {
          console.error(`web mode: checking a request with the Hub failed: ${err.message}`);
          if (!res.headersSent) refuse(res, 502, "Bad gateway: the Hub could not be asked who you are.");
        },
      );
      return;
    }
    if (!hostAllowed(req, port)) return refuse(res, 403, "Forbidden: unexpected Host header.");
    const source = tokenSource(req, url, token);
    if (!source) return refuse(res, 401, "Unauthorized: open the URL VerbsLab printed (it carries the access token).");
    serveFile(req, res, url.pathname, source);
  });

  function serveFile(req: IncomingMessage, res: ServerResponse, pathname: string, source: string | null): void {
    if (req.method !== "GET" && req.method !== "HEAD") return refuse(res, 405, "Method not allowed.");
    const found = resolveStatic(root, pathname, String(req.headers["accept-encoding"] ?? ""));
    if (!found.ok) return refuse(res, found.status, found.status === 404 ? "Not found." : "Forbidden.");
    const headers: Record<string, string> = {
      ...securityHeaders(port, !!hub),
      "Content-Type": found.contentType,
      "Content-Length": String(found.size),
      // Build assets are named by their content hash: a reload revalidates nothing. The page
      // itself (and every refusal) stays no-store.
      ...(found.immutable && { "Cache-Control": "private, max-age=31536000, immutable" }),
      ...(found.encoding && { "Content-Encoding": found.encoding }),
      Vary: "Accept-Encoding",
    };
    // The page was opened with the token in its URL: keep it in a cookie so its own
    // scripts, styles and workers (which do not carry the query) are let in too.
    if (source === "query")
      headers["Set-Cookie"] = `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`;
    res.writeHead(200, headers);
    if (req.method === "HEAD") return void res.end();
    createReadStream(found.file).pipe(res);
  }

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const sockets = new Set<WebSocket>();

  /**
   * Frames for a socket go out after the current turn of the event loop (setImmediate: no timer
   * delay), in order, several as one JSON array: a step's events and responses reach the page as
   * one message, which it handles in one task and renders once.
   */
  const outboxes = new Map<WebSocket, string[]>();
  const sendFrame = (ws: WebSocket, text: string) => {
    const queued = outboxes.get(ws);
    if (queued) return void queued.push(text);
    outboxes.set(ws, [text]);
    setImmediate(() => {
      const texts = outboxes.get(ws) ?? [];
      outboxes.delete(ws);
      if (ws.readyState === ws.OPEN) ws.send(texts.length === 1 ? texts[0]! : `[${texts.join(",")}]`);
    });
  };

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? "/", `http://${HOST}:${port}`);
    const deny = (status: number, text: string) => {
      socket.write(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      socket.destroy();
    };
    const accept = () => wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req));
    if (url.pathname !== prefix + WS_PATH.slice(1)) return deny(404, "Not Found");
    const origin = req.headers.origin;
    if (hub) {
      // The page and its socket come through the same proxy: a page of another site cannot open it.
      if (origin !== undefined && originHost(origin) !== req.headers.host) return deny(403, "Forbidden");
      hub.auth.identify(req).then(
        (who) =>
          who.ok ? (hub.onActivity?.(), accept()) : deny(who.status, who.status === 401 ? "Unauthorized" : "Forbidden"),
        () => deny(502, "Bad Gateway"),
      );
      return;
    }
    if (!hostAllowed(req, port)) return deny(403, "Forbidden");
    if (origin !== undefined && origin !== `http://${HOST}:${port}` && origin !== `http://localhost:${port}`)
      return deny(403, "Forbidden");
    if (!tokenSource(req, url, token)) return deny(401, "Unauthorized");
    accept();
  });

  /**
   * The runs each page started and has not ended. The program runs in the page's worker: a
   * page that goes away (tab closed, reloaded) takes it along, so its run is ended for it;
   * otherwise every later Run would be refused as RunInProgressError until a Reset.
   */
  const runsOf = new Map<WebSocket, Set<string>>();
  const endRunsOf = (ws: WebSocket) => {
    const runs = runsOf.get(ws);
    runsOf.delete(ws);
    for (const runId of runs ?? [])
      void Promise.resolve(
        options.core.handle("run.end", {
          runId,
          ok: false,
          error: { name: "PageClosedError", message: "the page running this program was closed or reloaded" },
        }),
      ).catch(() => {});
  };

  wss.on("connection", (ws: WebSocket) => {
    sockets.add(ws);
    runsOf.set(ws, new Set());
    ws.on("close", () => {
      sockets.delete(ws);
      endRunsOf(ws);
    });
    // A socket's error (an oversized or malformed frame) is that socket's alone: `ws` has
    // already closed it with the matching code (1009 Message Too Big, 1002 protocol error).
    // Without this listener the error would be thrown and end the whole server.
    ws.on("error", (err) => {
      console.error(`web mode: a page's socket was closed: ${err.message}`);
      sockets.delete(ws);
    });
    ws.on("message", (data) => {
      hub?.onActivity?.();
      void answer(ws, data);
    });
  });

  async function answer(ws: WebSocket, data: unknown): Promise<void> {
    let frame: RequestFrame;
    try {
      frame = JSON.parse(String(data)) as RequestFrame;
    } catch {
      return ws.close(1003, "not JSON");
    }
    if (frame?.type !== "request" || !Number.isSafeInteger(frame.id)) return ws.close(1003, "not a request frame");
    let envelope: object;
    try {
      envelope = (await options.core.handle(frame.method, frame.params)) as object;
    } catch (err) {
      // The core answers every request with an envelope; should it throw, the page still gets an answer.
      envelope = { ok: false, error: { name: "HostError", message: (err as Error)?.message ?? String(err) } };
    }
    trackRun(ws, frame, envelope);
    const response = { type: "response", id: frame.id, ...envelope } as ResponseFrame;
    if (ws.readyState === ws.OPEN) sendFrame(ws, JSON.stringify(response));
  }

  function trackRun(ws: WebSocket, frame: RequestFrame, envelope: object): void {
    const answer = envelope as { ok?: boolean; result?: { runId?: unknown } };
    const params = frame.params as { runId?: unknown } | undefined;
    if (frame.method === "run.start" && answer.ok && typeof answer.result?.runId === "string") {
      const runId = answer.result.runId;
      const runs = runsOf.get(ws);
      if (runs) runs.add(runId);
      else {
        // The page closed while its run was starting: end it now.
        runsOf.set(ws, new Set([runId]));
        endRunsOf(ws);
      }
    }
    if (frame.method === "run.end" && typeof params?.runId === "string") runsOf.get(ws)?.delete(params.runId);
  }

  const offEvents = options.core.onEvent((event, payload) => {
    const frame: EventFrame = { type: "event", event, payload };
    const text = JSON.stringify(frame);
    for (const ws of sockets) if (ws.readyState === ws.OPEN) sendFrame(ws, text);
  });

  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, hub?.listenHost ?? HOST, () => resolveListen());
  });
  port = (server.address() as AddressInfo).port;

  return {
    url: hub ? `http://${hub.listenHost}:${port}${prefix}` : `http://${HOST}:${port}/?${TOKEN_PARAM}=${token}`,
    port,
    token,
    async close() {
      offEvents();
      for (const ws of sockets) ws.terminate();
      wss.close();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
