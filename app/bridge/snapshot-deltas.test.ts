import { describe, expect, it } from "vitest";
import type { PacketLogEntry } from "../../verbs/backend.js";
import { PACKETS_PER_SNAPSHOT } from "./contract.js";
import { createSnapshotDeltas, newPackets, type SnapshotSource } from "./snapshot-deltas.js";
import { createSnapshotFolder } from "./snapshot.js";

const entry = (seq: number, opcode = "RC_SEND_ONLY"): PacketLogEntry => ({
  seq,
  time: seq / 1000,
  src: "rxe0",
  dst: "rxe1",
  opcode,
  psn: seq,
  src_qpn: 17,
  dest_qpn: 18,
  payload_len: 16,
  ack_req: false,
  solicited: false,
});

/** A session and backend as far as snapshots go, with knobs the test turns. */
function fakeSource(withPackets: boolean) {
  const log: PacketLogEntry[] = [];
  const state = {
    mrs: [{ handle: 3, bytes: new Uint8Array([0, 0]) }],
    counters: [
      { handle: 1, device: "rxe0", counters: { sent_pkts: 0 } },
      { handle: 2, device: "rxe0", counters: { sent_pkts: 0 } }, // a second context on the same device
    ],
    counterReads: 0,
  };
  const source: SnapshotSource = {
    backend: withPackets ? "sim" : "native",
    now: () => 1.5,
    qps: () => [],
    mrBytes: () => state.mrs,
    counters: () => (state.counterReads++, state.counters),
    ...(withPackets && { packetLog: { entries: log } }),
  };
  return { source, log, state };
}

describe("snapshot deltas (what the backend sends after each verb)", () => {
  it("sends the whole picture first, then only what changed, and the folder rebuilds the whole", () => {
    const { source, log, state } = fakeSource(true);
    log.push(entry(0));
    const d = createSnapshotDeltas(source, 0);
    const folder = createSnapshotFolder();

    const first = d.after(1, false);
    expect(first.delta).toBeUndefined();
    expect(first.mrBytes).toHaveLength(1);
    expect(first.counters!.map((c) => c.handle)).toEqual([1]); // one per device
    expect(first.packets).toEqual({ observable: true, records: [expect.objectContaining({ seq: 0, at: 0 })] });
    folder.fold(first);

    // Nothing changed: a delta with nothing in it.
    const quiet = d.after(2, false);
    expect(quiet).toMatchObject({ delta: true, seq: 2 });
    expect(quiet.mrBytes).toBeUndefined();
    expect(quiet.packets).toBeUndefined();

    // The MR changed and two packets went out during event 3.
    state.mrs = [{ handle: 3, bytes: new Uint8Array([1, 2]) }];
    log.push(entry(1), entry(2, "RC_ACKNOWLEDGE"));
    const busy = d.after(3, false);
    expect(busy.mrBytes!.map((m) => [...m.bytes])).toEqual([[1, 2]]);
    expect(busy.packets!.records.map((p) => [p.seq, p.at])).toEqual([
      [1, 3],
      [2, 3],
    ]);
    const whole = folder.fold(busy);
    expect(whole.packets!.records.map((p) => p.seq)).toEqual([0, 1, 2]);
    expect(d.full(3).packets).toEqual(whole.packets);
  });

  it("reads counters only when the event says they moved, and sends only the devices that changed", () => {
    const { source, state } = fakeSource(false);
    const d = createSnapshotDeltas(source);
    d.after(1, false);
    const reads = state.counterReads;
    expect(d.after(2, false).counters).toBeUndefined();
    expect(state.counterReads).toBe(reads);
    state.counters = [{ handle: 1, device: "rxe0", counters: { sent_pkts: 5 } }];
    expect(d.after(3, true).counters).toEqual([{ handle: 1, device: "rxe0", counters: { sent_pkts: 5 } }]);
    expect(d.after(4, true).counters).toBeUndefined();
  });

  it("says packets are not observable when the backend has no packet log", () => {
    const { source } = fakeSource(false);
    const d = createSnapshotDeltas(source);
    expect(d.after(1, false).packets).toEqual({ observable: false, records: [] });
    expect(d.full(1).packets).toEqual({ observable: false, records: [] });
  });

  it("tags packets logged before it was made (a replay's) with the start event", () => {
    const { source, log } = fakeSource(true);
    log.push(entry(0), entry(1));
    const d = createSnapshotDeltas(source, 7);
    expect(d.full(7).packets!.records.map((p) => p.at)).toEqual([7, 7]);
    expect(d.after(8, false).packets!.records).toHaveLength(2); // the first event is whole
  });

  it("keeps the start and end of a burst larger than one snapshot carries", () => {
    const log = Array.from({ length: PACKETS_PER_SNAPSHOT + 100 }, (_, i) => entry(i));
    const records = newPackets(log, -1, 1);
    expect(records).toHaveLength(PACKETS_PER_SNAPSHOT);
    expect(records[0]!.seq).toBe(0);
    expect(records.at(-1)!.seq).toBe(log.length - 1);
    expect(records[PACKETS_PER_SNAPSHOT / 2]!.seq).toBe(log.length - PACKETS_PER_SNAPSHOT / 2);
    expect(newPackets(log, log.length - 3, 2).map((p) => p.seq)).toEqual([log.length - 2, log.length - 1]);
    expect(newPackets(log, log.length - 1, 2)).toEqual([]);
  });
});
