/**
 * The timed wire: how long a packet takes from the moment a requester or responder hands it
 * to the link until it is received at the other end, on the simulator's virtual clock. A
 * different axis from the device profiles of sim/profile.ts (what the device answers): a wire
 * profile only says how fast the link and the packet processing are.
 *
 * Each direction between two devices is one link, a FIFO (a device's traffic to itself takes
 * no time: world.ts transmit, as rxe_loopback runs it inline):
 *
 *   start    = max(now, the link's free time)        the bounded transmit queue
 *   free     = start + perPacketNs + (payload + headerBytes) × 8 / gbps
 *   arrival  = free + latencyNs
 *   free    += perMessageNs                          after the packet that ends a request
 *
 * On a `paced` profile (rxe) the requester hands over its next packet only once `free` has
 * passed, so start = now for its packets (while the lab link has faults: requester.ts).
 *
 * `perMessageNs` is work per message that delays the next one but not this one (rxe: the
 * CPU's completion work, which decides its small-message bandwidth but not its latency).
 * `perPacketNs` is the per-packet processing that occupies the link's pipeline (rxe: the
 * CPU's work per packet; a NIC: its packet rate), the byte term is serialization at the link
 * rate (rxe: the CPU's per-byte work, ICRC and copies), and `latencyNs` is what a packet
 * spends after that without holding the pipeline up (propagation, the receive path). A packet
 * that would wait behind more than `queuePackets` full-size packets is dropped at the sender
 * (tail drop), as a full transmit queue does. All arithmetic is in integer nanoseconds, so
 * that the same packets give the same times whichever path (fast-path.ts or the reference)
 * carried them.
 */

// The profiles' names are the contract's wire models (verbs/lab.ts), which setLink switches between.
import { WIRE_MODELS, type WireModel } from "../verbs/lab.js";

export interface WireProfile {
  readonly name: WireModel;
  /** What the UI shows: every profile is a model; only `rxe` is fitted to real rxe. */
  readonly label: string;
  /** Link rate for the byte term, in Gb/s (bits per ns). */
  readonly gbps: number;
  /** Bytes each packet carries on the wire besides its payload (headers, ICRC, FCS, preamble and gap). */
  readonly headerBytes: number;
  /** Processing time per packet that holds the link (ns). */
  readonly perPacketNs: number;
  /** Time the link stays busy after the last packet of each request message (ns). */
  readonly perMessageNs: number;
  /** Time after the link before the packet is received (ns). */
  readonly latencyNs: number;
  /** Most full-size packets waiting on a link; one more is dropped. */
  readonly queuePackets: number;
  /**
   * The link's per-packet and byte costs are the sending CPU's (rxe): its requester builds and
   * transmits one packet at a time, so it hands the link the next packet only once the link
   * is free (sent_pkts counts only what has left; a NAK that arrives in between stops it
   * there), and a packet netem or the receiver drops has cost that time all the same. False
   * for a NIC, whose queue takes a burst at once and whose cost a packet dropped before it
   * never pays. (requester.ts; applied while the lab link has faults, SimWorld.paced.)
   */
  readonly paced: boolean;
  /** Where the figures come from. */
  readonly source: string;
}

/** RoCE v2 over IPv4: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4; +20 preamble and inter-frame gap on a real link. */
const ROCE_HEADERS = 62;
const PREAMBLE_AND_GAP = 20;

const PROFILES: Record<WireModel, WireProfile> = {
  rxe: {
    name: "rxe",
    label: "rxe (model fitted to the lab VM)",
    // Fitted to rxe in the lab VM (TCG-emulated) on a quiet host, 2026-12-03: ib_write_bw
    // rxe0 → rxe1 at path MTU 1024 (scripts/bench-rxe-curve.sh) gave 6.61, 21.08, 33.05, 42.09,
    // 48.07, 48.45 and 46.16 MB/s from 256 B to 1 MiB (a smooth curve), ib_send_lat -s 8 22.8 µs.
    // The time per message is then n packets × ~22.15 µs plus ~35 µs (from the 1 MiB and 4 KiB
    // points): a 1024-byte packet holds the link 2 µs of processing plus 1086 bytes at
    // 0.431 Gb/s (the CPU's per-byte work, ICRC and copies), and 35 µs of work follow each
    // message (the completion's). The model gives 5.96, 17.9, 33.1, 42.1, 45.1, 45.9 and
    // 46.1 MB/s over the same sizes (0.72 and 0.98 of 1 MiB at 4 KiB and 64 KiB, rxe's 0.72 and
    // 1.04); latencyNs puts ib_send_lat -s 8 at ~23 µs one way. The figures drift with the
    // host: a busy, slower host on 2026-12-01 gave 1.3–6.7 MB/s and a flatter start (0.38 at
    // 4 KiB, 0.82 at 64 KiB), which the fit before this one followed (0.267 Gb/s, 20 µs per
    // packet, 260 µs per message). `npm run bench:rxe` compares the shape with the host's.
    gbps: 0.431,
    headerBytes: ROCE_HEADERS,
    perPacketNs: 2_000,
    perMessageNs: 35_000,
    latencyNs: 20_000,
    // veth's txqueuelen.
    queuePackets: 1000,
    // rxe_requester builds each packet (copy and ICRC in the VM's CPU) and transmits it before
    // it looks at the next one (sim/RXE-FACTS.md §11, §12).
    paced: true,
    source: "perftest ib_write_bw and ib_send_lat on rxe in the lab VM (scripts/bench-rxe-curve.sh)",
  },
  "25GbE": {
    name: "25GbE",
    label: "25GbE RoCE NIC (model)",
    // 25 Gb/s RoCE: 23–24.7 Gb/s with ib_write_bw (MTU 4096), SEND latency ~1.1–2 µs. 82
    // bytes of overhead and 30 ns of processing per packet hold the link 1,367 ns per
    // 4096-byte packet: 24.0 Gb/s of payload at MTU 4096 (the articles' figure), 21.3 Gb/s at
    // MTU 1024 (384 ns per packet). 1.05 µs of fixed latency plus one 8-byte packet's 59 ns
    // gives ~1.1 µs one-way for 8 B.
    gbps: 25,
    headerBytes: ROCE_HEADERS + PREAMBLE_AND_GAP,
    perPacketNs: 30,
    perMessageNs: 0,
    latencyNs: 1_050,
    queuePackets: 4096,
    paced: false,
    source: "the source articles: 23–24.7 Gb/s ib_write_bw and 1.1–2 µs SEND latency on 25 Gb/s RoCE",
  },
  "100GbE": {
    name: "100GbE",
    label: "100GbE RoCE NIC (model)",
    // The 25GbE model's NIC at four times the link rate and packet rate (30 / 4 ns per
    // packet, rounded up: integer ns): 96 Gb/s of payload at MTU 4096, 85 at 1024.
    gbps: 100,
    headerBytes: ROCE_HEADERS + PREAMBLE_AND_GAP,
    perPacketNs: 8,
    perMessageNs: 0,
    latencyNs: 900,
    queuePackets: 4096,
    paced: false,
    source: "the 25GbE model scaled to 100 Gb/s (link rate and packet rate ×4)",
  },
};

/** The wire profile named `name` (default "rxe"); a RangeError names a wrong one. */
export function wireProfile(name: WireModel | undefined = "rxe"): WireProfile {
  if (typeof name !== "string" || !Object.hasOwn(PROFILES, name))
    throw new RangeError(`wire: no wire profile ${JSON.stringify(name)} (there are ${WIRE_MODELS.join(", ")})`);
  return PROFILES[name];
}

/** The time a packet of `payload` bytes holds a link (ns, integer). */
export function holdNs(w: WireProfile, payload: number): number {
  return w.perPacketNs + Math.round(((payload + w.headerBytes) * 8) / w.gbps);
}

/** Virtual milliseconds (the clock's unit) as integer nanoseconds. */
export function toNs(ms: number): number {
  return Math.round(ms * 1e6);
}

/** One direction between two devices: when it is free again. */
export class Link {
  freeNs = 0;
  constructor(readonly name: string) {}
}
