/** The store's step hold: the events of one Step reach the panes as one update. */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Bridge } from "../../../bridge/client.js";
import type { BridgeEvents, EventName, GateState, TranscriptEvent } from "../../../bridge/contract.js";
import { LabStore, STEP_HOLD_MS } from "./store.js";

function fakeBridge() {
  const listeners = new Map<string, (payload: unknown) => void>();
  const bridge = {
    host: "web",
    request: () => new Promise(() => {}),
    on: <E extends EventName>(event: E, l: (payload: BridgeEvents[E]) => void) => {
      listeners.set(event, l as (payload: unknown) => void);
      return () => listeners.delete(event);
    },
    onClose: () => () => {},
    close: () => {},
  } as unknown as Bridge;
  const emit = <E extends EventName>(event: E, payload: BridgeEvents[E]) => listeners.get(event)!(payload);
  return { bridge, emit };
}

const pending = (seq: number) => ({
  seq,
  verb: "ibv_post_send",
  target: { $handle: 7, type: "qp" as const },
  method: "postSend",
  args: [],
});
const gate = (mode: GateState["mode"], p: number | null): GateState => ({
  mode,
  pending: p === null ? null : pending(p),
  stopped: false,
});
const verb = (seq: number) => ({ seq, kind: "verb" }) as unknown as TranscriptEvent;
/** Lets the store's MessageChannel task run. */
const tick = () => new Promise((r) => setTimeout(r, 5));

function setup() {
  const { bridge, emit } = fakeBridge();
  const store = new LabStore(bridge);
  void store.start();
  const seen: number[] = [];
  store.subscribe(() => seen.push(store.get().events.length));
  return { store, emit, seen };
}

describe("LabStore step hold", () => {
  let store: LabStore | undefined;
  afterEach(() => store?.close());

  it("tells the panes once, when the gate holds the next verb, with everything of the step", async () => {
    const s = setup();
    store = s.store;
    s.emit("gate", gate("step", null)); // Step released the verb
    s.emit("transcript", verb(1));
    await tick();
    expect(s.seen).toEqual([]);
    s.emit("gate", gate("step", 2)); // the next verb waits
    await tick();
    expect(s.seen).toEqual([1]);
    expect(s.store.get().gate?.pending?.seq).toBe(2);
  });

  it("shows the step's events after STEP_HOLD_MS if the gate does not hold again", async () => {
    const s = setup();
    store = s.store;
    s.emit("gate", gate("step", null));
    s.emit("transcript", verb(1));
    await tick();
    expect(s.seen).toEqual([]);
    const t0 = performance.now();
    await vi.waitFor(() => expect(s.seen).toEqual([1]), { timeout: 2000, interval: 2 });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(STEP_HOLD_MS - 10);
  });

  it("does not hold while running (Continue): each batch of events renders", async () => {
    const s = setup();
    store = s.store;
    s.emit("gate", gate("run", null));
    s.emit("transcript", verb(1));
    await tick();
    expect(s.seen).toEqual([1]);
    s.emit("transcript", verb(2));
    await tick();
    expect(s.seen).toEqual([1, 2]);
  });

  it("a notice shows at once, and with it what the step brought so far", async () => {
    const s = setup();
    store = s.store;
    s.emit("gate", gate("step", null));
    s.emit("transcript", verb(1));
    s.store.notice("warn", "something");
    expect(s.seen).toEqual([1]);
  });
});
