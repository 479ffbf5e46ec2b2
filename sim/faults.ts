/**
 * Faults on the simulated wire (verbs/lab.ts), as the lab VM's veth pair has them: what
 * `tc netem` on each veth's egress (loss, delay, reorder), each netdev's MTU and the nftables
 * rules dropping UDP 4791 or the first packet with a chosen PSN do to a packet going from one device to the other. A device's
 * packets to itself never meet them: rxe loops those back inside itself, and the veth pair
 * never sees them (sim/RXE-FACTS.md §11). Random draws come from their own seeded generator,
 * so a run with faults is as reproducible as one without, and faults perturb nothing else.
 *
 * The recovery from a lost packet is not here: the responder's PSN checks (out_of_seq NAKs,
 * duplicates) and the requester's retransmit timer do it, as rxe's go-back-N does.
 */
import type { LinkFault } from "../verbs/wc-reason.js";
import { CLEAN_LINK, copyLink, type LinkState, type WireModel } from "../verbs/lab.js";
import type { SimDevice } from "./device.js";
import { isV4Mapped } from "./gid.js";
import { M_AETH, M_ATMACK, M_ATMETH, M_DETH, M_IMMDT, M_RETH, type Packet } from "./packets.js";
import { Rng } from "./rng.js";
import { Timer, type Clock } from "./clock.js";

/** Bytes rxe puts around a payload: BTH and ICRC, then UDP and the IP header (IPv4-mapped GIDs: IPv4). */
const BTH = 12;
const ICRC = 4;
const UDP = 8;
const IPV4 = 20;
const IPV6 = 40;
/** A veth forwards a frame up to its peer's MTU plus a VLAN tag (is_skb_forwardable). */
const VLAN_HLEN = 4;

/** The IP datagram's length for one packet, as rxe builds it (rxe_init_packet, rxe_prepare). */
export function ipLength(p: Packet): number {
  const m = p.mask;
  let n = BTH + ICRC + UDP + (isV4Mapped(p.dgid) ? IPV4 : IPV6);
  if (m & M_RETH) n += 16;
  if (m & M_AETH) n += 4;
  if (m & M_DETH) n += 8;
  if (m & M_IMMDT) n += 4;
  if (m & M_ATMETH) n += 28;
  if (m & M_ATMACK) n += 8;
  return n + ((p.payloadLen + 3) & ~3);
}

/**
 * How soon a requester whose packet its own IP layer refused tries again. rxe re-runs the task
 * at once, as fast as the CPU goes (measured in the lab VM: ~1,400 tries a second, each a
 * send_err); the simulator's clock needs a step, and 1 ms keeps the counter's rise comparable.
 */
export const SEND_AGAIN_MS = 1;

/**
 * Where a faulted packet goes: delivered now, later (ms), or dropped (why). `offWire`: dropped
 * by netem in the sender's qdisc, before any capture on the link could see it (tcpdump taps a
 * veth after its qdisc), so the packet log keeps it without the IP layer it never went out in.
 */
export type Fate = { fault: LinkFault; offWire?: boolean } | { delayMs: number } | null;

/** The lab link's faults and the packets netem is holding back. */
export class WireFaults {
  /** The link without faults: the devices' own netdev MTUs (the profile's) and wire model, nothing else. */
  clean: LinkState = copyLink(CLEAN_LINK);
  state: LinkState = copyLink(CLEAN_LINK);
  /** True when some fault can touch a packet between the devices: the fast paths stand aside then. */
  active = false;
  /** True while `dropPsn`'s one drop has not happened yet (the nftables rule's set is empty). */
  private dropArmed = false;
  private readonly rng: Rng;
  /** Packets waiting out `delay`, with their timers (dropped if the qdisc goes, as `tc qdisc del` does). */
  private held = new Set<Timer>();
  /** Per QP, the timer of its requester's next try after a refused send (sendAgain). */
  private retries = new WeakMap<object, Timer>();

  /** Starts from `clean` (createSimBackend, once the devices exist): their MTUs, the backend's wire model. */
  init(rxe0: SimDevice, rxe1: SimDevice, wire: WireModel): void {
    this.clean = { ...copyLink(CLEAN_LINK), mtu: { rxe0: rxe0.netdevMtu, rxe1: rxe1.netdevMtu }, wire };
    this.state = copyLink(this.clean);
  }

  constructor(seed: number) {
    // Its own stream: the world's generator keeps giving the same keys and addresses.
    this.rng = new Rng((seed ^ 0x5eed_fa17) >>> 0);
  }

  /** Takes the new state: the devices' netdev MTUs follow it (and rxe's active_mtu with them). */
  set(next: LinkState, rxe0: SimDevice, rxe1: SimDevice, clock: Clock, dropHeld: (p: Packet) => void): void {
    const netemOff = next.loss === 0 && next.delay === 0 && next.reorder === 0;
    if (netemOff && this.held.size) {
      for (const t of this.held) {
        clock.cancel(t);
        dropHeld((t as HeldTimer).pkt);
      }
      this.held.clear();
    }
    // A new PSN (or the rule set again after null) is a fresh rule that has dropped nothing.
    if (next.dropPsn !== this.state.dropPsn) this.dropArmed = next.dropPsn !== null;
    this.state = copyLink(next);
    rxe0.netdevMtu = next.mtu.rxe0;
    rxe1.netdevMtu = next.mtu.rxe1;
    // An MTU is a fault only where a packet can exceed it; any non-default one may, so count it.
    this.active =
      !netemOff ||
      next.blockRoceUdp ||
      next.dropPsn !== null ||
      next.mtu.rxe0 !== this.clean.mtu.rxe0 ||
      next.mtu.rxe1 !== this.clean.mtu.rxe1;
  }

  private chance(p: number): boolean {
    return p > 0 && (p >= 1 || this.rng.u32() < p * 0x1_0000_0000);
  }

  /**
   * What happens to `p` from `from` to the other device `to`, in the order the kernel meets
   * it: the MTUs, netem on the sender's veth (loss, then delay and reorder), the receiver's
   * nftables input hook (UDP 4791, then the PSN rule). The PSN rule is decided as the packet
   * leaves, not after netem's delay: the same unless `reorder` lets a later packet overtake.
   */
  fate(from: SimDevice, to: SimDevice, p: Packet): Fate {
    const s = this.state;
    const len = ipLength(p);
    // Responses (ACKs, READ responses): the requester checked its own packets (refusedAtSender).
    if (len > from.netdevMtu || len > to.netdevMtu + VLAN_HLEN) {
      const netdev = len > from.netdevMtu ? from.netdevName : to.netdevName;
      return { fault: { kind: "mtu", bytes: len, netdev } };
    }
    if (this.chance(s.loss)) {
      return { fault: { kind: "loss", percent: s.loss * 100, netdev: from.netdevName }, offWire: true };
    }
    if (s.blockRoceUdp) return { fault: { kind: "udp-blocked", netdev: to.netdevName } };
    if (this.dropArmed && p.psn === s.dropPsn) {
      this.dropArmed = false;
      return { fault: { kind: "psn-dropped", psn: p.psn, netdev: to.netdevName } };
    }
    if (s.delay > 0 && !this.chance(s.reorder)) return { delayMs: s.delay };
    return null;
  }

  /**
   * True when the send itself fails, which rxe sees as -EAGAIN: a datagram above the sender's
   * own netdev MTU (ip_local_out refuses it, DF is set), or above the peer veth's (veth_xmit
   * drops it and returns NET_XMIT_DROP, which reaches rxe_send). Measured: both make the
   * requester spin on send_err with no completion (sim/RXE-FACTS.md §11).
   */
  refusedAtSender(from: SimDevice, to: SimDevice, p: Packet): boolean {
    const len = ipLength(p);
    return len > from.netdevMtu || len > to.netdevMtu + VLAN_HLEN;
  }

  /** Runs `again` SEND_AGAIN_MS from now, once per QP at a time (rxe re-runs its requester task at once). */
  sendAgain(qp: object, clock: Clock, again: () => void): void {
    let t = this.retries.get(qp);
    if (!t) {
      t = new Timer(again);
      this.retries.set(qp, t);
    }
    if (!t.armed) clock.arm(t, clock.now + SEND_AGAIN_MS);
  }

  /** Holds `p` for `ms`, then hands it to `deliver` (a timer on the virtual clock). */
  hold(clock: Clock, p: Packet, ms: number, deliver: (p: Packet) => void): void {
    const t = new HeldTimer(p, () => {
      this.held.delete(t);
      deliver(p);
    });
    this.held.add(t);
    clock.arm(t, clock.now + ms);
  }
}

class HeldTimer extends Timer {
  constructor(
    readonly pkt: Packet,
    fire: () => void,
  ) {
    super(fire);
  }
}
