/** Runs one of the pcap comparison's programs (pcap-programs/) on a fresh simulator: its transcript and live packet log. */
import { createSimBackend } from "../../../sim/index.js";
import { createSession } from "../session.js";
import type { Transcript } from "../transcript.js";
import type { Verbs } from "../verbs-api.js";
import type { PacketLogEntry } from "../../../verbs/backend.js";
import lossy from "./pcap-programs/lossy.js";
import read from "./pcap-programs/read.js";
import rnrRetry from "./pcap-programs/rnr-retry.js";
import send from "./pcap-programs/send.js";
import writeImm from "./pcap-programs/write-imm.js";

/** The programs, by file name in pcap-programs/ (each crosses rxe0 ↔ rxe1, so real rxe's packets can be captured). */
export const PCAP_PROGRAMS = { send, "write-imm": writeImm, "rnr-retry": rnrRetry, read, lossy } as const;
export type PcapProgram = keyof typeof PCAP_PROGRAMS;

export async function runOnSim(
  name: PcapProgram,
): Promise<{ transcript: Transcript; packets: readonly PacketLogEntry[]; macs: Record<string, string> }> {
  const backend = createSimBackend({ seed: 1, packetLog: true });
  const session = createSession({ backend, seed: 1, program: `${name}.ts` });
  const r = await session.run((v: Verbs) => PCAP_PROGRAMS[name](v));
  if (r.outcome !== "ok") throw new Error(`${name}.ts failed on the simulator: ${String(r.error)}`);
  const macs = { rxe0: backend.netdev("rxe0").mac, rxe1: backend.netdev("rxe1").mac };
  return { transcript: session.transcript(), packets: backend.packets, macs };
}
