/**
 * What both hosts (Electron main and the web server) do with a bridge request: validate it
 * against the contract, answer the host's own questions, and relay the rest to the
 * backend process. Takes and returns wire-encoded JSON, so the transports stay dumb.
 */
import { errorToData } from "../../verbs/errors.js";
import { BRIDGE_VERSION, parseRequest, type EventName, type HostInfo, type RequestMethod } from "../bridge/contract.js";
import { decodeValue, encodeValue, type WireValue } from "../session/wire.js";
import type { BackendSupervisor } from "./supervisor.js";

export interface HostCore {
  /** One request from the renderer (method and wire-encoded params, untrusted) → its wire-encoded envelope. */
  handle(method: unknown, params: unknown): Promise<WireValue>;
  /** Events for the renderer (wire-encoded). */
  onEvent(listener: (event: EventName, payload: WireValue) => void): () => void;
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
        parsed = parseRequest(method, decodeValue(params));
      } catch (err) {
        return encodeValue({ ok: false, error: errorToData(err) });
      }
      const answer = local[parsed.method];
      if (answer) {
        try {
          return encodeValue({ ok: true, result: answer() });
        } catch (err) {
          return encodeValue({ ok: false, error: errorToData(err) });
        }
      }
      // Relayed as wire JSON: the params go on as they came (they decode to what was validated),
      // and the backend's envelope goes back to the renderer untouched.
      return (await supervisor.request(parsed.method, (params ?? {}) as WireValue)) as unknown as WireValue;
    },
    onEvent: (listener) => supervisor.onEvent(listener),
  };
}
