/**
 * The simulator's packets against real rxe's, for the same programs (pcap-programs/: a SEND, a
 * WRITE with immediate, an RNR retry, a READ, a lossy run), both decoded by tshark: the same
 * packets in the same order, field for field (SAME), except what the simulator cannot know,
 * which must map one to one (MAPPED):
 * - MACs and IPv6 link-local addresses: the lab VM's veths get random MACs at each boot, and
 *   the link-local GIDs (and so addresses) are made from them;
 * - QPNs, and the UDP source port derived from them: rxe's QPNs go on rising through a boot
 *   (0x11 for the first program's pair, 0x14 for the fourth's), the simulator's start afresh
 *   (the port is checked against rxe's own QPNs below);
 * - rkeys and virtual addresses: the kernel's key counter and the program's heap;
 * - not compared: the IPv4 identification (the kernel's per-destination counter) and the IPv4
 *   checksum, which covers it; the ICRC, likewise (checked on rxe's own frames below instead).
 * The lossy run drops one chosen packet (`dropPsn`), so both runs lose the same one: an
 * nftables rule drops it at the receiver's input, after tcpdump on veth0 saw it, so it is in
 * the capture as in the simulator's file. (Random `loss` could not be compared like this, and
 * netem drops in the sender's qdisc, before any capture: such a packet is in neither file.)
 * Real rxe's packets come from tcpdump on the lab VM's veth0 (scripts/pcap-rxe.sh, which then
 * runs this file on the host on those fresh captures); otherwise it reads the captures
 * committed in fixtures/pcap/ (VERBSLAB_PCAP_RXE_DIR: another folder).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { rxeUdpSourcePort } from "../../../sim/packets.js";
import { frameIcrc } from "./pcap.js";
import { createSimBackend } from "../../../sim/index.js";
import { transcriptPcap } from "./pcap-replay.js";
import { PCAP_PROGRAMS, runOnSim, type PcapProgram } from "./pcap-sim-run.test-util.js";
import { pcapFrames, tsharkDecode, tsharkMissing, type TsharkField, type TsharkRow } from "./pcap-tshark.test-util.js";

const dir = process.env.VERBSLAB_PCAP_RXE_DIR ?? fileURLToPath(new URL("./fixtures/pcap/", import.meta.url));

/** Fields the simulator must reproduce exactly. */
const SAME: TsharkField[] = [
  "eth.type",
  "ip.src",
  "ip.dst",
  "ip.dsfield",
  "ip.flags.df",
  "ip.ttl",
  "ipv6.tclass",
  "ipv6.flow",
  "ipv6.hlim",
  "udp.dstport",
  "udp.length",
  "udp.checksum",
  "infiniband.bth.opcode",
  "infiniband.bth.se",
  "infiniband.bth.m",
  "infiniband.bth.padcnt",
  "infiniband.bth.tver",
  "infiniband.bth.p_key",
  "infiniband.bth.a",
  "infiniband.bth.psn",
  "infiniband.aeth.syndrome",
  "infiniband.aeth.msn",
  "infiniband.reth.dmalen",
  "infiniband.immdt",
  "infiniband.deth.q_key",
  "frame.len",
];
/** Fields whose values differ between the two machines but must correspond one to one. */
const MAPPED: TsharkField[] = [
  "eth.src",
  "eth.dst",
  "ipv6.src",
  "ipv6.dst",
  "udp.srcport",
  "infiniband.bth.destqp",
  "infiniband.reth.va",
  "infiniband.reth.r_key",
  "infiniband.deth.srcqp",
];

/** Both ways consistent: each rxe value stands for one sim value and back. */
function expectOneToOne(sim: TsharkRow[], rxe: TsharkRow[], field: TsharkField): void {
  const there = new Map<string, string>();
  const back = new Map<string, string>();
  rxe.forEach((r, i) => {
    const a = r[field];
    const b = sim[i]![field];
    expect(a === "", `${field} of packet ${i + 1}: present on rxe (${a}) iff in the sim (${b})`).toBe(b === "");
    if (a === "") return;
    expect(there.get(a) ?? b, `${field} of packet ${i + 1}: rxe's ${a} stood for the sim's ${there.get(a)}`).toBe(b);
    expect(back.get(b) ?? a, `${field} of packet ${i + 1}: the sim's ${b} stood for rxe's ${back.get(b)}`).toBe(a);
    there.set(a, b);
    back.set(b, a);
  });
}

/**
 * Drops repeats of a request answered by an RNR NAK (the same request and the same NAK again):
 * how many rounds happen depends on when, in real time, the program posts the receive (on a
 * loaded VM the post came 2.4 s after the SEND: five rounds of rxe1's 491.52 ms wait).
 */
function collapseRnrRounds(rows: TsharkRow[]): { rows: TsharkRow[]; extra: number } {
  const key = (r: TsharkRow) =>
    `${r["infiniband.bth.opcode"]}/${r["infiniband.bth.psn"]}/${r["infiniband.aeth.syndrome"]}`;
  const isRnr = (r: TsharkRow | undefined) => !!r && (Number(r["infiniband.aeth.syndrome"]) & 0xe0) === 0x20;
  const out: TsharkRow[] = [];
  let extra = 0;
  for (let i = 0; i < rows.length; i++) {
    const [a, b] = [rows[i]!, rows[i + 1]];
    const prev = out.length >= 2 ? [out[out.length - 2]!, out[out.length - 1]!] : null;
    if (isRnr(b) && prev && key(prev[0]) === key(a) && key(prev[1]) === key(b!)) {
      extra++;
      i++;
      continue;
    }
    out.push(a);
  }
  return { rows: out, extra };
}

const missing = tsharkMissing();

describe.skipIf(missing !== null)(
  `the simulator's packets vs real rxe's${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    for (const name of Object.keys(PCAP_PROGRAMS) as PcapProgram[])
      it(`${name}.ts: the same packets in the same order, field for field`, async () => {
        const rxeBytes = new Uint8Array(readFileSync(join(dir, `${name}.rxe.pcap`)));
        const rxeAll = collapseRnrRounds(tsharkDecode(rxeBytes));
        const rxe = rxeAll.rows;
        if (rxeAll.extra) console.info(`${name}: rxe repeated a request and its RNR NAK ${rxeAll.extra} more time(s)`);
        const { transcript } = await runOnSim(name);
        const simPcap = await transcriptPcap(transcript, createSimBackend({ seed: 1 }));
        const simAll = collapseRnrRounds(tsharkDecode(simPcap.bytes));
        expect(simAll.extra, "the simulator posts the receive within the first RNR wait").toBe(0);
        const sim = simAll.rows;
        const ops = (rows: TsharkRow[]) => rows.map((r) => r["infiniband.bth.opcode"]).join(" ");
        expect(ops(sim), "the opcodes in order").toBe(ops(rxe));
        rxe.forEach((r, i) => {
          for (const f of SAME)
            expect(sim[i]![f], `${f} of packet ${i + 1} (${r["infiniband.bth.opcode"]})`).toBe(r[f]);
        });
        for (const f of MAPPED) expectOneToOne(sim, rxe, f);
        // rxe's UDP source port is the one the simulator would pick for rxe's own QP numbers
        // (a connected pair: each direction's dest QP is the other's QP).
        const qpns = [...new Set(rxe.map((r) => Number(r["infiniband.bth.destqp"])))];
        const [qa, qb] = qpns.length === 1 ? [qpns[0]!, qpns[0]!] : qpns;
        for (const r of rxe)
          expect(Number(r["udp.srcport"])).toBe(rxeUdpSourcePort(qa!, { flowLabel: 0, destQpNum: qb! }));
        // rxe's ICRC is the one the exporter computes for the same bytes.
        for (const f of pcapFrames(rxeBytes)) expect(Array.from(f.subarray(-4))).toEqual(Array.from(frameIcrc(f)));
      });
  },
);
