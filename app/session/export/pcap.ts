/**
 * The packet log as a classic pcap file (LINKTYPE_ETHERNET) that Wireshark and tshark open:
 * each packet as rxe puts it on the wire, Ethernet / IPv4 or IPv6 (by the GIDs used) / UDP to
 * 4791 / BTH and the extension headers its opcode carries (DETH, RETH, AtomicETH, AETH,
 * AtomicAckETH, ImmDt), the payload, its pad and the ICRC.
 *
 * What rxe does and this follows (rxe_net.c, rxe_hdr.h, rxe_icrc.c; checked against tcpdump on
 * the lab VM's veth pair, app/session/export/pcap-rxe.test.ts): IPv4 with DF set, TOS =
 * the AV's traffic class, TTL = its hop limit (64), UDP checksum 0, BTH P_Key 0xffff, MigReq
 * and TVer 0, and the ICRC computed as rxe does (CRC-32 over the masked headers and payload).
 *
 * What it cannot know: the payload bytes (the log keeps lengths, not data: they are zeros,
 * and the ICRC is computed over those zeros) and the IPv4 identification (rxe takes it from
 * the kernel's per-destination counters: here each pair of addresses counts from 0).
 * A packet that never left its device (no `ip` in its entry: no route, link down) is left
 * out; `skipped` counts those.
 *
 * Pure and browser-safe: entries in, bytes out.
 */
import type { PacketLogEntry } from "../../../verbs/backend.js";

/** What the pcap needs to know of each device beyond the log: its netdev's MAC ("02:1a:…"). */
export interface PcapDevices {
  [device: string]: { mac: string };
}

export interface PcapOptions {
  /** The devices named by the entries' `src`/`dst`, with their MACs. */
  devices: PcapDevices;
  /** Wall time (ms since the epoch) of the log's time 0; each packet is stamped with it plus its `time`. Default 0. */
  startMs?: number;
}

export interface PcapResult {
  /** The .pcap file. */
  bytes: Uint8Array;
  /** Packets written. */
  packets: number;
  /** Log entries left out: packets that never went on a wire (no `ip` layer). */
  skipped: number;
}

const LINKTYPE_ETHERNET = 1;
/** ROCE_V2_UDP_DPORT: every RoCE v2 packet goes to this UDP port. */
const ROCE_V2_UDP_DPORT = 4791;
const ETH_P_IP = 0x0800;
const ETH_P_IPV6 = 0x86dd;
const IPPROTO_UDP = 17;
const BTH_BYTES = 12;
const ICRC_BYTES = 4;
/** IB_DEFAULT_PKEY_FULL: the P_Key rxe puts in every BTH. */
const PKEY_FULL = 0xffff;

/** The bytes of a GID in IPv6 text (as the log writes it; `::ffff:a.b.c.d` for IPv4). */
export function gidBytes(text: string): Uint8Array {
  const out = new Uint8Array(16);
  let s = text;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (v4) {
    out.set(v4.slice(1).map(Number), 12);
    s = s.slice(0, v4.index) + "0:0";
  }
  const [head, tail] = s.includes("::") ? s.split("::") : [s, undefined];
  const words = (x: string | undefined) => (x ? x.split(":").filter((w) => w !== "") : []);
  const h = words(head);
  const t = tail === undefined ? [] : words(tail);
  const all = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t];
  if (all.length !== 8 || all.some((w) => !/^[0-9a-f]{1,4}$/i.test(w)))
    throw new RangeError(`not a GID (IPv6 text): ${JSON.stringify(text)}`);
  all.forEach((w, i) => {
    if (v4 && i >= 6) return;
    const n = parseInt(w, 16);
    out[2 * i] = n >> 8;
    out[2 * i + 1] = n & 0xff;
  });
  return out;
}

function isV4Mapped(g: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (g[i] !== 0) return false;
  return g[10] === 0xff && g[11] === 0xff;
}

function macBytes(mac: string | undefined): Uint8Array {
  const parts = mac?.split(":") ?? [];
  if (parts.length !== 6 || parts.some((p) => !/^[0-9a-f]{2}$/i.test(p)))
    throw new RangeError(`not a MAC address: ${JSON.stringify(mac)}`);
  return Uint8Array.from(parts, (p) => parseInt(p, 16));
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** crc32_le (the kernel's): no inversion in or out. */
function crc32le(crc: number, b: Uint8Array): number {
  let c = crc;
  for (let i = 0; i < b.length; i++) c = CRC_TABLE[(c ^ b[i]!) & 0xff]! ^ (c >>> 8);
  return c >>> 0;
}

/**
 * The ICRC of an Ethernet frame holding a RoCE v2 packet, as rxe_icrc_generate computes it:
 * CRC-32 over 8 bytes of 0xff (the masked LRH), the IP and UDP headers with their variant
 * fields set to ones (IPv4 TOS, TTL, checksum; IPv6 traffic class, flow label, hop limit; UDP
 * checksum), the BTH with its reserved byte set to ones, then the rest up to the ICRC; stored
 * inverted and little-endian, as rxe's `*icrcp = ~icrc` does on x86. The frame's last 4 bytes
 * (the ICRC's place) are not read.
 */
export function frameIcrc(frame: Uint8Array): Uint8Array {
  const v4 = ((frame[12]! << 8) | frame[13]!) === ETH_P_IP;
  const ipLen = v4 ? 20 : 40;
  const b = frame.slice(14, frame.length - ICRC_BYTES);
  if (v4) {
    b[1] = 0xff; // TOS
    b[8] = 0xff; // TTL
    b[10] = b[11] = 0xff; // header checksum
  } else {
    b[0]! |= 0x0f; // the traffic class's first nibble
    b[1] = b[2] = b[3] = 0xff; // the rest of the traffic class, the flow label
    b[7] = 0xff; // hop limit
  }
  b[ipLen + 6] = b[ipLen + 7] = 0xff; // UDP checksum
  b[ipLen + 8 + 4] = 0xff; // BTH resv8a (the byte before the destination QP)
  const c = ~crc32le(crc32le(0xffffffff, new Uint8Array(8).fill(0xff)), b) >>> 0;
  return Uint8Array.of(c & 0xff, (c >>> 8) & 0xff, (c >>> 16) & 0xff, c >>> 24);
}

/** The IB transport part (BTH, extension headers, payload, pad, ICRC room) of one packet. */
function transport(e: PacketLogEntry): Uint8Array {
  const opcode = e.bth_opcode;
  if (opcode === undefined || !Number.isInteger(opcode) || opcode < 0 || opcode > 0xff)
    throw new RangeError(`packet ${e.seq} (${e.opcode}): no BTH opcode byte in the log entry`);
  // The extension headers are the ones the entry holds: the log writes each exactly when the
  // opcode carries it (rxe's header masks), in the order the BTH is followed by them.
  const pad = -e.payload_len & 3;
  let ext = 0;
  if (e.deth) ext += 8;
  if (e.reth) ext += 16;
  if (e.atomic_eth) ext += 28;
  if (e.aeth) ext += 4;
  if (e.atomic_ack_eth) ext += 8;
  if (e.imm_data !== undefined) ext += 4;
  const b = new Uint8Array(BTH_BYTES + ext + e.payload_len + pad + ICRC_BYTES);
  const v = new DataView(b.buffer);
  // bth_init: opcode; SE, MigReq (0), pad count, TVer (0); P_Key; resv8a; dest QP; AckReq, PSN.
  b[0] = opcode;
  b[1] = (e.solicited ? 0x80 : 0) | (pad << 4);
  v.setUint16(2, PKEY_FULL);
  v.setUint32(4, e.dest_qpn & 0xffffff);
  v.setUint32(8, ((e.ack_req ? 0x80000000 : 0) | (e.psn & 0xffffff)) >>> 0);
  let o = BTH_BYTES;
  if (e.deth) {
    v.setUint32(o, e.deth.qkey);
    v.setUint32(o + 4, e.deth.src_qpn & 0xffffff);
    o += 8;
  }
  if (e.reth) {
    v.setBigUint64(o, BigInt(e.reth.va));
    v.setUint32(o + 8, e.reth.rkey);
    v.setUint32(o + 12, e.reth.len);
    o += 16;
  }
  if (e.atomic_eth) {
    const a = e.atomic_eth;
    v.setBigUint64(o, BigInt(a.va));
    v.setUint32(o + 8, a.rkey);
    v.setBigUint64(o + 12, BigInt.asUintN(64, a.swap_add));
    v.setBigUint64(o + 20, BigInt.asUintN(64, a.compare));
    o += 28;
  }
  if (e.aeth) {
    v.setUint32(o, ((e.aeth.syndrome << 24) | (e.aeth.msn & 0xffffff)) >>> 0);
    o += 4;
  }
  if (e.atomic_ack_eth) {
    v.setBigUint64(o, BigInt.asUintN(64, e.atomic_ack_eth.orig));
    o += 8;
  }
  // imm_data is a __be32 in struct ibv_send_wr: rxe copies its bytes to the wire as they are in
  // memory, so the number a program stores there goes out little-endian on x86 (measured: imm_data
  // 0x12345678 is 78 56 34 12 in the ImmDt of rxe's packet).
  if (e.imm_data !== undefined) v.setUint32(o, e.imm_data >>> 0, true);
  return b;
}

/** Renders packet-log entries as a pcap file. Throws RangeError naming the entry for an unknown opcode, GID or device. */
export function toPcap(entries: readonly PacketLogEntry[], options: PcapOptions): PcapResult {
  const frames: Uint8Array[] = [];
  const ipIds = new Map<string, number>();
  let skipped = 0;
  const head = new Uint8Array(24);
  const hv = new DataView(head.buffer);
  hv.setUint32(0, 0xa1b2c3d4, true); // microsecond timestamps, written little-endian
  hv.setUint16(4, 2, true);
  hv.setUint16(6, 4, true);
  hv.setUint32(16, 262144, true); // snaplen
  hv.setUint32(20, LINKTYPE_ETHERNET, true);
  frames.push(head);
  const mac = (name: string, seq: number) => {
    const d = options.devices[name];
    if (!d) throw new RangeError(`packet ${seq}: no MAC for device ${JSON.stringify(name)}`);
    return macBytes(d.mac);
  };
  for (const e of entries) {
    if (!e.ip || e.dst === "?") {
      skipped++;
      continue;
    }
    const sgid = gidBytes(e.ip.sgid);
    const dgid = gidBytes(e.ip.dgid);
    const v4 = isV4Mapped(sgid) && isV4Mapped(dgid);
    const ib = transport(e);
    const udpLen = 8 + ib.length;
    const udp = new Uint8Array(udpLen);
    const uv = new DataView(udp.buffer);
    uv.setUint16(0, e.ip.udp_sport);
    uv.setUint16(2, ROCE_V2_UDP_DPORT);
    uv.setUint16(4, udpLen);
    // udph->check = 0: rxe sends no UDP checksum (the ICRC covers the packet).
    udp.set(ib, 8);
    let ip: Uint8Array;
    if (v4) {
      const key = `${e.ip.sgid}>${e.ip.dgid}`;
      const id = ipIds.get(key) ?? 0;
      ipIds.set(key, (id + 1) & 0xffff);
      ip = new Uint8Array(20);
      const iv = new DataView(ip.buffer);
      ip[0] = 0x45;
      ip[1] = e.ip.traffic_class & 0xff;
      iv.setUint16(2, 20 + udpLen);
      iv.setUint16(4, id);
      iv.setUint16(6, 0x4000); // DF
      ip[8] = e.ip.hop_limit & 0xff;
      ip[9] = IPPROTO_UDP;
      ip.set(sgid.subarray(12), 12);
      ip.set(dgid.subarray(12), 16);
      let sum = 0;
      for (let i = 0; i < 20; i += 2) sum += iv.getUint16(i);
      while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
      iv.setUint16(10, ~sum & 0xffff);
    } else {
      ip = new Uint8Array(40);
      const iv = new DataView(ip.buffer);
      // ip6_flow_hdr(ip6h, traffic_class, 0): version 6, the traffic class, flow label 0.
      iv.setUint32(0, ((6 << 28) | ((e.ip.traffic_class & 0xff) << 20)) >>> 0);
      iv.setUint16(4, udpLen);
      ip[6] = IPPROTO_UDP;
      ip[7] = e.ip.hop_limit & 0xff;
      ip.set(sgid, 8);
      ip.set(dgid, 24);
    }
    const frame = new Uint8Array(14 + ip.length + udpLen);
    frame.set(mac(e.dst, e.seq), 0);
    frame.set(mac(e.src, e.seq), 6);
    new DataView(frame.buffer).setUint16(12, v4 ? ETH_P_IP : ETH_P_IPV6);
    frame.set(ip, 14);
    frame.set(udp, 14 + ip.length);
    frame.set(frameIcrc(frame), frame.length - ICRC_BYTES);
    const rec = new Uint8Array(16);
    const rv = new DataView(rec.buffer);
    const us = Math.round(((options.startMs ?? 0) + e.time) * 1000);
    rv.setUint32(0, Math.floor(us / 1e6), true);
    rv.setUint32(4, us % 1e6, true);
    rv.setUint32(8, frame.length, true);
    rv.setUint32(12, frame.length, true);
    frames.push(rec, frame);
  }
  const total = frames.reduce((n, f) => n + f.length, 0);
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const f of frames) {
    bytes.set(f, at);
    at += f.length;
  }
  return { bytes, packets: (frames.length - 1) / 2, skipped };
}
