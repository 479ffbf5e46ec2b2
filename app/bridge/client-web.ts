/**
 * The bridge over the web-mode WebSocket. The per-run token comes from the page URL
 * (`?token=…`, as the server prints it); the server also set it as an HttpOnly cookie when
 * it served the page, so the socket is accepted even after the URL has been cleaned.
 */
import {
  MAX_MESSAGE_BYTES,
  TOKEN_PARAM,
  WS_PATH,
  type EventFrame,
  type RequestFrame,
  type ResponseFrame,
} from "./contract.js";
import { createBridge, type Bridge } from "./client.js";
import type { WireValue } from "../session/wire.js";

/** Minimal WebSocket surface (the browser's, or `ws` in Node tests). */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(
    type: "open" | "close" | "error" | "message",
    listener: (ev: { data?: unknown; reason?: string; code?: number }) => void,
  ): void;
}

export interface WebBridgeOptions {
  /** The page URL (default: location.href). Gives the host, port and token. */
  pageUrl?: string;
  /** Token, if not in the URL. */
  token?: string;
  /** Make the socket (default: the global WebSocket). */
  makeSocket?: (url: string) => SocketLike;
}

/**
 * ws://host/bridge?token=… for a page URL: beside the page, so a server under a prefix
 * (JupyterHub's `/user/alice/`) gets `/user/alice/bridge`.
 */
export function bridgeSocketUrl(pageUrl: string, token?: string): string {
  const page = new URL(pageUrl);
  const url = new URL("." + WS_PATH, page);
  url.protocol = page.protocol === "https:" ? "wss:" : "ws:";
  const t = token ?? page.searchParams.get(TOKEN_PARAM);
  if (t) url.searchParams.set(TOKEN_PARAM, t);
  return url.toString();
}

export function createWebBridge(options: WebBridgeOptions = {}): Bridge {
  const pageUrl = options.pageUrl ?? globalThis.location.href;
  const url = bridgeSocketUrl(pageUrl, options.token);
  const socket: SocketLike = options.makeSocket
    ? options.makeSocket(url)
    : (new WebSocket(url) as unknown as SocketLike);

  let nextId = 1;
  let closedReason: string | null = null;
  const pending = new Map<number, { resolve: (v: WireValue) => void; reject: (e: Error) => void }>();
  const outbox: string[] = [];
  const eventListeners = new Set<(event: string, payload: WireValue) => void>();
  const closeListeners = new Set<(reason: string) => void>();

  socket.addEventListener("open", () => {
    for (const data of outbox.splice(0)) socket.send(data);
  });
  const onFrame = (frame: ResponseFrame | EventFrame) => {
    if (frame.type === "response") {
      const p = pending.get(frame.id);
      if (!p) return;
      pending.delete(frame.id);
      const { type: _t, id: _i, ...envelope } = frame;
      p.resolve(envelope as unknown as WireValue);
    } else if (frame.type === "event") {
      for (const l of eventListeners) l(frame.event, frame.payload as WireValue);
    }
  };
  socket.addEventListener("message", (ev) => {
    let data: ResponseFrame | EventFrame | (ResponseFrame | EventFrame)[];
    try {
      data = JSON.parse(String(ev.data)) as typeof data;
    } catch {
      return; // not ours
    }
    // The server sends the frames of one turn (e.g. a whole step) as one array, in order:
    // handled in this one task, the store's updates become one render.
    if (Array.isArray(data)) for (const frame of data) onFrame(frame);
    else onFrame(data);
  });
  const onGone = (reason: string) => {
    if (closedReason !== null) return;
    closedReason = reason;
    for (const p of pending.values()) p.reject(new Error(`bridge closed: ${reason}`));
    pending.clear();
    for (const l of closeListeners) l(reason);
  };
  socket.addEventListener("close", (ev) =>
    onGone(
      ev.reason ||
        (ev.code === 1009
          ? `a message was larger than the bridge carries (${MAX_MESSAGE_BYTES / 2 ** 20} MiB)`
          : `socket closed (${ev.code ?? "?"})`),
    ),
  );
  socket.addEventListener("error", () => onGone("socket error (is the server still running, and the token right?)"));

  return createBridge({
    host: "web",
    send(method, params) {
      if (closedReason !== null) return Promise.reject(new Error(`bridge closed: ${closedReason}`));
      const id = nextId++;
      const frame: RequestFrame = { type: "request", id, method, params };
      const data = JSON.stringify(frame);
      // The server would close the socket on it (1009): refuse this one request instead.
      if (data.length > MAX_MESSAGE_BYTES)
        return Promise.reject(
          new RangeError(
            `${method}: the request is ${(data.length / 2 ** 20).toFixed(1)} MiB, more than the bridge carries (${MAX_MESSAGE_BYTES / 2 ** 20} MiB); pass less data per call (e.g. write a large MR in pieces with mr.write)`,
          ),
        );
      return new Promise<WireValue>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        if (socket.readyState === 1) socket.send(data);
        else outbox.push(data);
      });
    },
    subscribe(listener) {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    onClose(listener) {
      closeListeners.add(listener);
      return () => closeListeners.delete(listener);
    },
    close() {
      socket.close(1000, "closed by the page");
    },
  });
}
