/**
 * The backend process: run by the supervisor as an Electron utilityProcess (messages on
 * `process.parentPort`) or a Node child process (messages on `process.send`). It waits for
 * "init", starts the service, then answers requests one message at a time.
 */
import { errorToData } from "../../verbs/errors.js";
import { decodeValue, encodeValue, type WireValue } from "../session/wire.js";
import { defaultProvider } from "./backends.js";
import type { BackendToHost, HostToBackend } from "./protocol.js";
import { createBackendService, type BackendService } from "./service.js";

interface ParentPort {
  on(event: "message", listener: (e: { data: unknown }) => void): void;
  postMessage(message: unknown): void;
}

const parentPort = (process as unknown as { parentPort?: ParentPort }).parentPort;

function post(message: BackendToHost): void {
  if (parentPort) parentPort.postMessage(message);
  else process.send?.(message);
}

/**
 * Messages sent in one turn of the event loop leave together, in order, after it (setImmediate:
 * no timer delay). A step sends a gate event, the verb's transcript and snapshot events and two
 * responses within one turn; as one message the host relays them as one WebSocket frame, so the
 * renderer updates its panes once per step instead of once per message.
 */
let outbox: BackendToHost[] = [];
function send(message: BackendToHost): void {
  if (outbox.push(message) > 1) return;
  setImmediate(() => {
    const messages = outbox;
    outbox = [];
    post(messages.length === 1 ? messages[0]! : { type: "batch", messages });
  });
}

function onMessage(listener: (message: HostToBackend) => void): void {
  if (parentPort) parentPort.on("message", (e) => listener(e.data as HostToBackend));
  else process.on("message", (m) => listener(m as HostToBackend));
}

let service: BackendService | null = null;

onMessage(async (message) => {
  // Answered straight away (not batched): a process whose event loop is held answers late or never.
  if (message.type === "ping") return post({ type: "pong", id: message.id });
  if (message.type === "init") {
    if (service) return;
    try {
      service = createBackendService(message.init, {
        provider: defaultProvider,
        emit: (event, payload) => send({ type: "event", event, payload: encodeValue(payload) }),
        sessionChanged: (info) => send({ type: "session", ...info }),
      });
      const started = await service.start();
      send({ type: "ready", pid: process.pid, ...started });
      // Read the course now, while nobody waits, rather than on the first page's lessons.list
      // (~0.2 s), in web mode and in Electron alike.
      setImmediate(() => void service?.handle("lessons.list", {}).catch(() => {}));
    } catch (err) {
      send({ type: "fatal", error: errorToData(err) });
      process.exitCode = 1;
    }
    return;
  }
  if (message.type === "request") {
    const { id, method, params } = message;
    try {
      if (!service) throw new Error("the backend process has not been initialised");
      const result = await service.handle(method, decodeValue(params));
      send({ type: "response", id, ok: true, result: encodeValue(result ?? null) as WireValue });
    } catch (err) {
      send({ type: "response", id, ok: false, error: errorToData(err) });
    }
  }
});

// Without a host the process has nothing to do: leave when the channel closes.
if (!parentPort) process.on("disconnect", () => process.exit(0));
