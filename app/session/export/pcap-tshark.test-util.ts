/**
 * Decoding pcap files with Debian's tshark (for the pcap tests; Node only): one row per frame,
 * the fields by Wireshark's names. The tests skip, saying why, where tshark is not installed.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The fields the tests read, by Wireshark's display-filter names. */
export const TSHARK_FIELDS = [
  "eth.src",
  "eth.dst",
  "eth.type",
  "ip.src",
  "ip.dst",
  "ip.dsfield",
  "ip.flags.df",
  "ip.ttl",
  "ip.checksum.status",
  "ipv6.src",
  "ipv6.dst",
  "ipv6.tclass",
  "ipv6.flow",
  "ipv6.hlim",
  "udp.srcport",
  "udp.dstport",
  "udp.length",
  "udp.checksum",
  "infiniband.bth.opcode",
  "infiniband.bth.se",
  "infiniband.bth.m",
  "infiniband.bth.padcnt",
  "infiniband.bth.tver",
  "infiniband.bth.p_key",
  "infiniband.bth.destqp",
  "infiniband.bth.a",
  "infiniband.bth.psn",
  "infiniband.aeth.syndrome",
  "infiniband.aeth.msn",
  "infiniband.reth.va",
  "infiniband.reth.r_key",
  "infiniband.reth.dmalen",
  "infiniband.immdt",
  "infiniband.deth.q_key",
  "infiniband.deth.srcqp",
  "infiniband.invariant.crc",
  "frame.len",
] as const;

export type TsharkField = (typeof TSHARK_FIELDS)[number];
export type TsharkRow = Record<TsharkField, string>;

/** Why tshark cannot be used here, or null when it can. */
export function tsharkMissing(): string | null {
  try {
    execFileSync("tshark", ["--version"], { stdio: "ignore" });
    return null;
  } catch {
    return "tshark is not installed (apt-get install tshark)";
  }
}

/** Decodes a pcap file's bytes: one row per frame, every field in TSHARK_FIELDS ("" when absent). */
export function tsharkDecode(pcap: Uint8Array): TsharkRow[] {
  // A file, not stdin: tshark refuses the socket Node gives a child as its standard input.
  const dir = mkdtempSync(join(tmpdir(), "verbslab-pcap-"));
  const file = join(dir, "decode.pcap");
  writeFileSync(file, pcap);
  const args = ["-r", file, "-n", "-o", "ip.check_checksum:TRUE", "-T", "fields", "-E", "separator=/t"];
  args.push("-E", "occurrence=f");
  for (const f of TSHARK_FIELDS) args.push("-e", f);
  let text: string;
  try {
    text = execFileSync("tshark", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((line) => {
      const cells = line.split("\t");
      return Object.fromEntries(TSHARK_FIELDS.map((f, i) => [f, cells[i] ?? ""])) as TsharkRow;
    });
}

/** The frames of a classic little-endian pcap file (what tcpdump and toPcap write). */
export function pcapFrames(pcap: Uint8Array): Uint8Array[] {
  const v = new DataView(pcap.buffer, pcap.byteOffset, pcap.byteLength);
  if (v.getUint32(0, true) !== 0xa1b2c3d4) throw new RangeError("not a little-endian microsecond pcap file");
  const frames: Uint8Array[] = [];
  for (let o = 24; o + 16 <= pcap.length;) {
    const len = v.getUint32(o + 8, true);
    frames.push(pcap.subarray(o + 16, o + 16 + len));
    o += 16 + len;
  }
  return frames;
}
