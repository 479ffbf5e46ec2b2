/**
 * Multicast for the simulated rdma_cm (rdma_join_multicast, verbs/cm.ts; the calls are in
 * sim/cm-join.ts): the two tables the kernel keeps, and the rule a datagram to a group follows
 * (sim/RXE-FACTS.md §10.5). Kept free of the CM's imports: the wire (world.ts) reads it.
 *
 * - Which netdevs are members of an IPv4 group: rdma_cm's join on RoCEv2 makes the id's netdev
 *   join it (cma_igmp_send → ip_mc_inc_group, counted), its leave drops one membership. Only a
 *   member netdev takes the group's packets in: the other device's (over the veth pair) and the
 *   sender's own (the IP stack loops multicast back to a member sender).
 * - Which QPs of a device are attached to a group (rxe_mcast, ibv_attach_mcast): librdmacm
 *   attaches id.qp when it hands out MULTICAST_JOIN and detaches it in rdma_leave_multicast.
 *   Attaching twice is one attachment; a QP attached anywhere cannot be destroyed (EBUSY).
 */
import type { SimDevice } from "./device.js";
import { formatGid, isV4Mapped } from "./gid.js";
import type { SimQp } from "./qp.js";

/** rdma_is_multicast_addr: ff00::/8, or an IPv4-mapped 224.0.0.0/4 address. */
export function isMulticastGid(g: Uint8Array): boolean {
  return g[0] === 0xff || (isV4Mapped(g) && (g[12]! & 0xf0) === 0xe0);
}

/** An IPv4 address (its 4 bytes) of 224.0.0.0/4. */
export function isMulticastIp(ip: number[]): boolean {
  return (ip[0]! & 0xf0) === 0xe0;
}

/** The multicast memberships and attachments of one simulated world. */
export class McastGroups {
  /** Per device: group GID text → memberships of its netdev. */
  private members = new Map<SimDevice, Map<string, number>>();
  /** Per group GID text: the QPs attached to it (each on its own device). */
  private attached = new Map<string, Set<SimQp>>();

  /** The device's netdev joins the group once more (ip_mc_inc_group). */
  join(dev: SimDevice, mgid: Uint8Array): void {
    let m = this.members.get(dev);
    if (!m) this.members.set(dev, (m = new Map()));
    const k = formatGid(mgid);
    m.set(k, (m.get(k) ?? 0) + 1);
  }

  /** One membership fewer (ip_mc_dec_group). */
  leave(dev: SimDevice, mgid: Uint8Array): void {
    const m = this.members.get(dev);
    const k = formatGid(mgid);
    const n = m?.get(k) ?? 0;
    if (n <= 1) m?.delete(k);
    else m!.set(k, n - 1);
  }

  /** Whether the device's netdev takes this group's packets in. */
  isMember(dev: SimDevice, mgid: Uint8Array): boolean {
    return (this.members.get(dev)?.get(formatGid(mgid)) ?? 0) > 0;
  }

  /** ibv_attach_mcast (rxe_attach_mcast: attaching an attached QP again changes nothing). */
  attach(qp: SimQp, mgid: Uint8Array): void {
    const k = formatGid(mgid);
    let s = this.attached.get(k);
    if (!s) this.attached.set(k, (s = new Set()));
    s.add(qp);
  }

  /** ibv_detach_mcast (librdmacm ignores its result: detaching a detached QP is harmless here). */
  detach(qp: SimQp, mgid: Uint8Array): void {
    this.attached.get(formatGid(mgid))?.delete(qp);
  }

  /** The QPs of `dev` attached to the group, in attach order (rxe_rcv_mcast_pkt's list). */
  qpsOn(dev: SimDevice, mgid: Uint8Array): SimQp[] {
    return [...(this.attached.get(formatGid(mgid)) ?? [])].filter((q) => q.device === dev && !q.destroyed);
  }

  /** How many groups the QP is attached to (ib_uverbs refuses to destroy it while > 0). */
  attachments(qp: SimQp): number {
    let n = 0;
    for (const s of this.attached.values()) if (s.has(qp)) n++;
    return n;
  }
}
