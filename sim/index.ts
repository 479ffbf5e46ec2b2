/**
 * The simulator backend: two rxe devices (rxe0, rxe1) on a veth pair, behaving like Linux
 * rdma_rxe (kernel 6.1, rdma-core 44) on a virtual clock. See sim/README.md.
 */
import { IBV_EVENT_GID_CHANGE, IBV_EVENT_PORT_ACTIVE, IBV_EVENT_PORT_ERR } from "../verbs/constants.js";
import type { PacketLog, PacketLogEntry, VerbsBackend } from "../verbs/backend.js";
import { argError, fail } from "../verbs/errors.js";
import {
  applyLinkFaults,
  copyLink,
  type LabLink,
  type LinkFaults,
  type LinkState,
  type WireModel,
} from "../verbs/lab.js";
import type { DeviceInfo, Wc } from "../verbs/types.js";
import { typeErr } from "./check.js";
import { checkWait, waitFor } from "./clock.js";
import type { WcReason } from "../verbs/wc-reason.js";
import { reasonOf } from "./explain.js";
import { SimContext } from "./context.js";
import { CNT_LINK_DOWNED } from "./counters.js";
import { SimDevice } from "./device.js";
import { simProfile, type SimProfileName } from "./profile.js";
import { v4MappedGid } from "./gid.js";
import { SimCm } from "./cm.js";
import { SimWorld } from "./world.js";
import { wireProfile, type WireProfile } from "./wire.js";
import { because } from "../verbs/verb-failure.js";

export type { PacketLogEntry } from "../verbs/backend.js";
export { SIM_PROFILES, type SimProfileName } from "./profile.js";
export type { WireProfile } from "./wire.js";
export { WIRE_MODELS, type WireModel } from "../verbs/lab.js";

export interface SimBackendOptions {
  /** Seeds everything random (MACs, key bytes, addresses). Default 1. */
  seed?: number;
  /** Keep the per-packet log (default true; the benchmark turns it off). */
  packetLog?: boolean;
  /** Run as root (CAP_NET_RAW, CAP_IPC_LOCK), as the lab VM does. Default true. */
  root?: boolean;
  /**
   * Which device to imitate (sim/profile.ts): "rxe" (default) or "generic", a RoCE NIC that
   * differs from rxe wherever the specification allows (to prove the course does not lean on rxe).
   */
  profile?: SimProfileName;
  /**
   * How fast the wire is (sim/wire.ts): "rxe" (default, fitted to rxe in the lab VM), or the
   * NIC models "25GbE" and "100GbE". Independent of `profile`. The link starts on it (and
   * `lab.clearLink` returns to it); `lab.setLink({ wire })` switches it.
   */
  wire?: WireModel;
}

export interface SimBackend extends VerbsBackend {
  readonly kind: "sim";
  /** Faults on the wire between rxe0 and rxe1 (sim/faults.ts), seeded. */
  readonly lab: LabLink;
  /** The connection manager (librdmacm over rdma_cm and the IB CM, sim/cm.ts). */
  readonly cm: SimCm;
  /** The per-packet log, oldest first (empty when the log is off). */
  readonly packets: readonly PacketLogEntry[];
  /** The same log as the contract's optional capability (what the app reads). */
  readonly packetLog: PacketLog;
  /** Empties the packet log. */
  clearPackets(): void;
  /** Turns the packet log on or off. */
  setPacketLog(on: boolean): void;
  /** The wire profile in use (sim/wire.ts): its name, the UI's label, its figures. */
  readonly wire: WireProfile;
  /** The virtual clock in ms (same as now()). */
  readonly clock: { now(): number };
  /** `ip link set <netdev> up|down`: both ends of the veth pair follow; raises PORT_ERR / PORT_ACTIVE. */
  setLinkState(device: string, up: boolean): void;
  /** `ip addr add <ipv4> dev <netdev>`: adds a RoCEv2 GID and raises GID_CHANGE. Returns the GID index. */
  addIpAddress(device: string, ipv4: string): number;
  /** The netdev behind a device ("veth0"), its MAC and its IPv4 addresses. */
  netdev(device: string): { name: string; mac: string; ifindex: number; mtu: number; up: boolean };
  /**
   * Why this simulator failed a completion it polled out, exactly (the responder's check that
   * refused, the drops the retries met) as data (`wcReasonText` words it), or undefined (a
   * success, a flush, or not one of ours).
   */
  completionReason(wc: Wc): WcReason | undefined;
}

function randomMac(world: SimWorld): Uint8Array {
  const m = new Uint8Array(6);
  for (let i = 0; i < 6; i++) m[i] = world.rng.byte();
  m[0] = (m[0] & 0xfe) | 0x02; // locally administered unicast, as veth's random MACs
  return m;
}

export function createSimBackend(options: SimBackendOptions = {}): SimBackend {
  const seed = options.seed ?? 1;
  if (typeof seed !== "number" || !Number.isFinite(seed))
    throw new TypeError("createSimBackend: seed must be a number");
  const world = new SimWorld(seed, options.packetLog ?? true, options.root ?? true);
  world.profile = simProfile(options.profile);
  world.wire = wireProfile(options.wire);
  // The devices keep rxe's names on every profile: the course's programs open "rxe0".
  const rxe0 = new SimDevice("rxe0", randomMac(world), 3, "veth0", world.profile);
  const rxe1 = new SimDevice("rxe1", randomMac(world), 4, "veth1", world.profile);
  world.devices = [rxe0, rxe1];
  world.faults.init(rxe0, rxe1, world.wire.name);
  rxe0.addGid(v4MappedGid("10.77.0.1")!);
  rxe1.addGid(v4MappedGid("10.77.0.2")!);

  const dev = (verb: string, name: string): SimDevice => {
    if (typeof name !== "string") throw typeErr(verb, "device", "device-name", name);
    const d = world.devices.find((x) => x.name === name);
    if (!d)
      throw argError(RangeError, verb, {
        kind: "no-sim-device",
        name,
        devices: world.devices.map((x) => x.name),
      });
    return d;
  };

  const backend: SimBackend = {
    kind: "sim",
    cm: new SimCm(world),
    get packets() {
      return world.packets;
    },
    packetLog: {
      get entries() {
        return world.packets;
      },
    },
    clearPackets() {
      world.clearPackets();
    },
    setPacketLog(on: boolean) {
      world.packetLog = !!on;
    },
    get wire() {
      return world.wire;
    },
    clock: { now: () => world.clock.now },
    completionReason: (wc: Wc) => reasonOf(wc),
    getDeviceList(): DeviceInfo[] {
      return world.devices.map((d) => ({ ...d.info }));
    },
    openDevice(name: string) {
      if (typeof name !== "string") throw typeErr("ibv_open_device", "name", "string", name);
      const d = world.devices.find((x) => x.name === name);
      if (!d)
        fail("ibv_open_device", "ENODEV", because({ kind: "no-device", name: String(name) }, { attribute: "name" }));
      return new SimContext(world, d);
    },
    now: () => world.clock.now,
    sleep(ms: number): Promise<void> {
      if (typeof ms !== "number" || Number.isNaN(ms)) throw typeErr("sleep", "ms", "number", ms);
      checkWait(world.clock, "verbslab_sleep", "ms", ms);
      return waitFor<void>(
        world.clock,
        () => undefined,
        Math.max(0, ms),
        () => undefined,
      );
    },
    setLinkState(device: string, up: boolean) {
      const d = dev("setLinkState", device);
      if (typeof up !== "boolean") throw typeErr("setLinkState", "up", "boolean", up);
      // A veth pair: taking one end down takes the peer's carrier down too.
      for (const x of world.devices) {
        if (x.linkUp === up) continue;
        x.linkUp = up;
        if (!up) {
          x.counters[CNT_LINK_DOWNED]++;
          world.raiseAsync(x, { event_type: IBV_EVENT_PORT_ERR, port_num: 1 });
        } else {
          // Two PORT_ACTIVE events were measured on link up (RXE-FACTS.md §7).
          world.raiseAsync(x, { event_type: IBV_EVENT_PORT_ACTIVE, port_num: 1 });
          world.raiseAsync(x, { event_type: IBV_EVENT_PORT_ACTIVE, port_num: 1 });
        }
      }
      void d;
    },
    addIpAddress(device: string, ipv4: string) {
      const d = dev("addIpAddress", device);
      const gid = typeof ipv4 === "string" ? v4MappedGid(ipv4) : null;
      if (!gid) throw typeErr("addIpAddress", "ipv4", "ipv4", ipv4);
      if (d.findGid(gid) >= 0) return d.findGid(gid);
      const i = d.addGid(gid);
      world.raiseAsync(d, { event_type: IBV_EVENT_GID_CHANGE, port_num: 1 });
      return i;
    },
    lab: {
      setLink(faults: LinkFaults): LinkState {
        world.setLink(applyLinkFaults(world.faults.state, faults));
        return copyLink(world.faults.state);
      },
      clearLink(): LinkState {
        world.setLink(world.faults.clean);
        return copyLink(world.faults.state);
      },
      getLink: () => copyLink(world.faults.state),
    },
    netdev(device: string) {
      const d = dev("netdev", device);
      const mac = Array.from(d.mac, (b) => b.toString(16).padStart(2, "0")).join(":");
      return { name: d.netdevName, mac, ifindex: d.ifindex, mtu: d.netdevMtu, up: d.linkUp };
    },
  };
  return backend;
}
