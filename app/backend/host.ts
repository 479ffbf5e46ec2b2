/**
 * What both hosts (Electron main and the web server) do with a bridge request: validate it
 * against the contract, answer the host's own questions, and relay the rest to the
 * backend process. Takes and returns wire-encoded JSON, so the transports stay dumb.
 */
import { errorToData } from "../../verbs/errors.js";
import { BRIDGE_VERSION, parseRequest, type EventName, type HostInfo, type RequestMethod } from "../bridge/contract.js";
import { fromWire, toWire, type Json } from "../bridge/wire.js";
import type { BackendSupervisor } from "./supervisor.js";

export interface HostCore {
  /** One request from the renderer (method and wire-encoded params, untrusted) → its wire-encoded envelope. */
  handle(method: unknown, params: unknown): Promise<Json>;
  /** Events for the renderer (wire-encoded). */
  onEvent(listener: (event: EventName, payload: Json) => void): () => void;
}

export interface HostCoreOptions {
  supervisor: BackendSupervisor;
  host: HostInfo["host"];
  appVersion: string;
}

export function createHostCore({ supervisor, host, appVersion }: HostCoreOptions): HostCore {
  const local: Partial<Record<RequestMethod, () => unknown>> = {
    "host.info": (): HostInfo => ({
      host,
      bridgeVersion: BRIDGE_VERSION,
      appVersion,
      platform: `${process.platform}-${process.arch}`,
      backend: supervisor.status(),
    }),
    "backend.status": () => supervisor.status(),
  };
  return {
    async handle(method, params) {
      let parsed: ReturnType<typeof parseRequest>;
      try {
        parsed = parseRequest(method, fromWire(params));
      } catch (err) {
        return toWire({ ok: false, error: errorToData(err) });
      }
      const answer = local[parsed.method];
      if (answer) {
        try {
          return toWire({ ok: true, result: answer() });
        } catch (err) {
          return toWire({ ok: false, error: errorToData(err) });
        }
      }
      // Relayed as wire JSON: the backend's envelope goes back to the renderer untouched.
      return (await supervisor.request(parsed.method, toWire(parsed.params))) as unknown as Json;
    },
    onEvent: (listener) => supervisor.onEvent(listener),
  };
}
