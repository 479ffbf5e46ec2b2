/**
 * Device profiles: "rxe" (the default, and the simulator's whole point: Linux rdma_rxe) and
 * "generic", a RoCE NIC that answers differently from rxe wherever the verbs specification
 * lets a device choose. "generic" exists only to prove the course does not depend on rxe's
 * quirks (`npm run lessons:check -- --profile generic`); it imitates no NIC exactly.
 */
import { DRIVER_COUNTER_NAMES, RXE_COUNTER_NAMES, type DeviceAttr } from "../verbs/types.js";

export const SIM_PROFILES = ["rxe", "generic"] as const;
export type SimProfileName = (typeof SIM_PROFILES)[number];

export interface SimProfile {
  readonly name: SimProfileName;
  /** DeviceInfo.driver. */
  readonly driver: string;
  /** The CQ size ibv_create_cq returns for `requested`. */
  cqDepth(requested: number): number;
  /** A work queue's depth (what ibv_query_qp reports) for `requested` WRs. */
  wqDepth(requested: number): number;
  /** max_inline_data and max_send_sge the QP gets for what was asked. */
  sendCaps(requested: { max_send_sge: number; max_inline_data: number }): {
    maxSendSge: number;
    maxInline: number;
  };
  /** Whether ibv_create_qp writes the real WR depths back into the caps (rxe: no, the requested ones). */
  readonly writesBackDepths: boolean;
  /** Whether a successful RC/UC receive carries IBV_WC_GRH (rxe: yes; UD receives always do). */
  readonly grhOnConnectedRecv: boolean;
  /** The opcode written into error completions (rxe: 0); the specification leaves it undefined. */
  readonly errorOpcode: number;
  /**
   * ibv_query_device answers that differ from rxe's (the limits a NIC's tables set). Only
   * what the device reports: what the simulator enforces stays rxe's.
   */
  readonly deviceAttr: Partial<DeviceAttr>;
  /** The netdev's MTU (rxe's lab: a 1500-byte veth, so active_mtu 1024; a NIC with jumbo frames: 4096). */
  readonly netdevMtu: number;
  /** The device's name for each of rxe's counters, in rxe's order (undefined: the device has none). */
  readonly counterNames: readonly (string | undefined)[];
}

/** roundup_pow_of_two(n) */
function pow2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/** rxe: roundup_pow_of_two(n + 1) - 1 for CQs and work queues (one slot of the ring stays empty). */
const rxeDepth = (n: number) => pow2(n + 1) - 1;

const RXE: SimProfile = {
  name: "rxe",
  driver: "rxe",
  cqDepth: rxeDepth,
  wqDepth: rxeDepth,
  // rxe couples them: one WQE holds max(16 × SGEs, inline) bytes (measured: {sge 1, inline 0} → 16).
  sendCaps: (r) => {
    const wqe = Math.max(16 * r.max_send_sge, r.max_inline_data);
    return { maxSendSge: Math.floor(wqe / 16), maxInline: wqe };
  },
  writesBackDepths: false,
  grhOnConnectedRecv: true,
  errorOpcode: 0,
  deviceAttr: {},
  netdevMtu: 1500,
  counterNames: RXE_COUNTER_NAMES,
};

const GENERIC_INLINE_FLOOR = 28;
/** An opcode no success completion has (0xff), so nothing can lean on error completions' opcode. */
const GENERIC_ERROR_OPCODE = 0xff;

const GENERIC: SimProfile = {
  name: "generic",
  driver: "generic",
  cqDepth: (n) => pow2(Math.max(n, 1)),
  wqDepth: (n) => pow2(Math.max(n, 1)),
  sendCaps: (r) => ({
    maxSendSge: r.max_send_sge,
    maxInline: Math.max(r.max_inline_data, GENERIC_INLINE_FLOOR),
  }),
  writesBackDepths: true,
  grhOnConnectedRecv: false,
  errorOpcode: GENERIC_ERROR_OPCODE,
  // A NIC's tables: tens of thousands of WRs per queue, about 30 SGEs, its own vendor id.
  netdevMtu: 9000,
  deviceAttr: { max_qp_wr: 32768, max_sge: 30, vendor_id: 0x2c9, vendor_part_id: 4119, fw_ver: "16.35.2000" },
  counterNames: RXE_COUNTER_NAMES.map((n) => DRIVER_COUNTER_NAMES.generic![n]),
};

export function simProfile(name: SimProfileName | undefined): SimProfile {
  if (name === undefined || name === "rxe") return RXE;
  if (name === "generic") return GENERIC;
  throw new TypeError(
    `createSimBackend: profile must be one of ${SIM_PROFILES.join(", ")}, got ${JSON.stringify(name)}`,
  );
}
