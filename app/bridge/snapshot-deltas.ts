/**
 * The sending side of ./snapshot.ts: what the backend process tells the renderer after each
 * verb. The first "snapshot" event of a session is the whole picture; every later one says
 * only what changed since the previous one (`delta: true`): MRs whose first bytes changed,
 * devices whose counters moved, and the packets new since then. The renderer's folder
 * (./snapshot.ts) turns them back into whole pictures. Browser-safe, and it knows no
 * backend: packets come from the contract's optional `packetLog` capability.
 */
import type { PacketLog, PacketLogEntry } from "../../verbs/backend.js";
import type { PortCounters } from "../../verbs/types.js";
import type { QpModelView } from "../session/session-types.js";
import {
  MR_WINDOW,
  PACKETS_PER_SNAPSHOT,
  type BackendKind,
  type PacketRecord,
  type StateSnapshot,
} from "./contract.js";
import { appendPackets } from "./snapshot.js";

/** What a snapshot is read from: the session's views and the backend's clock and packet log. */
export interface SnapshotSource {
  readonly backend: BackendKind;
  /** The backend clock in ms. */
  now(): number;
  qps(): QpModelView[];
  mrBytes(max: number): { handle: number; bytes: Uint8Array }[];
  /** hw_counters per open context (several contexts may share a device). */
  counters(): { handle: number; device: string; counters: PortCounters }[];
  /** Absent when the backend cannot observe its packets (native). */
  readonly packetLog?: PacketLog | undefined;
}

export interface SnapshotDeltas {
  /** The whole picture as of event `seq` (`state.snapshot`); the packets are the window so far. */
  full(seq: number): StateSnapshot;
  /**
   * The "snapshot" event after verb event `seq`: whole the first time, then a delta.
   * `countersMoved`: the event recorded counter changes (reading counters costs sysfs reads
   * on native, so they are read only then).
   */
  after(seq: number, countersMoved: boolean): StateSnapshot;
}

/** A packet-log entry as the packet timeline gets it. */
export function packetRecord(e: PacketLogEntry, at: number): PacketRecord {
  return {
    seq: e.seq,
    at,
    time: Math.round(e.time * 1000) / 1000,
    src: e.src,
    dst: e.dst,
    opcode: e.opcode,
    psn: e.psn,
    src_qpn: e.src_qpn,
    dest_qpn: e.dest_qpn,
    len: e.payload_len,
    ...(e.ack_req && { ack_req: true }),
    ...(e.wr_id !== undefined && { wr_id: e.wr_id }),
    ...(e.aeth && { aeth: { ...e.aeth } }),
    ...(e.reth && { reth: { ...e.reth } }),
    ...(e.imm_data !== undefined && { imm_data: e.imm_data }),
    ...(e.dropped !== undefined && { dropped: e.dropped }),
    ...(e.drop !== undefined && { drop: e.drop }),
  };
}

/**
 * The packets logged after `afterSeq`, as records tagged with event `at`. A burst of more
 * than `max` keeps its start and end (FIRST … LAST and the ACK); the gap in `seq` says how
 * many are not shown.
 */
export function newPackets(
  log: readonly PacketLogEntry[],
  afterSeq: number,
  at: number,
  max = PACKETS_PER_SNAPSHOT,
): PacketRecord[] {
  if (!log.length || log[log.length - 1]!.seq <= afterSeq) return [];
  let i = log.length;
  while (i > 0 && log[i - 1]!.seq > afterSeq) i--;
  const half = Math.floor(max / 2);
  const picked = log.length - i <= max ? log.slice(i) : [...log.slice(i, i + half), ...log.slice(log.length - half)];
  return picked.map((e) => packetRecord(e, at));
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Tracks what the "snapshot" events have told the renderer this session (the base of the
 * next delta). Packets already in the log when it is made (a replay's) belong to event
 * `startSeq`.
 */
export function createSnapshotDeltas(source: SnapshotSource, startSeq = 0): SnapshotDeltas {
  let first = true;
  const mrs = new Map<number, Uint8Array>();
  const counters = new Map<number, string>();
  let packetSeq = -1;
  /** The packet timeline's data: the last PACKET_WINDOW packets, resent whole only by `full`. */
  let window: PacketRecord[] = [];
  const observable = source.packetLog !== undefined;

  /** Takes the packets logged since the last pull into the window; returns them. */
  function pullPackets(at: number): PacketRecord[] {
    const log = source.packetLog?.entries;
    if (!log?.length) return [];
    const records = newPackets(log, packetSeq, at);
    packetSeq = Math.max(packetSeq, log[log.length - 1]!.seq);
    window = appendPackets(window, records);
    return records;
  }

  /** hw_counters per device (the first open context of each, as the events' deltas are keyed). */
  function deviceCounters() {
    const seen = new Set<string>();
    return source.counters().filter((c) => !seen.has(c.device) && seen.add(c.device));
  }

  const head = (seq: number) => ({ backend: source.backend, clock: source.now(), seq, qps: source.qps() });

  pullPackets(startSeq);
  return {
    full(seq) {
      return {
        ...head(seq),
        mrBytes: source.mrBytes(MR_WINDOW),
        counters: deviceCounters(),
        packets: { observable, records: window },
      };
    },
    after(seq, countersMoved) {
      const packets = pullPackets(seq);
      const mrBytes = source.mrBytes(MR_WINDOW).filter((m) => {
        const before = mrs.get(m.handle);
        if (before && sameBytes(before, m.bytes)) return false;
        mrs.set(m.handle, m.bytes);
        return true;
      });
      const changed =
        first || countersMoved
          ? deviceCounters().filter((c) => {
              const text = JSON.stringify(c.counters);
              if (counters.get(c.handle) === text) return false;
              counters.set(c.handle, text);
              return true;
            })
          : [];
      if (first) {
        // Nothing was sent before, so the lists above are whole: this is the full picture.
        first = false;
        return { ...head(seq), mrBytes, counters: changed, packets: { observable, records: window } };
      }
      return {
        ...head(seq),
        delta: true,
        ...(mrBytes.length && { mrBytes }),
        ...(changed.length && { counters: changed }),
        ...(packets.length && { packets: { observable: true, records: packets } }),
      };
    },
  };
}
