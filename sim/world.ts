/**
 * The simulated world: the virtual clock, the two devices and the timed wire between them
 * (sim/wire.ts), and the event loop that moves packets. What a verb starts at an instant
 * (requester runs, jobs) is processed in FIFO order before the verb returns; the packets it
 * sends are queued on their link and received when virtual time reaches their arrival.
 */
import { simProfile, type SimProfile } from "./profile.js";
import { IBV_QPT_UD } from "../verbs/constants.js";
import type { AsyncEvent } from "../verbs/types.js";
import { Clock, Timer } from "./clock.js";
import { Link, holdNs, toNs, wireProfile, type WireProfile } from "./wire.js";
import { CNT_RCVD_PKTS, CNT_SENT_PKTS } from "./counters.js";
import type { SimDevice } from "./device.js";
import { AddressSpace } from "./memory.js";
import {
  AETH_ACK,
  AETH_TYPE_MASK,
  M_AETH,
  M_ATMACK,
  M_ATMETH,
  M_DETH,
  M_END,
  M_IMMDT,
  M_REQ,
  M_RETH,
  M_START,
  M_WRITE,
  OPCODE_NAMES,
  PSN_MASK,
  RC_ACKNOWLEDGE,
  UD_SEND_ONLY,
  Packet,
  aethText,
  rxeUdpSourcePort,
} from "./packets.js";
import { formatGid } from "./gid.js";
import type { PacketLogEntry } from "../verbs/backend.js";
import { dropText, type PacketDrop } from "../verbs/wc-reason.js";
import type { LinkState } from "../verbs/lab.js";
import { IB_MULTICAST_QPN, type CmMad } from "../verbs/cm.js";
import type { SimQp } from "./qp.js";
import { Rng } from "./rng.js";
import { WireFaults } from "./faults.js";
import { McastGroups, isMulticastGid } from "./cm-mcast.js";
import { completer } from "./completer.js";
import {
  completeAckTrain,
  receiveTrain,
  respondPlain,
  respondSendRun,
  sendRunPacket,
  trainFits,
  trainPacket,
  trainStats,
} from "./fast-path.js";
import { responder } from "./responder.js";
import { requester } from "./requester.js";

/** Most log entries kept; older ones are dropped from the front (the UI shows recent traffic). */
/** The packet log keeps the last MAX_LOG packets. */
export const MAX_LOG = 100_000;
/** Most WRITE block copies held back at once (see SimWorld.held). */
const MAX_HELD = 64;

interface HeldCopy {
  dst: Uint8Array | null;
  dstOff: number;
  src: Uint8Array | null;
  srcOff: number;
  len: number;
}

/**
 * Counts one more ACK into train `t` (whose next PSN the caller checked) if its MSN follows:
 * each ACK's MSN is the first's plus 0 (WRITEs) or 1 (SENDs) per ACK before it.
 */
function addToTrain(t: Packet, msn: number): boolean {
  const step = (msn - t.msn) & 0xffffff;
  if (t.count === 1) {
    if (step > 1) return false;
    t.msnStep = step;
  } else if (msn !== ((t.msn + t.count * t.msnStep) & 0xffffff)) return false;
  t.count++;
  return true;
}

/** `d`'s place in `devs` (the two lab devices first: this runs for every packet). */
function devIndex(devs: SimDevice[], d: SimDevice): number {
  return d === devs[0] ? 0 : d === devs[1] ? 1 : devs.indexOf(d);
}

/** Empties `q` (popping a few entries is much cheaper than setting length, which runs per packet here). */
function clear<T>(q: T[]): void {
  if (q.length > 8) q.length = 0;
  else while (q.length) q.pop();
}

/** A positive ACK record (one ACK or an ACK train): it touches only its QP's completer, no memory. */
function plainAck(p: Packet): boolean {
  return p.opcode === RC_ACKNOWLEDGE && (p.syndrome & AETH_TYPE_MASK) === AETH_ACK;
}

/** What rxe_modify_qp derived the QP's UDP source port from when its AV was set. */
function avOf(qp: SimQp): { flowLabel: number; destQpNum: number } {
  return { flowLabel: qp.attr.ah_attr.grh.flow_label, destQpNum: qp.attr.dest_qp_num };
}

/** A log entry learns why its packet was dropped: as data, and in the English the exports print. */
function dropInto(e: PacketLogEntry, d: PacketDrop): void {
  e.drop = d;
  e.dropped = dropText(d);
}

export class SimWorld {
  /** Which device the simulator imitates (sim/profile.ts); rxe unless createSimBackend says otherwise. */
  profile: SimProfile = simProfile("rxe");
  /** How long packets take (sim/wire.ts); rxe's fitted model unless createSimBackend says otherwise. */
  wire: WireProfile = wireProfile("rxe");
  readonly clock = new Clock();
  readonly rng: Rng;
  readonly memory: AddressSpace;
  devices: SimDevice[] = [];
  /** The lab link's faults between the two devices (sim/faults.ts). */
  readonly faults: WireFaults;
  /** Multicast memberships and QP attachments (rdma_join_multicast, sim/cm-mcast.ts). */
  readonly mcast = new McastGroups();
  private logOn: boolean;
  /**
   * Every packet goes through the reference path one by one: while the log is on (each is
   * logged) or a fault may touch any of them (sim/faults.ts). The fast paths check this.
   */
  perPacket: boolean;
  get packetLog(): boolean {
    return this.logOn;
  }
  set packetLog(on: boolean) {
    this.logOn = on;
    this.perPacket = on || this.faults.active;
  }
  /**
   * The packet log as a ring: once full, each packet overwrites the oldest (O(1); trimming the
   * front of an array per packet made a full log ~100× slower). `packets` reads it in order.
   */
  private ring: PacketLogEntry[] = [];
  /** Where the oldest entry is once the ring is full (the next one to overwrite). */
  private ringHead = 0;
  /** `packets` as last read, until the next packet or clear. */
  private ordered: PacketLogEntry[] | null = null;
  private logSeq = 0;
  root: boolean;

  // The FIFO of things to do at this instant: QPs whose requester must run, or work rxe
  // leaves to a later task run (a responder's flush after its NAK went out).
  private queue: (SimQp | (() => void))[] = [];
  /** One link per (from, to) pair of devices, in devices order (sim/wire.ts). */
  private links: Link[] = [];
  /** Each link's records (packets, trains, SEND runs, ACK trains) in arrival order, and where its head is. */
  private linkQ: Packet[][] = [];
  private linkHead: number[] = [];
  /** Records on the wire not yet fully received. */
  private inFlight = 0;
  /** How many of them are SEND runs (runAhead has nothing to do without one). */
  private runsOnWire = 0;
  /** Fires when the next packet arrives. */
  private wireTimer = new Timer(() => this.deliverDue());
  /** The record the last transmit queued or joined (lastQueued). */
  private lastSent: Packet | null = null;
  private lastSentLink = -1;
  private qHead = 0;
  private running = false;
  private pool: Packet[] = [];

  // One deferred RDMA WRITE copy: consecutive packets of a message that land contiguously
  // are copied as one block when anything else happens (nothing can observe the bytes before).
  private cpDst: Uint8Array | null = null;
  private cpDstOff = 0;
  private cpSrc: Uint8Array | null = null;
  private cpSrcOff = 0;
  private cpLen = 0;
  private cpQp: SimQp | null = null;
  // Earlier WRITEs' block copies, in order, waiting behind the current one: copying them all
  // once the instant's packets are handled keeps the simulator's own state in cache (a 64 KiB
  // copy between every two packets evicts it). Anything but a WRITE packet or a plain ACK
  // copies them first (flushCopyBefore); WRITE packets add to them only through deferCopy,
  // which keeps their order; so no packet sees memory other than as copied one by one.
  private held: HeldCopy[] = [];
  private heldCount = 0;
  // The last source/destination arrays found to be in different buffers (the typed-array
  // .buffer getter is slow enough to matter per packet; an array's buffer never changes).
  private apartSrc: Uint8Array | null = null;
  private apartDst: Uint8Array | null = null;

  constructor(seed: number, packetLog: boolean, root: boolean) {
    this.rng = new Rng(seed);
    this.memory = new AddressSpace(this.rng);
    this.faults = new WireFaults(seed);
    this.logOn = packetLog;
    this.perPacket = packetLog;
    this.root = root;
    // Once an instant's timers have fired, a program may resume at it (a wait settles): every
    // packet arriving at that instant has been received by then, trains' included, as the
    // reference's wire timer takes all that are due at once. (spinFor does so when the poll returns.)
    this.clock.afterFire = () => {
      if (!this.spinning) this.catchUpTrains(toNs(this.clock.now), false, true);
      this.run();
    };
    // Within spinFor, with no one else waiting, nothing sees a train's receiver before the
    // poll returns (spinFor catches every train up then): other devices' ACKs may pass it.
    this.clock.beforeFire = (at) => this.catchUpTrains(toNs(at), this.spinning && this.clock.pendingWaiters === 0);
  }

  findDeviceByGid(gid: Uint8Array): SimDevice | null {
    for (const d of this.devices) if (d.findGid(gid) >= 0) return d;
    return null;
  }

  /** Two devices can talk if they are the same (loopback) or both links are up (the veth pair). */
  reachable(from: SimDevice, to: SimDevice): boolean {
    return from === to || (from.linkUp && to.linkUp);
  }

  newPacket(): Packet {
    const p = this.pool.pop();
    if (p) return p;
    return new Packet();
  }

  /** Returns a packet to the pool once it has been handled. */
  recycle(p: Packet): void {
    if (p === this.wholeTrain) this.wholeTrain = null;
    p.count = 1;
    p.onArrive = null;
    p.sendRun = false;
    p.srcQp = null;
    p.srcWqe = null;
    p.destDev = null;
    p.wrId = undefined;
    p.reason = undefined;
    p.logEntry = null;
    this.pool.push(p);
  }

  /**
   * The requester waits for its link before each packet (the wire profile's `paced`, rxe's
   * CPU building one packet at a time). Only while the lab link has faults: then every packet
   * goes the packet-by-packet path, log on or off; the fast paths (trains, SEND runs), which
   * hand a message's quiet packets over at once, run only without faults and log, and
   * must leave what the reference path leaves (fast-path.test.ts, window.test.ts).
   */
  get paced(): boolean {
    return this.wire.paced && this.faults.active;
  }

  /** When the link from `from` to `to` is free again (ns). */
  linkFreeNs(from: SimDevice, to: SimDevice): number {
    return this.links[this.linkIndex(from, to)].freeNs;
  }

  /** The link from `from` to `to` (its index in `links`), created on first use. */
  private linkIndex(from: SimDevice, to: SimDevice): number {
    const devs = this.devices;
    const i = devIndex(devs, from) * devs.length + devIndex(devs, to);
    if (this.links[i] === undefined) {
      this.links[i] = new Link(`${from.name}→${to.name}`);
      this.linkQ[i] = [];
      this.linkHead[i] = 0;
    }
    return i;
  }

  /** The time a record holds its link (ns): each of its packets in turn (sim/wire.ts). */
  private recordHoldNs(pkt: Packet): number {
    const w = this.wire;
    const n = pkt.count;
    if (n === 1) return holdNs(w, pkt.payloadLen);
    if (pkt.sendRun) {
      let sum = 0;
      const sq = pkt.srcQp!.sq;
      for (let i = 0; i < n; i++) sum += holdNs(w, sq.at(pkt.runWqe + i).dma.length);
      return sum;
    }
    // A train: full path-MTU packets, and the last one with what is left.
    const mtu = pkt.trainMtu;
    const last = pkt.endOpcode >= 0 ? pkt.payloadLen - (n - 1) * mtu : mtu;
    return (n - 1) * holdNs(w, mtu) + holdNs(w, last);
  }

  /** How many request messages end in record `pkt` (each adds the wire's perMessageNs). */
  private messagesIn(pkt: Packet): number {
    if (!(pkt.mask & M_REQ)) return 0;
    if (pkt.sendRun) return pkt.count;
    if (pkt.count > 1) return pkt.endOpcode >= 0 ? 1 : 0;
    return pkt.mask & M_END ? 1 : 0;
  }

  /**
   * A UD datagram to a multicast GID (rxe_xmit_packet → rxe_send): one packet leaves the
   * sender, and the IP stack hands a copy to every device whose netdev is a member of the
   * group, the sender's own included (sim/cm-mcast.ts). Counted once, as rxe counts it.
   */
  transmitMcast(from: SimDevice, pkt: Packet): boolean {
    const to = this.devices.filter((d) => this.mcast.isMember(d, pkt.dgid));
    from.counters[CNT_SENT_PKTS] += pkt.count;
    if (to.length === 0) {
      if (this.packetLog) this.log(from, null, pkt, { kind: "no-member-netdev" });
      this.recycle(pkt);
      return false;
    }
    let sent = false;
    to.forEach((d, i) => {
      const p = i === to.length - 1 ? pkt : Object.assign(this.newPacket(), pkt);
      if (this.transmit(from, p, d, false)) sent = true;
    });
    return sent;
  }

  /**
   * rxe_xmit_packet: counts, logs and queues a packet on its link (one device's: receives it
   * now). False when it was dropped. `joinTried`: the caller found the ACK cannot joinAck.
   */
  transmit(from: SimDevice, pkt: Packet, destDev: SimDevice | null, count = true, joinTried = false): boolean {
    if (count) from.counters[CNT_SENT_PKTS] += pkt.count;
    if (destDev === null || !this.reachable(from, destDev) || !from.linkUp) {
      return this.dropAtSender(from, destDev, pkt, { kind: destDev ? "link-down" : "no-route" });
    }
    pkt.destDev = destDev;
    if (from !== destDev && this.faults.active && this.faulted(from, destDev, pkt)) return true;
    if (
      !joinTried &&
      pkt.opcode === RC_ACKNOWLEDGE &&
      this.joinAck(pkt.srcQp!, destDev, pkt.destQpn, pkt.syndrome, pkt.sgid, pkt.dgid, pkt.psn, pkt.msn)
    ) {
      this.recycle(pkt);
      return true;
    }
    // rxe_loopback: a packet to the sending device itself goes straight to rxe_rcv, whose
    // responder (or completer) runs inline, within this transmit; rxe_post_send runs the
    // requester in the posting process (rxe_run_task(&qp->req.task, 0)), so one device's
    // traffic is done when the verb returns and takes no virtual time. Loopback packets are
    // never trains or runs (fast-path.ts).
    if (from === destDev && pkt.count === 1) {
      this.lastSent = null;
      this.flushCopyBefore(pkt);
      this.deliver(pkt);
      return true;
    }
    return this.onLink(from, pkt, destDev);
  }

  /** Queues `pkt` on the link from `from` to `destDev` (timing, bounded queue, wire timer). */
  private onLink(from: SimDevice, pkt: Packet, destDev: SimDevice, counted = true): boolean {
    const li = this.linkIndex(from, destDev);
    const link = this.links[li];
    const w = this.wire;
    const now = toNs(this.clock.now);
    const start = link.freeNs > now ? link.freeNs : now;
    // The bounded transmit queue: tail drop behind queuePackets full-size (1024-byte) packets.
    if (start - now > w.queuePackets * holdNs(w, 1024))
      return this.dropAtSender(from, destDev, pkt, { kind: "tx-queue-full", link: link.name });
    if (pkt.count > 1 && !pkt.sendRun && counted && pkt.mask & M_REQ && this.joinTrain(li, start, pkt)) return true;
    const hold = this.recordHoldNs(pkt);
    const lat = w.latencyNs;
    pkt.lastNs = start + hold + lat;
    link.freeNs = start + hold + this.messagesIn(pkt) * w.perMessageNs;
    // A SEND run or an ACK train is received packet by packet; a train as one piece when its
    // last packet arrives (unless something else happens first: catchUpTrains).
    pkt.atNs = pkt.sendRun ? start + holdNs(w, pkt.payloadLen) + lat : pkt.lastNs;
    if (pkt.count > 1 && !pkt.sendRun) {
      pkt.gapNs = holdNs(w, pkt.trainMtu);
      pkt.firstNs = start + pkt.gapNs + lat;
    }
    pkt.done = 0;
    pkt.runPsn = pkt.psn;
    pkt.runSplit = false;
    if (this.packetLog) pkt.logEntry = this.log(from, destDev, pkt);
    if (counted && pkt.mask & M_REQ && pkt.srcQp !== null) this.countInFlight(pkt);
    this.linkQ[li].push(pkt);
    if (pkt.sendRun) this.runsOnWire++;
    this.lastSent = pkt;
    this.lastSentLink = li;
    this.inFlight++;
    if (!this.wireTimer.armed || pkt.atNs < toNs(this.wireTimer.at)) this.clock.arm(this.wireTimer, pkt.atNs / 1e6);
    return true;
  }

  /**
   * Train `pkt` continues the message of train `t`, link `li`'s last record, nothing of which
   * was received yet, and starts on the link the instant `t`'s last packet leaves it (`start`):
   * its packets arrive one gap after each other as `t`'s do, so `t` takes them (one record to
   * receive, one wire event, not two). The requester sent them at this instant all the same
   * (sent_pkts, skb_out, its state): only the record they travel in is shared. False when
   * `pkt` does not continue `t` so.
   */
  private joinTrain(li: number, start: number, pkt: Packet): boolean {
    const q = this.linkQ[li];
    if (q.length <= this.linkHead[li]) return false;
    const t = q[q.length - 1];
    const w = this.wire;
    if (
      t.count === 1 ||
      t.sendRun ||
      t.done !== 0 ||
      t.endOpcode >= 0 ||
      t.srcQp !== pkt.srcQp ||
      !(t.mask & M_REQ) ||
      pkt.mask & M_START ||
      t.trainMtu !== pkt.trainMtu ||
      t.srcKind !== pkt.srcKind ||
      t.srcWqe !== pkt.srcWqe ||
      t.srcBytes !== pkt.srcBytes ||
      t.srcOff + t.payloadLen !== pkt.srcOff ||
      ((t.psn + t.count) & PSN_MASK) !== pkt.psn ||
      t.destDev !== pkt.destDev ||
      t.destQpn !== pkt.destQpn ||
      t.gapNs !== holdNs(w, pkt.trainMtu) ||
      // t's last packet leaves the link at lastNs - latency; pkt's first starts then.
      start !== t.lastNs - w.latencyNs
    )
      return false;
    const link = this.links[li];
    const hold = this.recordHoldNs(pkt);
    const lat = w.latencyNs;
    pkt.gapNs = t.gapNs;
    pkt.firstNs = start + pkt.gapNs + lat;
    pkt.lastNs = start + hold + lat;
    link.freeNs = start + hold + this.messagesIn(pkt) * w.perMessageNs;
    this.countInFlight(pkt);
    t.count += pkt.count;
    t.payloadLen += pkt.payloadLen;
    t.endOpcode = pkt.endOpcode;
    t.ackReq = pkt.ackReq;
    t.solicited = pkt.solicited;
    t.imm = pkt.imm;
    t.lastNs = pkt.lastNs;
    t.atNs = t.lastNs;
    this.recycle(pkt);
    this.lastSent = t;
    this.lastSentLink = li;
    trainStats.joined++;
    // t's arrival moved later: the wire timer follows if it was set for t.
    if (q[this.linkHead[li]] === t) this.armWire();
    return true;
  }

  /** Tells the sending QP when each packet of request record `pkt` arrives (its skb_out). */
  private countInFlight(pkt: Packet): void {
    const qp = pkt.srcQp!;
    const n = pkt.count;
    if (n === 1) qp.sentAt(pkt.lastNs);
    else if (pkt.sendRun) {
      const w = this.wire;
      let at = pkt.atNs;
      for (let i = 0; i < n; i++) {
        if (i > 0) at += holdNs(w, qp.sq.at(pkt.runWqe + i).dma.length) + w.perMessageNs;
        qp.sentAt(at);
      }
    } else qp.sentTrain(pkt.firstNs, pkt.gapNs, n, pkt.lastNs);
  }

  /** A packet that never reached the wire: logged with the reason, told to the requester's retries. */
  private dropAtSender(from: SimDevice, destDev: SimDevice | null, pkt: Packet, why: PacketDrop): boolean {
    if (this.packetLog) this.log(from, destDev, pkt, why, false);
    if (pkt.mask & M_REQ && pkt.srcQp)
      pkt.srcQp.retryCause = { kind: "dropped", device: from.name, where: "send", drop: why };
    this.recycle(pkt);
    return false;
  }

  /**
   * A packet between the two devices meets the link's faults (sim/faults.ts): true when they
   * took it (dropped, logged with why, or held back by the delay and queued when it is over).
   * The sender cannot tell: to rxe a packet netem or the peer dropped was sent.
   */
  private faulted(from: SimDevice, to: SimDevice, pkt: Packet): boolean {
    const fate = this.faults.fate(from, to, pkt);
    if (fate === null) return false;
    if ("fault" in fate) {
      const drop: PacketDrop = { kind: "fault", fault: fate.fault };
      // rxe built and sent it (copy, ICRC) before netem or the receiver dropped it: that CPU
      // time holds the link as if it had gone through (a NIC's cost a qdisc drop never pays).
      if (this.wire.paced) {
        const link = this.links[this.linkIndex(from, to)];
        const now = toNs(this.clock.now);
        const start = link.freeNs > now ? link.freeNs : now;
        link.freeNs = start + this.recordHoldNs(pkt) + this.messagesIn(pkt) * this.wire.perMessageNs;
      }
      if (pkt.mask & M_REQ && pkt.srcQp)
        pkt.srcQp.retryCause = { kind: "dropped", device: to.name, where: "wire", drop };
      // Logged now, in its turn among the packets sent (a capture on the sender's veth).
      if (this.packetLog) this.log(from, to, pkt, drop, !fate.offWire);
      this.recycle(pkt);
      return true;
    }
    // netem orphans a packet it delays (skb_orphan_partial): it no longer counts as in flight.
    this.faults.hold(this.clock, pkt, fate.delayMs, (p) => this.onLink(p.srcQp!.device, p, p.destDev!, false));
    return true;
  }

  /**
   * Applies the lab link's new state (verbs/lab.ts) to the wire, its model and the devices'
   * netdev MTUs. A new model times the packets sent from now on; those on the link keep theirs.
   */
  setLink(next: LinkState): void {
    const [rxe0, rxe1] = this.devices;
    this.wire = wireProfile(next.wire);
    this.faults.set(next, rxe0!, rxe1!, this.clock, (p) => {
      if (this.packetLog) this.log(p.srcQp ? p.srcQp.device : p.destDev!, p.destDev, p, { kind: "qdisc-purged" });
      this.recycle(p);
    });
    this.perPacket = this.logOn || this.faults.active;
  }

  /** The record the last transmit queued or joined, while it is still its link's last and nothing of it was received. */
  lastQueued(): Packet | null {
    const t = this.lastSent;
    if (t === null) return null;
    const q = this.linkQ[this.lastSentLink];
    return q.length > this.linkHead[this.lastSentLink] && q[q.length - 1] === t && t.done === 0 ? t : null;
  }

  /**
   * joinAck for an ACK whose fields other than PSN and MSN are known to be those of `t`, the
   * ACK train the same QP's previous ACK joined (the link's last record, checked here).
   */
  extendAck(t: Packet, psn: number, msn: number): boolean {
    if (this.lastQueued() !== t || psn !== ((t.psn + t.count) & PSN_MASK)) return false;
    return this.joinTimed(t, this.lastSentLink, msn);
  }

  /**
   * Adds one ACK to train `t` (link `li`'s last record) if its MSN follows and it arrives one
   * gap after the train's last ACK, as it would alone; then holds the link for it.
   */
  private joinTimed(t: Packet, li: number, msn: number): boolean {
    const w = this.wire;
    const link = this.links[li];
    const now = toNs(this.clock.now);
    const start = link.freeNs > now ? link.freeNs : now;
    const at = start + holdNs(w, 0) + w.latencyNs;
    const gap = at - t.lastNs;
    if (gap <= 0 || (t.count > 1 && gap !== t.gapNs)) return false;
    if (!addToTrain(t, msn)) return false;
    t.gapNs = gap;
    t.lastNs = at;
    link.freeNs = start + holdNs(w, 0);
    return true;
  }

  /**
   * With the log off, an ACK queued right behind another ACK of the same QP, for the next
   * PSN, joins it as one record (an ACK train: a responder acknowledging a batch of SENDs
   * queues them back to back). Delivery still hands them to the completer one at a time,
   * with every check, so this only saves the per-packet queueing. Takes the ACK's fields
   * (not a packet) so that the responder can try it before building one (responder.ts
   * sendAck); a joined ACK still counts as sent, which the caller does.
   */
  joinAck(
    srcQp: SimQp,
    destDev: SimDevice,
    destQpn: number,
    syndrome: number,
    sgid: Uint8Array,
    dgid: Uint8Array,
    psn: number,
    msn: number,
  ): boolean {
    if (this.perPacket) return false;
    const li = this.linkIndex(srcQp.device, destDev);
    const q = this.linkQ[li];
    if (q.length <= this.linkHead[li]) return false;
    const t = q[q.length - 1];
    if (
      t.done !== 0 ||
      t.opcode !== RC_ACKNOWLEDGE ||
      t.srcQp !== srcQp ||
      t.destDev !== destDev ||
      t.destQpn !== destQpn ||
      t.syndrome !== syndrome ||
      t.sgid !== sgid ||
      t.dgid !== dgid ||
      psn !== ((t.psn + t.count) & PSN_MASK)
    )
      return false;
    if (!this.joinTimed(t, li, msn)) return false;
    this.lastSent = t;
    this.lastSentLink = li;
    return true;
  }

  /** Runs `job` once the packet just transmitted has arrived (`sent`), or at this instant if it was dropped. */
  afterArrival(sent: boolean, job: () => void): void {
    const t = this.lastSent;
    if (sent && t !== null && t.count === 1 && t.onArrive === null && this.lastQueued() === t) t.onArrive = job;
    else this.later(job);
  }

  /** Runs `job` after everything already queued at this instant. */
  later(job: () => void): void {
    this.queue.push(job);
  }

  kickRequester(qp: SimQp): void {
    if (qp.reqQueued) return;
    qp.reqQueued = true;
    this.queue.push(qp);
  }

  /** Copies n bytes for `qp`'s WRITE now or together with the previous packet's. */
  deferCopy(qp: SimQp, dst: Uint8Array, dstOff: number, src: Uint8Array, srcOff: number, n: number): void {
    if (
      this.cpQp === qp &&
      this.cpDst === dst &&
      this.cpSrc === src &&
      this.cpDstOff + this.cpLen === dstOff &&
      this.cpSrcOff + this.cpLen === srcOff
    ) {
      this.cpLen += n;
      return;
    }
    if (src !== this.apartSrc || dst !== this.apartDst) {
      if (src.buffer === dst.buffer) {
        // Overlap would make one block copy differ from packet-by-packet copies: copy now.
        this.flushCopy();
        dst.set(src.subarray(srcOff, srcOff + n), dstOff);
        return;
      }
      this.apartSrc = src;
      this.apartDst = dst;
    }
    this.holdCopy();
    this.cpQp = qp;
    this.cpDst = dst;
    this.cpDstOff = dstOff;
    this.cpSrc = src;
    this.cpSrcOff = srcOff;
    this.cpLen = n;
  }

  /** Moves the current block copy behind the held ones (all are copied when there are too many). */
  private holdCopy(): void {
    if (this.cpDst === null) return;
    if (this.heldCount === MAX_HELD) {
      this.flushCopy();
      return;
    }
    let h = this.held[this.heldCount];
    if (h === undefined) {
      h = { dst: null, dstOff: 0, src: null, srcOff: 0, len: 0 };
      this.held.push(h);
    }
    this.heldCount++;
    h.dst = this.cpDst;
    h.dstOff = this.cpDstOff;
    h.src = this.cpSrc;
    h.srcOff = this.cpSrcOff;
    h.len = this.cpLen;
    this.cpDst = null;
    this.cpSrc = null;
    this.cpQp = null;
    this.cpLen = 0;
  }

  /** Performs the held block copies and the current one, in the order their packets landed. */
  flushCopy(): void {
    if (this.cpDst === null) return;
    for (let i = 0; i < this.heldCount; i++) {
      const h = this.held[i];
      h.dst!.set(h.src!.subarray(h.srcOff, h.srcOff + h.len), h.dstOff);
      h.dst = null;
      h.src = null;
    }
    this.heldCount = 0;
    const src = this.cpSrc!;
    this.cpDst.set(src.subarray(this.cpSrcOff, this.cpSrcOff + this.cpLen), this.cpDstOff);
    this.cpDst = null;
    this.cpSrc = null;
    this.cpQp = null;
    this.cpLen = 0;
  }

  /** Processes everything queued at this instant. Re-entrant calls return at once (the outer loop continues). */
  run(): void {
    if (this.running) return;
    this.running = true;
    try {
      this.drain();
    } finally {
      if (!this.spinning) this.flushCopy();
      this.running = false;
    }
    if (this.clock.pendingWaiters) this.clock.poke();
  }

  private drain(): void {
    const q = this.queue;
    while (this.qHead < q.length) {
      const item = q[this.qHead];
      q[this.qHead++] = undefined as unknown as SimQp;
      if (typeof item === "function") {
        item();
      } else {
        item.reqQueued = false;
        requester(item);
      }
      if (this.qHead > 4096 && this.qHead * 2 > q.length) {
        q.splice(0, this.qHead);
        this.qHead = 0;
      }
    }
    clear(q);
    this.qHead = 0;
  }

  /**
   * Pending block copies stay pending for WRITE packets (their payloads go through deferCopy,
   * in order, or flush first) and across plain ACKs: the completer and the requester runs
   * they cause never touch memory (payloads are read when they land, and those packets flush
   * first). So a WRITE whose first packet went out alone at the window's edge is still
   * copied as one block, and a batch of WRITEs is copied after its packets are handled.
   */
  private flushCopyBefore(p: Packet): void {
    if (this.cpDst !== null && p.opcode !== RC_ACKNOWLEDGE && !(p.mask & M_WRITE)) this.flushCopy();
  }

  /** Whether packets are on the wire (a poll that finds nothing lets time run while they are: SimCq.poll). */
  get wireBusy(): boolean {
    return this.inFlight > 0;
  }

  /**
   * The wire timer: receives every packet whose arrival has come, in arrival order (ties in
   * the order they were sent), each followed by what it started at this instant; then
   * re-arms for the next arrival.
   */
  deliverDue(): void {
    if (this.running) return;
    const now = toNs(this.clock.now);
    for (;;) {
      let best = -1;
      let bestAt = 0;
      for (let i = 0; i < this.linkQ.length; i++) {
        const q = this.linkQ[i];
        if (q === undefined || this.linkHead[i] >= q.length) continue;
        const at = q[this.linkHead[i]].atNs;
        if (at <= now && (best < 0 || at < bestAt)) {
          best = i;
          bestAt = at;
        }
      }
      if (best < 0) break;
      this.receiveNext(best);
      this.run();
    }
    if (!this.spinning) this.flushCopy();
    this.armWire();
    if (this.clock.pendingWaiters) this.clock.poke();
  }

  /**
   * A poll found fewer than `want` completions in `cq`: as for a program polling in a loop,
   * virtual time runs (arrivals and timers, in order) until `cq` holds `want` (or is full)
   * or nothing is left on the wire (so a poll never runs into an RNR wait or a retry loop
   * towards a peer that drops: those wait for the program to wait). Nothing moves while the
   * clock is already firing (a wait's own check polls).
   */
  spinFor(cq: { readonly count: number; readonly cqe: number }, want: number): void {
    const clock = this.clock;
    if (clock.busy || this.running) return;
    const enough = want < cq.cqe ? want : cq.cqe;
    // The program sees memory only once the poll returns: WRITE block copies stay held until
    // then (or until a packet that reads memory lands), as they do within one instant.
    this.spinning = true;
    try {
      while (cq.count < enough && this.inFlight > 0) {
        if (!this.perPacket && clock.pendingWaiters === 0 && this.runAhead(cq, enough)) continue;
        if (!clock.step()) break;
      }
    } finally {
      this.spinning = false;
      // The poll returns at this instant: as every timer due now has fired, every packet
      // arriving now has been received (the reference's wire timer takes all due at once).
      this.catchUpTrains(toNs(clock.now), false, true);
      this.flushCopy();
      this.armWire();
    }
  }
  /** True while spinFor runs the wire (see there). */
  private spinning = false;

  /**
   * spinFor's way through a SEND run to the polled CQ's QP, with no one else waiting: its
   * packets are received one after the other, each at its arrival, without a clock step,
   * while nothing but plain ACKs to the other device arrives in between (those cannot see
   * the run's receiver: they touch their own QP's completer and no memory) and no timer is
   * due; the ACKs that arrived meanwhile are then received, each at its own time. Stops as
   * soon as `cq` holds `enough`, so the poll returns at the instant it would have. False
   * when the next thing on the wire is not such a run.
   */
  private runAhead(cq: { readonly count: number }, enough: number): boolean {
    if (this.runsOnWire === 0) return false;
    let li = -1;
    let t: Packet | null = null;
    for (let i = 0; i < this.linkQ.length; i++) {
      const q = this.linkQ[i];
      if (q === undefined || this.linkHead[i] >= q.length) continue;
      const h = q[this.linkHead[i]];
      if (t === null || h.atNs < t.atNs) {
        li = i;
        t = h;
      }
    }
    if (t === null || !t.sendRun || t.runSplit) return false;
    const dev = t.destDev!;
    if (t.srcQp!.device === dev) return false;
    const qp = this.destQp(t);
    if (qp === undefined || qp.recv_cq !== cq) return false;
    // The first thing that could see the receiver: a timer, or another link's record that is not a plain ACK away from it.
    let bound = toNs(this.clock.nextAtExcept(this.wireTimer));
    for (let i = 0; i < this.linkQ.length; i++) {
      const q = this.linkQ[i];
      if (i === li || q === undefined) continue;
      for (let k = this.linkHead[i]; k < q.length; k++) {
        const h = q[k];
        if (plainAck(h) && h.destDev !== dev) continue;
        if (h.atNs < bound) bound = h.atNs;
        break;
      }
    }
    if (t.atNs >= bound) return false;
    this.wholeTrain = null; // it receives packets (see wholeTrain)
    const clock = this.clock;
    const q = this.linkQ[li];
    let last = t.atNs;
    // receiveNext recycles the run with its last packet; `t` is then no longer the head.
    while (q[this.linkHead[li]] === t && t.atNs < bound && cq.count < enough && !t.runSplit) {
      last = t.atNs;
      clock.now = last / 1e6;
      this.receiveNext(li);
      this.run();
    }
    // The plain ACKs that arrived meanwhile, in arrival order, each at its own time.
    for (;;) {
      let best = -1;
      let bestAt = 0;
      for (let i = 0; i < this.linkQ.length; i++) {
        const lq = this.linkQ[i];
        if (i === li || lq === undefined || this.linkHead[i] >= lq.length) continue;
        const h = lq[this.linkHead[i]];
        if (h.atNs <= last && plainAck(h) && h.destDev !== dev && (best < 0 || h.atNs < bestAt)) {
          best = i;
          bestAt = h.atNs;
        }
      }
      if (best < 0) break;
      clock.now = bestAt / 1e6;
      this.receiveNext(best);
      this.run();
    }
    clock.now = last / 1e6;
    this.armWire();
    clock.checkWaiters();
    return true;
  }

  /** Arms the wire timer at the earliest arrival still to come (or cancels it). */
  private armWire(): void {
    let next = -1;
    for (let i = 0; i < this.linkQ.length; i++) {
      const q = this.linkQ[i];
      if (q === undefined || this.linkHead[i] >= q.length) continue;
      const at = q[this.linkHead[i]].atNs;
      if (next < 0 || at < next) next = at;
    }
    if (next < 0) this.clock.cancel(this.wireTimer);
    else this.clock.arm(this.wireTimer, next / 1e6);
  }

  /** Receives the next packet of link `li`'s head record (all of it for a packet or a train). */
  private receiveNext(li: number): void {
    const q = this.linkQ[li];
    const t = q[this.linkHead[li]];
    let whole = true;
    this.flushCopyBefore(t);
    if (t.count === 1) {
      const job = t.onArrive;
      t.onArrive = null;
      this.deliver(t);
      if (job !== null) job();
    } else if (t.sendRun) {
      whole = this.receiveRunPacket(t);
      if (whole) this.runsOnWire--;
    } else if (t.mask & M_REQ) whole = this.receiveTrainStep(t);
    else whole = this.receiveAckOfTrain(t);
    if (!whole) return;
    q[this.linkHead[li]++] = undefined as unknown as Packet;
    this.inFlight--;
    if (this.linkHead[li] === q.length) {
      clear(q);
      this.linkHead[li] = 0;
    } else if (this.linkHead[li] > 1024 && this.linkHead[li] * 2 > q.length) {
      q.splice(0, this.linkHead[li]);
      this.linkHead[li] = 0;
    }
    if (this.lastSent === t) this.lastSent = null;
  }

  /**
   * The next packet of a SEND run (fast-path.ts sendRun), as if it had been sent alone; true
   * when it was the run's last (the record is then recycled). While its packets stay on the
   * plain path, rxe_rcv's checks are made here and respondSendRun takes the packet without
   * building it; once one leaves it, each of the rest is built and goes through rxe_rcv alone.
   */
  private receiveRunPacket(t: Packet): boolean {
    const k = t.done;
    const src = t.srcQp!;
    const dev = t.destDev!;
    const psn = (t.runPsn + k) & PSN_MASK;
    if (!t.runSplit) {
      const qp = this.destQp(t);
      if (qp && qp.typeOfOpcode(t.opcode) === qp.qp_type && qp.respReady && qp.pathMatches(t.sgid, t.dgid)) {
        let plain: boolean;
        if (k === 0) {
          dev.counters[CNT_RCVD_PKTS]++;
          plain = respondPlain(qp, t);
          if (!plain) responder(qp, t);
        } else {
          t.psn = (psn - 1) & PSN_MASK; // respondSendRun starts after packet k - 1
          plain = respondSendRun(qp, t, k, k + 1) === k + 1;
          if (!plain) responder(qp, t);
        }
        if (!plain) t.runSplit = true;
      } else {
        t.runSplit = true;
        const p = this.newPacket();
        sendRunPacket(p, src, src.sq.at(t.runWqe + k), psn);
        p.destDev = dev;
        this.deliver(p);
      }
    } else {
      const p = this.newPacket();
      sendRunPacket(p, src, src.sq.at(t.runWqe + k), psn);
      p.destDev = dev;
      this.deliver(p);
    }
    t.done = k + 1;
    if (t.done < t.count) {
      t.atNs += holdNs(this.wire, src.sq.at(t.runWqe + k + 1).dma.length) + this.wire.perMessageNs;
      return false;
    }
    if (t.runSplit) trainStats.runsSplit++;
    else trainStats.runsWhole++;
    t.psn = t.runPsn;
    this.recycle(t);
    return true;
  }

  /**
   * A train of packets (fast-path.ts): all at once when it passes rxe_rcv's checks and the
   * responder can take it whole, else packet by packet.
   */
  private receiveTrainStep(t: Packet): boolean {
    if (t.done === 0) {
      this.deliverTrain(t);
      return true;
    }
    const k = t.done;
    this.deliver(trainPacket(this, t, k));
    t.done = k + 1;
    if (t.done < t.count) {
      t.atNs = this.trainArrival(t, t.done);
      return false;
    }
    this.recycle(t);
    return true;
  }

  /** When packet `k` of train `t` arrives (ns). */
  private trainArrival(t: Packet, k: number): number {
    return k === t.count - 1 ? t.lastNs : t.firstNs + k * t.gapNs;
  }

  /**
   * Before anything happens at `atNs` (a timer, another link's packet): the packets of
   * trains that arrived before it are received now, each at its own arrival time (nothing
   * happened since to see the difference), and those trains go on packet by packet. So a
   * train is taken whole only when nothing else happens while it crosses the wire. `scoped`
   * (spinFor's steps, see beforeFire): what only another device's completer and requester
   * see lets a train pass that its receiver will take whole.
   */
  catchUpTrains(atNs: number, scoped = false, inclusive = false): void {
    // What the previous call found its receiver would take whole (see wholeTrain).
    const known = this.wholeTrain;
    const knownCount = this.wholeCount;
    this.wholeTrain = null;
    if (this.running) return;
    const clock = this.clock;
    const now = clock.now;
    // What happens at atNs (ackOnlyAt), found only once a train has begun arriving before it.
    let only: SimDevice | null | undefined = undefined;
    let onlyKnown = !scoped;
    const end = inclusive ? atNs + 1 : atNs;
    // Whether this call received a packet (then nothing found before or in it is remembered).
    let received = false;
    let whole: Packet | null = null;
    for (let li = 0; li < this.linkQ.length; li++) {
      const q = this.linkQ[li];
      if (q === undefined || this.linkHead[li] >= q.length) continue;
      const t = q[this.linkHead[li]];
      if (t.count === 1 || t.sendRun || !(t.mask & M_REQ)) continue;
      let k = t.done;
      // Not yet arrived, or due whole at this very instant.
      if (k === 0 && (t.firstNs >= end || t.lastNs <= atNs)) continue;
      if (!onlyKnown) {
        only = this.ackOnlyAt(atNs);
        onlyKnown = true;
      }
      // Plain ACKs to (and in-flight timers of) another device touch only its completer and
      // requester, and no memory; what they make the requester send queues behind the train.
      // So the train need not be received first if its receiver will take it whole: it then
      // answers nothing before its last packet, and nothing it does can reach them earlier.
      if (only !== undefined && only !== t.destDev && k === 0) {
        if (!received && t === known && t.count === knownCount) {
          whole = t;
          continue;
        }
        if (this.takesWhole(t)) {
          whole = t;
          continue;
        }
      }
      if (k === 0) trainStats.split++;
      while (k < t.count - 1 && this.trainArrival(t, k) < end) {
        received = true;
        clock.now = this.trainArrival(t, k) / 1e6;
        this.flushCopyBefore(t);
        this.deliver(trainPacket(this, t, k));
        t.done = ++k;
        this.run();
      }
      t.atNs = this.trainArrival(t, k);
    }
    clock.now = now;
    if (scoped && !received && whole !== null) {
      this.wholeTrain = whole;
      this.wholeCount = whole.count;
    }
  }
  /**
   * A train the last catchUpTrains call (a scoped one that received nothing) found its
   * receiver would take whole, and its length then: the next call need not ask takesWhole
   * again. Between the two only what that call let pass ran (plain ACKs and timers of another
   * device: its completer and requester, which queue packets behind the train and change
   * nothing its receiver's checks read). Any other call, runAhead and the train's recycling
   * forget it; a train that grew (joinTrain) is asked again.
   */
  private wholeTrain: Packet | null = null;
  private wholeCount = 0;

  /**
   * What happens at `atNs` when it is only plain ACKs arriving to one device, or timers that
   * touch only that device's requesters: that device (null: nothing arrives). Undefined when
   * anything else happens then.
   */
  private ackOnlyAt(atNs: number): SimDevice | null | undefined {
    let dev: SimDevice | null = null;
    if (toNs(this.clock.nextAtExcept(this.wireTimer)) <= atNs) {
      // Timers that touch one device's requester alone (QP skbTimer) are like its plain ACKs.
      const scope = this.clock.scopeBy(atNs / 1e6, this.wireTimer);
      if (scope === null) return undefined;
      dev = scope as SimDevice;
    }
    for (let li = 0; li < this.linkQ.length; li++) {
      const q = this.linkQ[li];
      if (q === undefined || this.linkHead[li] >= q.length) continue;
      const h = q[this.linkHead[li]];
      if (h.atNs > atNs) continue;
      if (!plainAck(h) || (dev !== null && dev !== h.destDev)) return undefined;
      dev = h.destDev;
    }
    return dev;
  }

  /** Whether train `t`, arriving now, would be received whole (deliverTrain's checks, without their effects). */
  private takesWhole(t: Packet): boolean {
    const qp = this.trainReceiver(t);
    return qp !== null && trainFits(qp, t);
  }

  /** The QP that takes train `t` whole if its own checks pass (rxe_rcv's pass for it), or null. */
  private trainReceiver(t: Packet): SimQp | null {
    const qp = this.destQp(t);
    return qp &&
      !this.perPacket &&
      qp.typeOfOpcode(t.opcode) === qp.qp_type &&
      qp.respReady &&
      qp.pathMatches(t.sgid, t.dgid)
      ? qp
      : null;
  }

  private deliverTrain(t: Packet): void {
    const qp = this.trainReceiver(t);
    if (qp !== null && receiveTrain(qp, t)) {
      this.recycle(t);
      return;
    }
    // Packet by packet, each at its own arrival time (nothing else happened meanwhile).
    trainStats.split++;
    const clock = this.clock;
    const now = clock.now;
    for (let i = 0; i < t.count; i++) {
      const p = trainPacket(this, t, i);
      if (i > 0) this.flushCopyBefore(p);
      clock.now = this.trainArrival(t, i) / 1e6;
      this.deliver(p);
      this.run();
    }
    clock.now = now;
    this.recycle(t);
  }

  /**
   * The QP a packet is for. The sender remembers the last one it reached: QPNs are never
   * reused, so that QP is still the answer while it is alive and the number matches.
   */
  private destQp(pkt: Packet): SimQp | undefined {
    const src = pkt.srcQp;
    const dev = pkt.destDev!;
    if (src !== null) {
      const last = src.lastDestQp;
      if (last !== null && last.qp_num === pkt.destQpn && last.device === dev && !last.destroyed) return last;
    }
    const qp = dev.qps.get(pkt.destQpn);
    if (src !== null && qp !== undefined) src.lastDestQp = qp;
    return qp;
  }

  /**
   * The next ACK of an ACK train (joinAck), exactly as if it had been sent alone; true when
   * it was the train's last (the record is then recycled).
   */
  private receiveAckOfTrain(t: Packet): boolean {
    const k = t.done;
    const psn = t.psn;
    const msn = t.msn;
    const n = t.count;
    t.count = 1;
    t.psn = (psn + k) & PSN_MASK;
    t.msn = (msn + k * t.msnStep) & 0xffffff;
    const qp = this.destQp(t);
    if (qp && qp.typeOfOpcode(t.opcode) === qp.qp_type && qp.pathMatches(t.sgid, t.dgid)) completeAckTrain(qp, t, 1);
    else this.receive(t);
    t.count = n;
    t.psn = psn;
    t.msn = msn;
    t.done = k + 1;
    if (t.done < n) {
      t.atNs += t.gapNs;
      return false;
    }
    trainStats.ackTrains++;
    this.recycle(t);
    return true;
  }

  /** rxe_rcv: header checks, then the responder (requests) or the completer (responses). */
  private deliver(pkt: Packet): void {
    this.receive(pkt);
    this.recycle(pkt);
  }

  /** rxe_rcv for one packet (the caller recycles it). */
  private receive(pkt: Packet): void {
    const dev = pkt.destDev!;
    if (pkt.destQpn === IB_MULTICAST_QPN && isMulticastGid(pkt.dgid)) {
      this.receiveMcast(dev, pkt);
      return;
    }
    const qp = this.destQp(pkt);
    let drop: PacketDrop | null = null;
    if (!qp) drop = { kind: "no-qp", qpn: pkt.destQpn, device: dev.name };
    else if (qp.typeOfOpcode(pkt.opcode) !== qp.qp_type) drop = { kind: "qp-type" };
    else if (pkt.mask & M_REQ ? !qp.respReady : !qp.reqReadyForResponses) drop = { kind: "not-ready" };
    else if (qp.qp_type !== IBV_QPT_UD && !qp.pathMatches(pkt.sgid, pkt.dgid)) drop = { kind: "path" };
    else if (qp.qp_type === IBV_QPT_UD && pkt.qkey !== qp.attr.qkey) {
      drop = { kind: "qkey" };
      dev.qkeyViolCntr++;
    }
    if (this.packetLog) this.logArrival(dev, pkt, drop ?? undefined);
    if (drop !== null || !qp) {
      // What the requester's retries will meet (its RETRY_EXC_ERR says so, sim/explain.ts).
      if (pkt.mask & M_REQ && pkt.srcQp)
        pkt.srcQp.retryCause = qp
          ? { kind: "dropped", device: dev.name, where: "receive", drop: drop! }
          : { kind: "no-qp", device: dev.name, qpn: pkt.destQpn };
      return;
    }
    dev.counters[CNT_RCVD_PKTS]++;
    if (pkt.mask & M_REQ) {
      if (!respondPlain(qp, pkt)) responder(qp, pkt);
    } else completer(qp, pkt, false);
  }

  /**
   * rxe_rcv_mcast_pkt: a datagram for IB_MULTICAST_QPN goes to each QP of the device attached
   * to its group, each checking its Q_Key as for a unicast datagram; logged once.
   */
  private receiveMcast(dev: SimDevice, pkt: Packet): void {
    const qps = this.mcast.qpsOn(dev, pkt.dgid).filter((qp) => qp.qp_type === IBV_QPT_UD && qp.respReady);
    const taking = qps.filter((qp) => pkt.qkey === qp.attr.qkey);
    dev.qkeyViolCntr += qps.length - taking.length;
    const drop: PacketDrop | undefined =
      qps.length === 0
        ? { kind: "no-group-member", device: dev.name }
        : taking.length === 0
          ? { kind: "qkey" }
          : undefined;
    if (this.packetLog) this.logArrival(dev, pkt, drop);
    if (taking.length === 0) return;
    dev.counters[CNT_RCVD_PKTS]++;
    for (const qp of taking) if (!respondPlain(qp, pkt)) responder(qp, pkt);
  }

  /** `onWire`: false for a packet dropped before it left `from`, or lost in its qdisc (no IP/UDP layer then). */
  /** A packet reached `dev`: its entry (made as it was sent) learns why `dev` dropped it; one never sent on a link (a device's own) is logged now. */
  private logArrival(dev: SimDevice, pkt: Packet, dropped: PacketDrop | undefined): void {
    if (pkt.logEntry === null) this.log(pkt.srcQp ? pkt.srcQp.device : dev, dev, pkt, dropped);
    else if (dropped) dropInto(pkt.logEntry, dropped);
  }

  private log(from: SimDevice, to: SimDevice | null, p: Packet, dropped?: PacketDrop, onWire = true): PacketLogEntry {
    const m = p.mask;
    const e: PacketLogEntry = {
      seq: this.logSeq++,
      time: this.clock.now,
      src: from.name,
      dst: to ? to.name : "?",
      opcode: OPCODE_NAMES[p.opcode] ?? `0x${p.opcode.toString(16)}`,
      bth_opcode: p.opcode,
      psn: p.psn,
      src_qpn: p.srcQp ? p.srcQp.qp_num : 0,
      dest_qpn: p.destQpn,
      payload_len: p.payloadLen,
      ack_req: p.ackReq,
      solicited: p.solicited,
    };
    if (p.wrId !== undefined) e.wr_id = p.wrId;
    if (m & M_AETH) e.aeth = { syndrome: p.syndrome, text: aethText(p.syndrome), msn: p.msn };
    if (m & M_RETH) e.reth = { va: p.va, rkey: p.rkey, len: p.dmaLen };
    if (m & M_IMMDT) e.imm_data = p.imm;
    if (m & M_ATMETH) e.atomic_eth = { va: p.va, rkey: p.rkey, swap_add: p.swapAdd, compare: p.compare };
    if (m & M_ATMACK) e.atomic_ack_eth = { orig: p.orig };
    if (m & M_DETH) e.deth = { qkey: p.qkey, src_qpn: p.srcQpn };
    if (dropped) dropInto(e, dropped);
    if (onWire) e.ip = this.ipLayer(p);
    // A packet is logged once, as it goes onto its link (a device's own, as it is received), in
    // the order a capture on the sender's veth shows; one dropped before that where it was dropped.
    if (this.ring.length < MAX_LOG) this.ring.push(e);
    else {
      this.ring[this.ringHead] = e;
      this.ringHead = (this.ringHead + 1) % MAX_LOG;
    }
    this.ordered = null;
    return e;
  }

  /** The IP/UDP fields rxe_prepare takes from the sending QP's AV (a UD WQE's AH) and its UDP source port. */
  private ipLayer(p: Packet): NonNullable<PacketLogEntry["ip"]> {
    const qp = p.srcQp;
    // A UD packet's AV is its WQE's AH (known here when the payload is gathered; rxe's AVs all hold hop_limit 64).
    const grh = p.mask & M_DETH ? p.srcWqe?.ah?.av.attr.grh : qp?.attr.ah_attr.grh;
    return {
      sgid: formatGid(p.sgid),
      dgid: formatGid(p.dgid),
      traffic_class: grh?.traffic_class ?? 0,
      hop_limit: grh?.hop_limit ?? 64,
      udp_sport: qp ? rxeUdpSourcePort(qp.qp_num, qp.qp_type === IBV_QPT_UD ? null : avOf(qp)) : 0,
    };
  }

  /**
   * A MAD on QP1 (the CM's REQ, REP, …; sim/cm.ts): counted as rxe counts its GSI QP's packets
   * (sent_pkts on the sender; rcvd_pkts on the receiver when it arrives) and logged as the
   * UD_SEND_ONLY it is, with what it carries in `mad`. `to` null or `dropped` set: it went nowhere.
   */
  mad(from: SimDevice, to: SimDevice | null, mad: CmMad, dropped?: PacketDrop): void {
    from.counters[CNT_SENT_PKTS]++;
    if (to && !dropped) to.counters[CNT_RCVD_PKTS]++;
    if (!this.packetLog) return;
    const psn = from.gsiPsn;
    from.gsiPsn = (from.gsiPsn + 1) & 0xffffff;
    const e: PacketLogEntry = {
      seq: this.logSeq++,
      time: this.clock.now,
      src: from.name,
      dst: to ? to.name : "?",
      opcode: "UD_SEND_ONLY",
      bth_opcode: UD_SEND_ONLY,
      psn,
      src_qpn: 1,
      dest_qpn: 1,
      payload_len: 256,
      ack_req: false,
      solicited: false,
      deth: { qkey: 0x80010000, src_qpn: 1 },
      mad,
    };
    if (dropped) dropInto(e, dropped);
    if (this.ring.length < MAX_LOG) this.ring.push(e);
    else {
      this.ring[this.ringHead] = e;
      this.ringHead = (this.ringHead + 1) % MAX_LOG;
    }
    this.ordered = null;
  }

  /** The logged packets, oldest first (the last MAX_LOG). */
  get packets(): readonly PacketLogEntry[] {
    this.ordered ??=
      this.ringHead === 0
        ? this.ring.slice()
        : [...this.ring.slice(this.ringHead), ...this.ring.slice(0, this.ringHead)];
    return this.ordered;
  }

  clearPackets(): void {
    this.ring = [];
    this.ringHead = 0;
    this.ordered = null;
  }

  /** Queues an async event on every open context of `dev` (port/GID events) or on `only`. */
  raiseAsync(dev: SimDevice, ev: AsyncEvent): void {
    for (const ctx of dev.contexts) ctx.pushAsync(ev);
    if (this.clock.pendingWaiters) this.clock.poke();
  }
}
