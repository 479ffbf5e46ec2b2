import { describe, expect, it } from "vitest";
import { createBridge, type Transport } from "./client.js";
import { BridgeValidationError, type PacketRecord, type StateSnapshot } from "./contract.js";
import { appendPackets, createSnapshotFolder } from "./snapshot.js";
import { encodeValue, type WireValue } from "../session/wire.js";

const pkt = (seq: number, at = 1, opcode = "RC_SEND_ONLY"): PacketRecord => ({
  seq,
  at,
  time: 0,
  src: "rxe0",
  dst: "rxe1",
  opcode,
  psn: seq,
  src_qpn: 17,
  dest_qpn: 18,
  len: 16,
});
const base = (over: Partial<StateSnapshot> = {}): StateSnapshot => ({
  backend: "sim",
  clock: 0,
  seq: 1,
  qps: [],
  ...over,
});

describe("snapshot folding", () => {
  it("merges deltas: MR bytes and counters by handle, packets appended once each", () => {
    const f = createSnapshotFolder();
    f.fold(
      base({
        mrBytes: [
          { handle: 4, bytes: new Uint8Array([1]) },
          { handle: 5, bytes: new Uint8Array([2]) },
        ],
        counters: [{ handle: 1, device: "rxe0", counters: { sent_pkts: 0 } }],
        packets: { observable: true, records: [pkt(0)] },
      }),
    );
    const s = f.fold(
      base({
        seq: 2,
        delta: true,
        mrBytes: [{ handle: 5, bytes: new Uint8Array([9]) }],
        packets: { observable: true, records: [pkt(0), pkt(1, 2), pkt(2, 2)] },
      }),
    );
    expect(s.delta).toBeUndefined();
    expect(s.seq).toBe(2);
    expect(s.mrBytes!.map((m) => [m.handle, m.bytes[0]])).toEqual([
      [4, 1],
      [5, 9],
    ]);
    expect(s.counters).toEqual([{ handle: 1, device: "rxe0", counters: { sent_pkts: 0 } }]);
    expect(s.packets!.records.map((p) => p.seq)).toEqual([0, 1, 2]);
    // A delta without packets keeps the timeline as it was.
    expect(f.fold(base({ seq: 3, delta: true })).packets!.records).toHaveLength(3);
  });

  it("keeps only the last PACKET_WINDOW packets, and a whole snapshot or a reset starts over", () => {
    const f = createSnapshotFolder(4);
    f.fold(base({ packets: { observable: true, records: [pkt(0), pkt(1)] } }));
    const s = f.fold(base({ delta: true, packets: { observable: true, records: [2, 3, 4, 5].map((n) => pkt(n)) } }));
    expect(s.packets!.records.map((p) => p.seq)).toEqual([2, 3, 4, 5]);
    expect(f.fold(base({ packets: { observable: true, records: [pkt(0)] } })).packets!.records).toHaveLength(1);
    f.reset();
    expect(f.fold(base({ delta: true, packets: { observable: true, records: [pkt(7)] } })).packets!.records).toEqual([
      pkt(7),
    ]);
    expect(appendPackets([pkt(1)], [pkt(0), pkt(1)])).toEqual([pkt(1)]);
  });

  it("refuses a malformed snapshot, naming the field", () => {
    const f = createSnapshotFolder();
    const bad = { ...base(), packets: { observable: true, records: [{ ...pkt(0), psn: -1 }] } };
    expect(() => f.fold(bad)).toThrow(BridgeValidationError);
    try {
      f.fold(bad);
    } catch (err) {
      expect((err as BridgeValidationError).path).toBe("snapshot.packets.records[0].psn");
    }
    expect(() => f.fold({ ...base(), mrBytes: [{ handle: 1, bytes: new Uint8Array(4096) }] })).toThrow(/256 bytes/);
    expect(() => f.fold({ ...base(), extra: 1 })).toThrow(BridgeValidationError);
  });
});

describe("the bridge client folds snapshots", () => {
  function fakeHost() {
    let push: (event: string, payload: WireValue) => void = () => {};
    const transport: Transport = {
      host: "web",
      send: async () =>
        encodeValue({
          ok: true,
          result: base({ seq: 9, packets: { observable: true, records: [pkt(5)] } }),
        }) as WireValue,
      subscribe(l) {
        push = l;
        return () => {};
      },
    };
    return { bridge: createBridge(transport), emit: (e: string, p: unknown) => push(e, encodeValue(p) as WireValue) };
  }

  it("delivers whole snapshots to listeners and state.snapshot, from deltas on the wire", async () => {
    const { bridge, emit } = fakeHost();
    const got: StateSnapshot[] = [];
    bridge.on("snapshot", (s) => got.push(s));
    emit("snapshot", base({ packets: { observable: true, records: [pkt(0)] } }));
    emit("snapshot", base({ delta: true, packets: { observable: true, records: [pkt(1, 2, "RC_ACKNOWLEDGE")] } }));
    emit("snapshot", { nonsense: true }); // refused, never reaches a pane
    expect(got.map((s) => s.packets!.records.map((p) => p.opcode))).toEqual([
      ["RC_SEND_ONLY"],
      ["RC_SEND_ONLY", "RC_ACKNOWLEDGE"],
    ]);
    // state.snapshot's whole answer replaces the fold; later deltas build on it.
    const whole = await bridge.request("state.snapshot", {});
    expect(whole!.packets!.records.map((p) => p.seq)).toEqual([5]);
    emit("snapshot", base({ delta: true, packets: { observable: true, records: [pkt(6)] } }));
    expect(got.at(-1)!.packets!.records.map((p) => p.seq)).toEqual([5, 6]);
    // A new session forgets the old one's packets.
    emit("session", {});
    emit("snapshot", base({ delta: true, packets: { observable: true, records: [pkt(0)] } }));
    expect(got.at(-1)!.packets!.records.map((p) => p.seq)).toEqual([0]);
  });
});
