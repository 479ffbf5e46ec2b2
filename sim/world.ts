/**
 * The simulated world: the virtual clock, the two devices and the wire between them, and the
 * event loop that moves packets. The wire has zero latency: everything a verb starts is
 * processed, in FIFO order, before the verb returns ("at the same instant"); only timers
 * (retransmit, RNR wait) wait for virtual time to move.
 */
import { simProfile, type SimProfile } from "./profile.js";
import { IBV_QPT_UD } from "../verbs/constants.js";
import type { AsyncEvent } from "../verbs/types.js";
import { Clock } from "./clock.js";
import { CNT_RCVD_PKTS, CNT_SENT_PKTS } from "./counters.js";
import type { SimDevice } from "./device.js";
import { AddressSpace } from "./memory.js";
import {
  M_AETH,
  M_ATMACK,
  M_ATMETH,
  M_DETH,
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

/** What rxe_modify_qp derived the QP's UDP source port from when its AV was set. */
function avOf(qp: SimQp): { flowLabel: number; destQpNum: number } {
  return { flowLabel: qp.attr.ah_attr.grh.flow_label, destQpNum: qp.attr.dest_qp_num };
}

export class SimWorld {
  /** Which device the simulator imitates (sim/profile.ts); rxe unless createSimBackend says otherwise. */
  profile: SimProfile = simProfile("rxe");
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

  // The FIFO of things to do at this instant: packets to deliver, QPs whose requester must
  // run, or work rxe leaves to a later task run (a responder's flush after its NAK went out).
  private queue: (Packet | SimQp | (() => void))[] = [];
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
    this.clock.afterFire = () => this.run();
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
    p.count = 1;
    p.sendRun = false;
    p.srcQp = null;
    p.srcWqe = null;
    p.destDev = null;
    p.wrId = undefined;
    p.reason = undefined;
    this.pool.push(p);
  }

  /**
   * A UD datagram to a multicast GID (rxe_xmit_packet → rxe_send): one packet leaves the
   * sender, and the IP stack hands a copy to every device whose netdev is a member of the
   * group, the sender's own included (sim/cm-mcast.ts). Counted once, as rxe counts it.
   */
  transmitMcast(from: SimDevice, pkt: Packet): void {
    const to = this.devices.filter((d) => this.mcast.isMember(d, pkt.dgid));
    from.counters[CNT_SENT_PKTS] += pkt.count;
    if (to.length === 0) {
      if (this.packetLog) this.log(from, null, pkt, "no netdev is a member of the multicast group");
      this.recycle(pkt);
      return;
    }
    to.forEach((d, i) => {
      const p = i === to.length - 1 ? pkt : Object.assign(this.newPacket(), pkt);
      this.transmit(from, p, d, false);
    });
  }

  /** rxe_xmit_packet: counts, logs and queues a packet for delivery. False when it was dropped. */
  transmit(from: SimDevice, pkt: Packet, destDev: SimDevice | null, count = true): boolean {
    if (count) from.counters[CNT_SENT_PKTS] += pkt.count;
    if (destDev === null || !this.reachable(from, destDev) || !from.linkUp) {
      const why = destDev ? "link down" : "no route to the destination GID";
      if (this.packetLog) this.log(from, destDev, pkt, why, false);
      if (pkt.mask & M_REQ && pkt.srcQp)
        pkt.srcQp.retryCause = { kind: "dropped", device: from.name, where: "send", drop: why };
      this.recycle(pkt);
      return false;
    }
    pkt.destDev = destDev;
    if (from !== destDev && this.faults.active && this.faulted(from, destDev, pkt)) return true;
    if (
      pkt.opcode === RC_ACKNOWLEDGE &&
      this.joinAck(pkt.srcQp!, destDev, pkt.destQpn, pkt.syndrome, pkt.sgid, pkt.dgid, pkt.psn, pkt.msn)
    ) {
      this.recycle(pkt);
      return true;
    }
    this.queue.push(pkt);
    return true;
  }

  /**
   * A packet between the two devices meets the link's faults (sim/faults.ts): true when they
   * took it (dropped, logged with why, or held back by the delay and queued when it is over).
   * The sender cannot tell: to rxe a packet netem or the peer dropped was sent.
   */
  private faulted(from: SimDevice, to: SimDevice, pkt: Packet): boolean {
    const fate = this.faults.fate(from, to, pkt);
    if (fate === null) return false;
    if ("drop" in fate) {
      if (pkt.mask & M_REQ && pkt.srcQp)
        pkt.srcQp.retryCause = { kind: "dropped", device: to.name, where: "wire", drop: fate.drop };
      if (!this.packetLog) this.recycle(pkt);
      else {
        // Logged in its turn in the FIFO, as if it arrived: a capture on the link (tcpdump on
        // veth0) has it among the packets sent with it, in order, not ahead of them.
        const { drop: why, offWire } = fate;
        this.queue.push(() => {
          this.log(from, to, pkt, why, !offWire);
          this.recycle(pkt);
        });
      }
      return true;
    }
    this.faults.hold(this.clock, pkt, fate.delayMs, (p) => this.queue.push(p));
    return true;
  }

  /** Applies the lab link's new state (verbs/lab.ts) to the wire and the devices' netdev MTUs. */
  setLink(next: LinkState): void {
    const [rxe0, rxe1] = this.devices;
    this.faults.set(next, rxe0!, rxe1!, this.clock, (p) => {
      if (this.packetLog) this.log(p.srcQp ? p.srcQp.device : p.destDev!, p.destDev, p, "purged with the netem qdisc");
      this.recycle(p);
    });
    this.perPacket = this.logOn || this.faults.active;
  }

  /** The FIFO's last record when it is a packet not yet taken, else null. */
  lastQueued(): Packet | null {
    const q = this.queue;
    if (q.length <= this.qHead) return null;
    const t = q[q.length - 1];
    return t instanceof Packet ? t : null;
  }

  /**
   * joinAck for an ACK whose fields other than PSN and MSN are known to be those of `t`, the
   * ACK train the same QP's previous ACK joined (the FIFO's last record, checked here).
   */
  extendAck(t: Packet, psn: number, msn: number): boolean {
    if (this.lastQueued() !== t || psn !== ((t.psn + t.count) & PSN_MASK)) return false;
    return addToTrain(t, msn);
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
    const q = this.queue;
    if (this.perPacket || q.length <= this.qHead) return false;
    const t = q[q.length - 1];
    if (
      !(t instanceof Packet) ||
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
    return addToTrain(t, msn);
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
      this.flushCopy();
      this.running = false;
    }
    if (this.clock.pendingWaiters) this.clock.poke();
  }

  /**
   * rxe_loopback: a packet for the sending device itself goes straight to rxe_rcv, and the
   * responder and completer tasks, idle, run inline; so the requester builds its next packet
   * only after this one was answered (a NAK that moves it to ERR stops the message there).
   * Processes the FIFO now, also from inside run() (whose loop then finds it empty).
   */
  runNow(): void {
    if (this.running) this.drain();
    else this.run();
  }

  private drain(): void {
    const q = this.queue;
    while (this.qHead < q.length) {
      const item = q[this.qHead];
      q[this.qHead++] = undefined as unknown as Packet;
      if (item instanceof Packet) {
        this.flushCopyBefore(item);
        if (item.count === 1) this.deliver(item);
        else if (item.sendRun) this.deliverSendRun(item);
        else if (item.mask & M_REQ) this.deliverTrain(item);
        else this.deliverAckTrain(item);
      } else if (typeof item === "function") {
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
    q.length = 0;
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

  /**
   * A SEND run (fast-path.ts sendRun): each packet in turn, as if queued alone. rxe_rcv's
   * checks are made once: the plain responder path changes nothing they read, so they hold
   * for each next packet until one takes the reference path; from there on each packet goes
   * through rxe_rcv on its own.
   */
  private deliverSendRun(t: Packet): void {
    const n = t.count;
    const src = t.srcQp!;
    const psn = t.psn;
    const dev = t.destDev!;
    const qp = this.destQp(t);
    t.count = 1;
    let i = 0;
    if (qp && qp.typeOfOpcode(t.opcode) === qp.qp_type && qp.respReady && qp.pathMatches(t.sgid, t.dgid)) {
      // The first packet through every check; the rest while they stay plain (SENDs leave
      // no block copy pending, so nothing needs flushing between them).
      dev.counters[CNT_RCVD_PKTS]++;
      i = respondPlain(qp, t) ? respondSendRun(qp, t, 1, n) : 0;
      if (i < n) {
        responder(qp, t);
        i++;
      }
    }
    if (i === n) trainStats.runsWhole++;
    else trainStats.runsSplit++;
    for (; i < n; i++) {
      const p = this.newPacket();
      sendRunPacket(p, src, src.sq.at(t.runWqe + i), (psn + i) & PSN_MASK);
      p.destDev = dev;
      this.flushCopyBefore(p);
      this.deliver(p);
    }
    this.recycle(t);
  }

  /**
   * A train of packets (fast-path.ts): all at once when it passes rxe_rcv's checks and the
   * responder can take it whole, else packet by packet.
   */
  private deliverTrain(t: Packet): void {
    const qp = this.destQp(t);
    if (
      qp &&
      !this.perPacket &&
      qp.typeOfOpcode(t.opcode) === qp.qp_type &&
      qp.respReady &&
      qp.pathMatches(t.sgid, t.dgid) &&
      receiveTrain(qp, t)
    ) {
      this.recycle(t);
      return;
    }
    trainStats.split++;
    for (let i = 0; i < t.count; i++) {
      const p = trainPacket(this, t, i);
      if (i > 0) this.flushCopyBefore(p);
      this.deliver(p);
    }
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
   * An ACK train (joinAckTrain): each ACK delivered in turn, exactly as if queued alone. Of
   * rxe_rcv's checks only the QP's state can change from one ACK to the next (the completer
   * may move it to ERR); the QP, its type and its path cannot, so they are checked once.
   */
  private deliverAckTrain(t: Packet): void {
    const n = t.count;
    const psn = t.psn;
    const msn = t.msn;
    t.count = 1;
    const qp = this.destQp(t);
    if (qp && qp.typeOfOpcode(t.opcode) === qp.qp_type && qp.pathMatches(t.sgid, t.dgid)) {
      completeAckTrain(qp, t, n);
    } else {
      for (let i = 0; i < n; i++) {
        t.psn = (psn + i) & PSN_MASK;
        t.msn = (msn + i * t.msnStep) & 0xffffff;
        this.receive(t);
      }
    }
    trainStats.ackTrains++;
    this.recycle(t);
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
    let drop: string | null = null;
    if (!qp) drop = `no QP 0x${pkt.destQpn.toString(16)} on ${dev.name}`;
    else if (qp.typeOfOpcode(pkt.opcode) !== qp.qp_type) drop = "QP type does not match the opcode";
    else if (pkt.mask & M_REQ ? !qp.respReady : !qp.reqReadyForResponses) drop = "destination QP is not ready";
    else if (qp.qp_type !== IBV_QPT_UD && !qp.pathMatches(pkt.sgid, pkt.dgid))
      drop = "addresses do not match the QP's path";
    else if (qp.qp_type === IBV_QPT_UD && pkt.qkey !== qp.attr.qkey) {
      drop = "Q_Key mismatch";
      dev.qkeyViolCntr++;
    }
    if (this.packetLog) this.log(pkt.srcQp ? pkt.srcQp.device : dev, dev, pkt, drop ?? undefined);
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
    const drop =
      qps.length === 0
        ? `no QP of ${dev.name} is attached to the group`
        : taking.length === 0
          ? "Q_Key mismatch"
          : undefined;
    if (this.packetLog) this.log(pkt.srcQp ? pkt.srcQp.device : dev, dev, pkt, drop);
    if (taking.length === 0) return;
    dev.counters[CNT_RCVD_PKTS]++;
    for (const qp of taking) if (!respondPlain(qp, pkt)) responder(qp, pkt);
  }

  /** `onWire`: false for a packet dropped before it left `from`, or lost in its qdisc (no IP/UDP layer then). */
  private log(from: SimDevice, to: SimDevice | null, p: Packet, dropped?: string, onWire = true): void {
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
    if (dropped) e.dropped = dropped;
    if (onWire) e.ip = this.ipLayer(p);
    // A delivered packet is logged once, at delivery; a dropped one where it was dropped (a
    // faulted one in its turn in the FIFO, where it would have been delivered).
    if (this.ring.length < MAX_LOG) this.ring.push(e);
    else {
      this.ring[this.ringHead] = e;
      this.ringHead = (this.ringHead + 1) % MAX_LOG;
    }
    this.ordered = null;
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
  mad(from: SimDevice, to: SimDevice | null, mad: CmMad, dropped?: string): void {
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
    if (dropped) e.dropped = dropped;
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
