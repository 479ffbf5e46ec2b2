/**
 * A transcript's packets as a pcap: the transcript is replayed on a fresh simulator (with its
 * seed and the packet log on, made by the caller: app/session sees backends only through the
 * contract), and the packet log is written out by `toPcap`. So the export is a function of the
 * transcript alone, whichever backend recorded it: for a transcript recorded on real rxe it
 * shows the packets the simulator sends for the same calls (to see rxe's own, capture the lab
 * VM's veth pair: scripts/pcap-rxe.sh).
 *
 * Only packets between two devices (rxe0 ↔ rxe1) cross a real wire; packets between two QPs of
 * one device are in the file too, though rxe loops them inside and no capture ever sees them.
 */
import type { VerbsBackend } from "../../../verbs/backend.js";
import { replayTranscript } from "../replay.js";
import type { Transcript } from "../transcript.js";
import { gidBytes, toPcap, type PcapDevices, type PcapResult } from "./pcap.js";

export interface TranscriptPcap extends PcapResult {
  /** Packets the simulator's log no longer held (it keeps only its last ones): the file starts after them. */
  lost: number;
  /** Replayed results that differed from the recorded ones (a transcript recorded elsewhere). */
  divergences: number;
}

/**
 * The netdev MAC behind a device, read off its link-local GID (index 0: fe80:: and the MAC's
 * EUI-64, as rxe and the simulator make it): the contract has no other way to ask.
 */
async function macOf(backend: VerbsBackend, device: string): Promise<string> {
  const ctx = backend.openDevice(device);
  try {
    const g = gidBytes(ctx.queryGid(1, 0));
    if (g[0] !== 0xfe || g[1] !== 0x80 || g[11] !== 0xff || g[12] !== 0xfe)
      throw new RangeError(`${device}'s GID 0 is not a link-local EUI-64 GID: no MAC can be read off it`);
    const mac = [g[8]! ^ 2, g[9]!, g[10]!, g[13]!, g[14]!, g[15]!];
    return mac.map((b) => b.toString(16).padStart(2, "0")).join(":");
  } finally {
    ctx.close();
  }
}

/**
 * Replays `t` on `sim` (a fresh simulator with its packet log on, seeded with the transcript's
 * seed) and renders its packets as a pcap.
 */
export async function transcriptPcap(t: Transcript, sim: VerbsBackend): Promise<TranscriptPcap> {
  if (!sim.packetLog) throw new TypeError(`the ${sim.kind} backend cannot see its packets: replay on the simulator`);
  const r = await replayTranscript(t, sim);
  const entries = sim.packetLog.entries;
  const devices: PcapDevices = {};
  for (const d of sim.getDeviceList()) devices[d.name] = { mac: await macOf(sim, d.name) };
  const startMs = Date.parse(t.header.created);
  const out = toPcap(entries, { devices, startMs: Number.isNaN(startMs) ? 0 : startMs });
  return { ...out, lost: entries[0]?.seq ?? 0, divergences: r.divergences.length };
}
