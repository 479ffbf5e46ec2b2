/**
 * A transcript's packets as a pcap: the transcript is replayed on a fresh simulator (with its
 * seed and the packet log on), and the simulator's packet log is written out by `toPcap`. So
 * the export is a function of the transcript alone, whichever backend recorded it: for a
 * transcript recorded on real rxe it shows the packets the simulator sends for the same calls
 * (to see rxe's own, capture the lab VM's veth: scripts/pcap-rxe.sh).
 *
 * Only packets between two devices (rxe0 ↔ rxe1) would cross a real wire; packets between two
 * QPs of one device are in the file too, though rxe loops them inside and no capture sees them.
 */
import { createSimBackend } from "../../../sim/index.js";
import { replayTranscript } from "../replay.js";
import type { Transcript } from "../transcript.js";
import { toPcap, type PcapDevices, type PcapResult } from "./pcap.js";

export interface TranscriptPcap extends PcapResult {
  /** Packets the simulator's log no longer held (it keeps the last MAX_LOG): the file starts after them. */
  lost: number;
  /** Replayed results that differed from the recorded ones (a transcript recorded elsewhere). */
  divergences: number;
}

/** Replays `t` on the simulator and renders its packets as a pcap. */
export async function transcriptPcap(t: Transcript): Promise<TranscriptPcap> {
  const sim = createSimBackend({ seed: t.header.seed ?? 1, packetLog: true });
  const r = await replayTranscript(t, sim);
  const devices: PcapDevices = {};
  for (const d of sim.getDeviceList()) devices[d.name] = { mac: sim.netdev(d.name).mac };
  const entries = sim.packets;
  const startMs = Date.parse(t.header.created);
  const out = toPcap(entries, { devices, startMs: Number.isNaN(startMs) ? 0 : startMs });
  return { ...out, lost: entries[0]?.seq ?? 0, divergences: r.divergences.length };
}
