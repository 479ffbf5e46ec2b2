/**
 * The typed bridge the renderer uses, over any transport. The two transports (Electron IPC
 * through the preload, and the WebSocket of web mode) only move JSON; this file does the
 * wire encoding, turns error envelopes back into errors, and dispatches events.
 */
import { errorFromData } from "../../verbs/errors.js";
import type { BridgeEvents, Envelope, EventName, RequestMethod, RequestParams, RequestResult } from "./contract.js";
import { decodeValue, encodeValue, type WireValue } from "../session/wire.js";
import { createSnapshotFolder } from "./snapshot.js";

export interface Bridge {
  /** Which host is on the other side. */
  readonly host: "electron" | "web";
  /** Sends one request; resolves with its typed result or rejects with the host's error (a VerbsError for a failed verb). */
  request<M extends RequestMethod>(method: M, params: RequestParams<M>): Promise<RequestResult<M>>;
  /** Listens to one kind of event; returns the function that stops listening. */
  on<E extends EventName>(event: E, listener: (payload: BridgeEvents[E]) => void): () => void;
  /** Called when the connection to the host is lost for good (web mode: the server went away). */
  onClose(listener: (reason: string) => void): () => void;
  close(): void;
}

/** What a transport must do: move one JSON request and its JSON envelope, and deliver JSON events. */
export interface Transport {
  readonly host: "electron" | "web";
  send(method: string, params: WireValue): Promise<WireValue>;
  subscribe(listener: (event: string, payload: WireValue) => void): () => void;
  onClose?(listener: (reason: string) => void): () => void;
  close?(): void;
}

export function createBridge(transport: Transport): Bridge {
  const listeners = new Map<string, Set<(payload: never) => void>>();
  // Snapshots after a verb arrive as deltas: folded here, whoever listens (./snapshot.ts).
  const snapshots = createSnapshotFolder();
  const unsubscribe = transport.subscribe((event, payload) => {
    if (event === "session") snapshots.reset();
    const set = listeners.get(event);
    let decoded = decodeValue(payload) as never;
    if (event === "snapshot") {
      try {
        decoded = snapshots.fold(decoded) as never;
      } catch (err) {
        console.error("bridge: refused a malformed snapshot", err);
        return;
      }
    }
    if (!set || set.size === 0) return;
    for (const listener of [...set]) {
      try {
        listener(decoded);
      } catch (err) {
        // One broken pane must not stop the others from hearing the event.
        console.error(`bridge: a "${event}" listener threw`, err);
      }
    }
  });
  return {
    host: transport.host,
    async request(method, params) {
      const envelope = decodeValue(await transport.send(method, encodeValue(params ?? {}))) as Envelope<never>;
      if (!envelope || typeof envelope !== "object" || typeof envelope.ok !== "boolean")
        throw errorFromData({ name: "BridgeProtocolError", message: `malformed answer to ${method}` });
      if (envelope.ok)
        return method === "state.snapshot" && envelope.result !== null
          ? (snapshots.fold(envelope.result) as never)
          : envelope.result;
      throw errorFromData(envelope.error);
    },
    on(event, listener) {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener as (payload: never) => void);
      return () => set.delete(listener as (payload: never) => void);
    },
    onClose(listener) {
      return transport.onClose ? transport.onClose(listener) : () => {};
    },
    close() {
      unsubscribe();
      transport.close?.();
    },
  };
}
