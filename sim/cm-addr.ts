/**
 * Addresses for the simulated rdma_cm: IPv4 socket addresses, which device owns an IP (its
 * RoCEv2 GID ::ffff:a.b.c.d, as rdma_translate_ip finds the netdev), the lab network
 * (10.77.0.0/24 on veth0 and veth1) and RoCE route resolution (cma_resolve_iboe_route).
 * The simulator models IPv4 only: an IPv6 address is refused with EAFNOSUPPORT (named).
 */
import type { CmPathRec, SockAddr } from "../verbs/cm.js";
import {
  IBV_GID_TYPE_ROCE_V2,
  IBV_MTU_256,
  IBV_MTU_512,
  IBV_MTU_1024,
  IBV_MTU_2048,
  IBV_MTU_4096,
} from "../verbs/constants.js";
import { fail } from "../verbs/errors.js";
import { int, obj, typeErr } from "./check.js";
import type { SimDevice } from "./device.js";
import { formatGid, v4MappedGid } from "./gid.js";
import type { SimWorld } from "./world.js";
import { because } from "../verbs/verb-failure.js";

/** An IPv4 address as its 4 bytes, and a port. */
export interface Ip4 {
  bytes: number[];
  port: number;
}

export const AF_INET = 2;
/** The lab VM's subnet: both veths carry 10.77.0.0/24 (scripts/rxe-vm/guest-job.sh). */
const LAB_NET = [10, 77, 0];
/** The kernel's ephemeral port range (ip_local_port_range), from which rdma_cm picks a free port. */
export const EPHEMERAL_LOW = 32768;
export const EPHEMERAL_HIGH = 60999;
/**
 * CMA_IBOE_PACKET_LIFETIME (Linux 6.1 cma.c; later kernels lowered it to 16): every RoCE path
 * carries packet_life_time 18 (measured, RXE-FACTS §10.1). The CM's timeouts follow from it
 * (sim/cm-protocol.ts): the QPs' ACK timeout 19, timewait 2048 ms, 6144 ms per unanswered REQ.
 */
export const IBOE_PACKET_LIFETIME = 18;
/** cma_resolve_iboe_route: rate IB_RATE_PORT_CURRENT (0), measured. */
export const IB_RATE_PORT_CURRENT = 0;
/** ip4_dst_hoplimit: the default TTL. */
export const DEFAULT_HOP_LIMIT = 64;

/** Parses a SockAddr argument; TypeError for wrong types, EINVAL/EAFNOSUPPORT for what C could pass. */
export function sockAddr(verb: string, name: string, v: unknown): Ip4 {
  const o = obj(verb, name, v);
  if (typeof o.addr !== "string") throw typeErr(verb, `${name}.addr`, "string", o.addr);
  const port = o.port === undefined ? 0 : int(verb, `${name}.port`, o.port);
  if (port < 0 || port > 0xffff)
    fail(verb, "EINVAL", because({ kind: "port-16", field: name, port }, { attribute: `${name}.port` }));
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(o.addr.trim());
  if (!m || m.slice(1, 5).some((x) => Number(x) > 255)) {
    if (o.addr.includes(":"))
      fail(
        verb,
        "EAFNOSUPPORT",
        because({ kind: "not-ipv4", field: name, addr: o.addr, ipv6: true }, { attribute: `${name}.addr` }),
      );
    fail(
      verb,
      "EINVAL",
      because({ kind: "not-ipv4", field: name, addr: o.addr, ipv6: false }, { attribute: `${name}.addr` }),
    );
  }
  return { bytes: m.slice(1, 5).map(Number), port };
}

export function ipText(ip: number[]): string {
  return ip.join(".");
}

export function toSockAddr(ip: number[], port: number): SockAddr {
  return { addr: ipText(ip), port };
}

export function isAny(ip: number[]): boolean {
  return ip.every((b) => b === 0);
}
export function isLoopback(ip: number[]): boolean {
  return ip[0] === 127;
}
/** cma_any_addr: the zero address or loopback (rdma_cm treats both as "any device"). */
export function anyOrLoopback(ip: number[]): boolean {
  return isAny(ip) || isLoopback(ip);
}
export function sameIp(a: number[], b: number[]): boolean {
  return a.every((x, i) => x === b[i]);
}
export function onLabNet(ip: number[]): boolean {
  return LAB_NET.every((x, i) => x === ip[i]);
}

/** rdma_translate_ip: the device whose netdev has this IPv4 address, or null. */
export function deviceOfIp(world: SimWorld, ip: number[]): SimDevice | null {
  const gid = v4MappedGid(ipText(ip));
  return gid ? world.findDeviceByGid(gid) : null;
}

/** rdma_ip2gid: the RoCEv2 GID of an IPv4 address. */
export function ipGid(ip: number[]): Uint8Array {
  return v4MappedGid(ipText(ip))!;
}

/** iboe_get_mtu: the netdev MTU less the largest RoCE headers, as an IBV_MTU_* value. */
export function iboeMtu(netdevMtu: number): number {
  const m = netdevMtu - (40 + 8 + 12 + 4 + 28 + 4);
  if (m >= 4096) return IBV_MTU_4096;
  if (m >= 2048) return IBV_MTU_2048;
  if (m >= 1024) return IBV_MTU_1024;
  if (m >= 512) return IBV_MTU_512;
  if (m >= 256) return IBV_MTU_256;
  return 0;
}

/** cma_get_roce_udp_flow_label for IPv4: hash of the ports. */
export function roceFlowLabel(sport: number, dport: number): number {
  return (sport * 31 + dport) & 0xfffff;
}

/** cma_resolve_iboe_route: the one path record RoCE builds from the addresses (no SA query). */
export function iboePath(dev: SimDevice, src: Ip4, dst: Ip4): CmPathRec {
  return {
    sgid: formatGid(ipGid(src.bytes)),
    dgid: formatGid(ipGid(dst.bytes)),
    pkey: 0xffff,
    mtu: iboeMtu(dev.netdevMtu),
    rate: IB_RATE_PORT_CURRENT,
    packet_life_time: IBOE_PACKET_LIFETIME,
    sl: 0,
    traffic_class: 0,
    hop_limit: DEFAULT_HOP_LIMIT,
    flow_label: roceFlowLabel(src.port, dst.port),
    gid_type: IBV_GID_TYPE_ROCE_V2,
  };
}
