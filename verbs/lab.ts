/**
 * The lab network's faults: one API for the learner and the lessons, on both backends.
 *
 * The lab is two rxe devices, rxe0 on veth0 and rxe1 on veth1, joined by the veth pair.
 * Faults act on that pair only, so they touch traffic between rxe0 and rxe1; traffic from a
 * device to itself is looped inside rxe and never reaches the veth (sim/RXE-FACTS.md §11).
 *
 * - native (the lab VM only): `tc qdisc … netem` on each veth's egress for loss, delay and
 *   reorder, `ip link set … mtu` per side, an nftables rule dropping UDP 4791 (RoCE v2), and
 *   one dropping the first packet with a chosen BTH PSN (`dropPsn`).
 * - simulator: the same faults on its wire (sim/faults.ts), drawn from its seeded generator.
 *
 * The link's speed is a fault of neither: on native it is the host's; the simulator times its
 * wire by a model (`wire`, sim/wire.ts) that a program or the Network panel may switch.
 */
import { VerbsError, errnos } from "./errors.js";
import { because, type VerbFailure } from "./verb-failure.js";

/** The verb name faults are recorded and refused under (as a C helper would be called). */
export const SET_LINK_VERB = "verbslab_set_link";

/**
 * The simulator's models of the link (sim/wire.ts): `rxe`, fitted to rxe in the lab VM (the
 * default), and two NIC models from published figures. Models, all three: none is real rxe.
 */
export const WIRE_MODELS = ["rxe", "25GbE", "100GbE"] as const;
export type WireModel = (typeof WIRE_MODELS)[number];

/** The netdev MTUs of the two lab devices, in bytes. */
export interface LabMtu {
  rxe0: number;
  rxe1: number;
}

/** What `setLink` may change; a field left out keeps its current value. */
export interface LinkFaults {
  /** Fraction of packets dropped, 0..1, independently per packet and per direction (netem `loss`). */
  loss?: number;
  /** Extra one-way delay in ms, 0..10000 (netem `delay`). */
  delay?: number;
  /**
   * Fraction of packets, 0..1, sent at once while the others wait `delay` (netem `reorder`;
   * needs a delay), so later packets overtake earlier ones.
   */
  reorder?: number;
  /** Netdev MTU per side, 576..9000 (`ip link set veth0 mtu N`); rxe's active_mtu follows it. */
  mtu?: Partial<LabMtu>;
  /** Drop every UDP packet to port 4791 (RoCE v2) arriving at either side (an nftables rule). */
  blockRoceUdp?: boolean;
  /**
   * Drop the first packet between the devices whose BTH PSN is this (0..0xffffff), once, in
   * either direction (a request, or a response carrying that PSN, whichever arrives first),
   * where it arrives (an nftables input rule matching the BTH's PSN bytes); null removes the
   * rule. A loss that is the same on every run, unlike `loss`, so go-back-N's resend can be
   * compared packet for packet. The rule keeps its PSN after its one drop (getLink shows it):
   * to drop that PSN again, set null, then the PSN.
   */
  dropPsn?: number | null;
  /**
   * How fast the simulator's wire is: one of WIRE_MODELS. On native the link runs at the host's
   * speed and only "rxe" (what it is) is accepted.
   */
  wire?: WireModel;
}

/** The lab link as it is now. */
export interface LinkState {
  loss: number;
  delay: number;
  reorder: number;
  mtu: LabMtu;
  blockRoceUdp: boolean;
  dropPsn: number | null;
  wire: WireModel;
}

/** The link with no fault: the lab VM's veth pair as it boots. */
export const CLEAN_LINK: LinkState = Object.freeze({
  loss: 0,
  delay: 0,
  reorder: 0,
  mtu: Object.freeze({ rxe0: 1500, rxe1: 1500 }),
  blockRoceUdp: false,
  dropPsn: null,
  wire: "rxe",
}) as LinkState;

/** Bounds of each fault (a veth accepts MTU 68..65535; below 576 IPv6 stops, above 9000 is no lab's). */
export const MTU_MIN = 576;
export const MTU_MAX = 9000;
export const DELAY_MAX_MS = 10_000;
/** The largest BTH PSN (24 bits). */
const PSN_MAX = 0xffffff;

/**
 * The lab link's faults, an optional backend capability (`VerbsBackend.lab`): absent where a
 * backend cannot inject faults; present but refusing (EPERM, with why) on a native machine that
 * is not VerbsLab's own lab network.
 */
export interface LabLink {
  /** Applies `faults` on top of the current state; returns the new state. EINVAL for bad values, EPERM off the lab. */
  setLink(faults: LinkFaults): LinkState;
  /** Removes every fault (MTUs back to their original values). */
  clearLink(): LinkState;
  /** The current state. */
  getLink(): LinkState;
}

function bad(attribute: string, why: VerbFailure): never {
  throw new VerbsError(SET_LINK_VERB, errnos.EINVAL, because(why, { attribute }));
}

/** What was given, as the reasons quote it. */
const given = (v: unknown) => String(JSON.stringify(v));

function fraction(name: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > 1)
    bad(name, { kind: "link-fraction", field: name, got: given(v) });
  return v;
}

function mtu(side: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < MTU_MIN || v > MTU_MAX)
    bad(`mtu.${side}`, { kind: "link-mtu", side, min: MTU_MIN, max: MTU_MAX, got: given(v) });
  return v;
}

/**
 * `faults` applied on `current`, checked: every error names the field (EINVAL). Unknown fields
 * are refused too, so a misspelt `los: 0.1` does not silently inject nothing.
 */
export function applyLinkFaults(current: LinkState, faults: unknown): LinkState {
  if (typeof faults !== "object" || faults === null || Array.isArray(faults))
    bad("faults", { kind: "link-not-object", got: given(faults) });
  const f = faults as Record<string, unknown>;
  const known = ["loss", "delay", "reorder", "mtu", "blockRoceUdp", "dropPsn", "wire"];
  for (const k of Object.keys(f)) if (!known.includes(k)) bad(k, { kind: "link-unknown", name: k, known });
  const next: LinkState = { ...current, mtu: { ...current.mtu } };
  if (f.loss !== undefined) next.loss = fraction("loss", f.loss);
  if (f.reorder !== undefined) next.reorder = fraction("reorder", f.reorder);
  if (f.delay !== undefined) {
    const d = f.delay;
    if (typeof d !== "number" || !Number.isFinite(d) || d < 0 || d > DELAY_MAX_MS)
      bad("delay", { kind: "link-delay", max: DELAY_MAX_MS, got: given(d) });
    next.delay = d;
  }
  if (f.mtu !== undefined) {
    const m = f.mtu as Record<string, unknown>;
    if (typeof m !== "object" || m === null || Array.isArray(m)) bad("mtu", { kind: "link-mtu-object", got: given(m) });
    for (const k of Object.keys(m))
      if (k !== "rxe0" && k !== "rxe1") bad(`mtu.${k}`, { kind: "link-mtu-device", got: given(k) });
    if (m.rxe0 !== undefined) next.mtu.rxe0 = mtu("rxe0", m.rxe0);
    if (m.rxe1 !== undefined) next.mtu.rxe1 = mtu("rxe1", m.rxe1);
  }
  if (f.blockRoceUdp !== undefined) {
    if (typeof f.blockRoceUdp !== "boolean")
      bad("blockRoceUdp", { kind: "link-bool", field: "blockRoceUdp", got: given(f.blockRoceUdp) });
    next.blockRoceUdp = f.blockRoceUdp;
  }
  if (f.dropPsn !== undefined) {
    const n = f.dropPsn;
    if (n !== null && (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > PSN_MAX))
      bad("dropPsn", { kind: "link-psn", max: PSN_MAX, got: given(n) });
    next.dropPsn = n;
  }
  if (f.wire !== undefined) {
    if (!(WIRE_MODELS as readonly unknown[]).includes(f.wire))
      bad("wire", { kind: "link-wire", models: [...WIRE_MODELS], got: given(f.wire) });
    next.wire = f.wire as WireModel;
  }
  if (next.reorder > 0 && next.delay === 0) bad("reorder", { kind: "link-reorder" });
  return next;
}

/** The link state as a deep copy (callers may keep it). */
export function copyLink(s: LinkState): LinkState {
  return { ...s, mtu: { ...s.mtu } };
}
