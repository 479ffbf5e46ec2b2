/**
 * GIDs as 16 bytes and as IPv6 text (what `ibv_devinfo -v` prints), plus the MAC → EUI-64
 * rule rxe uses for the node GUID and the link-local GID.
 */

/** Parses IPv6 text ("fe80::1", "::ffff:10.77.0.1") into 16 bytes; null when malformed. */
export function parseGid(text: string): Uint8Array | null {
  if (typeof text !== "string" || text.length > 45) return null;
  let s = text.trim().toLowerCase();
  const out = new Uint8Array(16);
  let tailV4: number[] | null = null;
  const v4 = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (v4) {
    tailV4 = [v4[2], v4[3], v4[4], v4[5]].map(Number);
    if (tailV4.some((n) => n > 255)) return null;
    s = v4[1] + "0:0";
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string): number[] | null => {
    if (part === "") return [];
    const groups = part.split(":");
    const vals: number[] = [];
    for (const g of groups) {
      if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
      vals.push(parseInt(g, 16));
    }
    return vals;
  };
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  if (!head || !tail) return null;
  if (halves.length === 1 && head.length !== 8) return null;
  if (halves.length === 2 && head.length + tail.length > 7) return null;
  const groups = [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail];
  for (let i = 0; i < 8; i++) {
    out[2 * i] = groups[i] >> 8;
    out[2 * i + 1] = groups[i] & 0xff;
  }
  if (tailV4) out.set(tailV4, 12);
  return out;
}

/** True for ::ffff:a.b.c.d (a RoCEv2 GID of an IPv4 address). */
export function isV4Mapped(g: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (g[i] !== 0) return false;
  return g[10] === 0xff && g[11] === 0xff;
}

/** Formats 16 bytes as canonical IPv6 text (RFC 5952, IPv4-mapped as ::ffff:a.b.c.d). */
export function formatGid(g: Uint8Array): string {
  if (isV4Mapped(g)) return `::ffff:${g[12]}.${g[13]}.${g[14]}.${g[15]}`;
  const groups: number[] = [];
  for (let i = 0; i < 8; i++) groups.push((g[2 * i] << 8) | g[2 * i + 1]);
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((n) => n.toString(16));
  if (bestStart < 0) return hex.join(":");
  const left = hex.slice(0, bestStart).join(":");
  const right = hex.slice(bestStart + bestLen).join(":");
  return `${left}::${right}`;
}

export function gidEquals(a: Uint8Array, b: Uint8Array): boolean {
  if (a === b) return true;
  for (let i = 0; i < 16; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function isZeroGid(g: Uint8Array): boolean {
  for (let i = 0; i < 16; i++) if (g[i] !== 0) return false;
  return true;
}

/** MAC (6 bytes) → EUI-64 (8 bytes): flip the universal/local bit and insert ff:fe. */
export function eui64(mac: Uint8Array): Uint8Array {
  return Uint8Array.of(mac[0] ^ 2, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]);
}

/** An EUI-64 as ibv_devinfo prints a GUID: "xxxx:xxxx:xxxx:xxxx". */
export function formatGuid(e: Uint8Array): string {
  const h = Array.from(e, (b) => b.toString(16).padStart(2, "0"));
  return `${h[0]}${h[1]}:${h[2]}${h[3]}:${h[4]}${h[5]}:${h[6]}${h[7]}`;
}

/** The fe80::/64 link-local GID for a MAC. */
export function linkLocalGid(mac: Uint8Array): Uint8Array {
  const g = new Uint8Array(16);
  g[0] = 0xfe;
  g[1] = 0x80;
  g.set(eui64(mac), 8);
  return g;
}

/** ::ffff:a.b.c.d for an IPv4 address given as text. */
export function v4MappedGid(ipv4: string): Uint8Array | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ipv4);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((n) => n > 255)) return null;
  const g = new Uint8Array(16);
  g[10] = 0xff;
  g[11] = 0xff;
  g.set(parts, 12);
  return g;
}

/**
 * The 40 bytes rxe writes at the start of a UD receive buffer (`union rdma_network_hdr`):
 * for IPv4 GIDs 20 zero bytes and then the IPv4 header; for IPv6 GIDs the IPv6 header.
 * `udpPayload` is the length of the BTH+DETH+payload+ICRC carried in UDP.
 */
export function buildGrh(sgid: Uint8Array, dgid: Uint8Array, roceLength: number, ipId: number): Uint8Array {
  const h = new Uint8Array(40);
  const udpLen = 8 + roceLength;
  if (isV4Mapped(sgid) && isV4Mapped(dgid)) {
    const ip = h.subarray(20);
    const total = 20 + udpLen;
    ip[0] = 0x45;
    ip[1] = 0;
    ip[2] = total >> 8;
    ip[3] = total & 0xff;
    ip[4] = (ipId >> 8) & 0xff;
    ip[5] = ipId & 0xff;
    ip[6] = 0x40; // DF
    ip[7] = 0;
    ip[8] = 64; // TTL
    ip[9] = 17; // UDP
    ip.set(sgid.subarray(12, 16), 12);
    ip.set(dgid.subarray(12, 16), 16);
    let sum = 0;
    for (let i = 0; i < 20; i += 2) sum += (ip[i] << 8) | ip[i + 1];
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
    const csum = ~sum & 0xffff;
    ip[10] = csum >> 8;
    ip[11] = csum & 0xff;
  } else {
    h[0] = 0x60;
    h[4] = udpLen >> 8;
    h[5] = udpLen & 0xff;
    h[6] = 17;
    h[7] = 64;
    h.set(sgid, 8);
    h.set(dgid, 24);
  }
  return h;
}
