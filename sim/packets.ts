import type { PacketLogEntry } from "../verbs/backend.js";
/**
 * What travels on the simulated wire: InfiniBand BTH opcodes (numbered and named as in
 * rxe_opcode.c), the header masks rxe derives from them, the in-flight Packet record (pooled:
 * the hot path allocates none), and the entries of the per-packet log.
 */
import type { WcReason } from "../verbs/wc-reason.js";
import type { SimDevice } from "./device.js";
import type { SimQp } from "./qp.js";
import type { SendWqe } from "./wqe.js";

// Header/role bits, as rxe's RXE_*_MASK.
export const M_REQ = 1 << 0;
export const M_START = 1 << 1;
export const M_MIDDLE = 1 << 2;
export const M_END = 1 << 3;
export const M_SEND = 1 << 4;
export const M_WRITE = 1 << 5;
export const M_READ = 1 << 6;
export const M_ATOMIC = 1 << 7;
export const M_IMMDT = 1 << 8;
export const M_RETH = 1 << 9;
export const M_AETH = 1 << 10;
export const M_ATMETH = 1 << 11;
export const M_ATMACK = 1 << 12;
export const M_DETH = 1 << 13;
export const M_PAYLOAD = 1 << 14;
/** The packet completes a receive WQE. */
export const M_COMP = 1 << 15;
/** The packet needs a receive WQE. */
export const M_RWR = 1 << 16;

export const OPCODE_NAMES: Record<number, string> = {};
export const OPCODE_MASK: Int32Array = new Int32Array(256);

function op(code: number, name: string, mask: number): number {
  OPCODE_NAMES[code] = name;
  OPCODE_MASK[code] = mask;
  return code;
}

const SEND_F = M_REQ | M_SEND | M_PAYLOAD | M_RWR;
const WRITE_F = M_REQ | M_WRITE | M_PAYLOAD;

export const RC_SEND_FIRST = op(0x00, "RC_SEND_FIRST", SEND_F | M_START);
export const RC_SEND_MIDDLE = op(0x01, "RC_SEND_MIDDLE", SEND_F | M_MIDDLE);
export const RC_SEND_LAST = op(0x02, "RC_SEND_LAST", SEND_F | M_END | M_COMP);
export const RC_SEND_LAST_IMM = op(0x03, "RC_SEND_LAST_WITH_IMMEDIATE", SEND_F | M_END | M_COMP | M_IMMDT);
export const RC_SEND_ONLY = op(0x04, "RC_SEND_ONLY", SEND_F | M_START | M_END | M_COMP);
export const RC_SEND_ONLY_IMM = op(0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", SEND_F | M_START | M_END | M_COMP | M_IMMDT);
export const RC_WRITE_FIRST = op(0x06, "RC_RDMA_WRITE_FIRST", WRITE_F | M_START | M_RETH);
export const RC_WRITE_MIDDLE = op(0x07, "RC_RDMA_WRITE_MIDDLE", WRITE_F | M_MIDDLE);
export const RC_WRITE_LAST = op(0x08, "RC_RDMA_WRITE_LAST", WRITE_F | M_END);
export const RC_WRITE_LAST_IMM = op(
  0x09,
  "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
  WRITE_F | M_END | M_IMMDT | M_COMP | M_RWR,
);
export const RC_WRITE_ONLY = op(0x0a, "RC_RDMA_WRITE_ONLY", WRITE_F | M_START | M_END | M_RETH);
export const RC_WRITE_ONLY_IMM = op(
  0x0b,
  "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
  WRITE_F | M_START | M_END | M_RETH | M_IMMDT | M_COMP | M_RWR,
);
export const RC_READ_REQUEST = op(0x0c, "RC_RDMA_READ_REQUEST", M_REQ | M_READ | M_RETH | M_START | M_END);
export const RC_READ_RESPONSE_FIRST = op(0x0d, "RC_RDMA_READ_RESPONSE_FIRST", M_AETH | M_PAYLOAD | M_START);
export const RC_READ_RESPONSE_MIDDLE = op(0x0e, "RC_RDMA_READ_RESPONSE_MIDDLE", M_PAYLOAD | M_MIDDLE);
export const RC_READ_RESPONSE_LAST = op(0x0f, "RC_RDMA_READ_RESPONSE_LAST", M_AETH | M_PAYLOAD | M_END);
export const RC_READ_RESPONSE_ONLY = op(0x10, "RC_RDMA_READ_RESPONSE_ONLY", M_AETH | M_PAYLOAD | M_START | M_END);
export const RC_ACKNOWLEDGE = op(0x11, "RC_ACKNOWLEDGE", M_AETH | M_START | M_END);
export const RC_ATOMIC_ACKNOWLEDGE = op(0x12, "RC_ATOMIC_ACKNOWLEDGE", M_AETH | M_ATMACK | M_START | M_END);
export const RC_COMPARE_SWAP = op(0x13, "RC_COMPARE_SWAP", M_REQ | M_ATOMIC | M_ATMETH | M_START | M_END);
export const RC_FETCH_ADD = op(0x14, "RC_FETCH_ADD", M_REQ | M_ATOMIC | M_ATMETH | M_START | M_END);

export const UC_SEND_FIRST = op(0x20, "UC_SEND_FIRST", SEND_F | M_START);
export const UC_SEND_MIDDLE = op(0x21, "UC_SEND_MIDDLE", SEND_F | M_MIDDLE);
export const UC_SEND_LAST = op(0x22, "UC_SEND_LAST", SEND_F | M_END | M_COMP);
export const UC_SEND_LAST_IMM = op(0x23, "UC_SEND_LAST_WITH_IMMEDIATE", SEND_F | M_END | M_COMP | M_IMMDT);
export const UC_SEND_ONLY = op(0x24, "UC_SEND_ONLY", SEND_F | M_START | M_END | M_COMP);
export const UC_SEND_ONLY_IMM = op(0x25, "UC_SEND_ONLY_WITH_IMMEDIATE", SEND_F | M_START | M_END | M_COMP | M_IMMDT);
export const UC_WRITE_FIRST = op(0x26, "UC_RDMA_WRITE_FIRST", WRITE_F | M_START | M_RETH);
export const UC_WRITE_MIDDLE = op(0x27, "UC_RDMA_WRITE_MIDDLE", WRITE_F | M_MIDDLE);
export const UC_WRITE_LAST = op(0x28, "UC_RDMA_WRITE_LAST", WRITE_F | M_END);
export const UC_WRITE_LAST_IMM = op(
  0x29,
  "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
  WRITE_F | M_END | M_IMMDT | M_COMP | M_RWR,
);
export const UC_WRITE_ONLY = op(0x2a, "UC_RDMA_WRITE_ONLY", WRITE_F | M_START | M_END | M_RETH);
export const UC_WRITE_ONLY_IMM = op(
  0x2b,
  "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
  WRITE_F | M_START | M_END | M_RETH | M_IMMDT | M_COMP | M_RWR,
);
export const UD_SEND_ONLY = op(0x64, "UD_SEND_ONLY", SEND_F | M_START | M_END | M_COMP | M_DETH);
export const UD_SEND_ONLY_IMM = op(
  0x65,
  "UD_SEND_ONLY_WITH_IMMEDIATE",
  SEND_F | M_START | M_END | M_COMP | M_DETH | M_IMMDT,
);

/** AETH syndromes (rxe_hdr.h). */
export const AETH_TYPE_MASK = 0xe0;
export const AETH_ACK = 0x00;
export const AETH_RNR_NAK = 0x20;
export const AETH_NAK = 0x60;
export const AETH_ACK_UNLIMITED = 0x1f;
export const AETH_NAK_PSN_SEQ_ERROR = 0x60;
export const AETH_NAK_INVALID_REQ = 0x61;
export const AETH_NAK_REM_ACC_ERR = 0x62;
export const AETH_NAK_REM_OP_ERR = 0x63;

export const PSN_MASK = 0xffffff;

/** rxe's psn_compare: the sign of (a - b) in 24-bit sequence space. */
export function psnCompare(a: number, b: number): number {
  return ((a - b) << 8) | 0;
}

/** RXE_ROCE_V2_SPORT (= IB_ROCE_UDP_ENCAP_VALID_PORT_MIN): the base of the UDP source ports rxe picks. */
const RXE_ROCE_V2_SPORT = 0xc000;
/** GOLDEN_RATIO_32 of the kernel's hash_32_generic (include/linux/hash.h). */
const GOLDEN_RATIO_32 = 0x61c88647;

/** rdma_calc_flow_label (ib_verbs.h): the flow label ib_core derives from two QP numbers. */
function calcFlowLabel(lqpn: number, rqpn: number): number {
  let v = BigInt(lqpn) * BigInt(rqpn);
  v ^= v >> 20n;
  v ^= v >> 40n;
  return Number(v & 0xfffffn);
}

/** rdma_flow_label_to_udp_sport (ib_verbs.h). */
function flowLabelToUdpSport(fl: number): number {
  return ((fl & 0x3fff) ^ ((fl & 0xfc000) >>> 14)) | RXE_ROCE_V2_SPORT;
}

/**
 * The UDP source port of a QP's packets (its requests and its responses alike), as rxe keeps
 * it in `qp->src_port`: rxe_qp_init_req starts it at `RXE_ROCE_V2_SPORT +
 * (hash_32(qp_num, 14) & 0x3fff)`, and rxe_modify_qp with an AV (IB_QP_AV, a GRH) sets it to
 * `rdma_get_udp_sport(flow_label, qp_num, dest_qp_num)`: from the flow label, or from
 * qp_num × dest_qp_num when the flow label is 0. So a connected pair's two QPs use one port
 * (measured in the lab VM: QPs 0x11↔0x11 sent from 49441 = 0xc000 | 289 both ways).
 * `av` is the connected QP's (null for a QP never given one: UD).
 */
export function rxeUdpSourcePort(qpNum: number, av: { flowLabel: number; destQpNum: number } | null): number {
  if (!av) return RXE_ROCE_V2_SPORT + ((Math.imul(qpNum, GOLDEN_RATIO_32) >>> 18) & 0x3fff);
  return flowLabelToUdpSport(av.flowLabel || calcFlowLabel(qpNum, av.destQpNum));
}

/** Where a packet's payload bytes come from (never copied until they land). */
export const SRC_NONE = 0;
/** Gathered from the send WQE's SGEs starting at `srcOff` bytes into the message. */
export const SRC_WQE = 1;
/** Contiguous bytes: `srcBytes[srcOff ..]` (inline data, RDMA READ responses). */
export const SRC_BYTES = 2;

/** A packet in flight. Pooled and reused: never keep a reference after delivery. */
export class Packet {
  opcode = 0;
  mask = 0;
  psn = 0;
  /** Packets this record stands for: more than 1 for a train (fast-path.ts); `psn` is the first's. */
  count = 1;
  /** A train's payload per packet (all but a last packet carry exactly this much). */
  trainMtu = 0;
  /** A train's last packet's opcode when it ends the message (LAST, LAST_WITH_IMMEDIATE), else -1. */
  endOpcode = -1;
  /** An ACK train's MSN increment per ACK (0 or 1). */
  msnStep = 0;
  /**
   * A SEND run (fast-path.ts): `count` one-packet RC SENDs of consecutive WQEs, the first at
   * send-queue counter `runWqe`; the fields describe the first packet.
   */
  sendRun = false;
  runWqe = 0;
  // The timed wire (sim/wire.ts, world.ts): arrival of the next packet not yet delivered, of
  // the last one, the spacing of an ACK train's ACKs (ns), and how many have been delivered.
  atNs = 0;
  lastNs = 0;
  /** What the sender does once this packet has arrived (a UD/UC send's completion), or null. */
  onArrive: (() => void) | null = null;
  /** A train's first packet's arrival (its others follow `gapNs` apart, the last at `lastNs`). */
  firstNs = 0;
  gapNs = 0;
  done = 0;
  /** A SEND run's first PSN, and whether one of its packets left the plain path (the rest go alone). */
  runPsn = 0;
  runSplit = false;
  srcQp: SimQp | null = null;
  destQpn = 0;
  destDev: SimDevice | null = null;
  /** Source and destination GIDs (to find the device and to build a UD GRH). */
  sgid: Uint8Array = EMPTY;
  dgid: Uint8Array = EMPTY;
  ackReq = false;
  solicited = false;
  payloadLen = 0;
  srcKind = SRC_NONE;
  srcWqe: SendWqe | null = null;
  srcBytes: Uint8Array = EMPTY;
  srcOff = 0;
  // RETH
  va = 0;
  rkey = 0;
  dmaLen = 0;
  // ImmDt
  imm = 0;
  // AtomicETH
  swapAdd = 0n;
  compare = 0n;
  // AETH
  syndrome = 0;
  msn = 0;
  // AtomicAckETH
  orig = 0n;
  // DETH
  qkey = 0;
  srcQpn = 0;
  /** wr_id of the requester WQE (for the timeline), or undefined for responses. */
  wrId: number | undefined = undefined;
  /** Simulator only (no header field): why the responder sent this NAK or duplicate ACK (sim/explain.ts). */
  reason: WcReason | undefined = undefined;
  /**
   * Its packet-log entry, made as it went onto the link (a capture on the sender's veth sees
   * it then); the receiver adds why it dropped it, if it does (world.ts receive).
   */
  logEntry: PacketLogEntry | null = null;
}
const EMPTY = new Uint8Array(0);

export function aethText(syndrome: number): string {
  const type = syndrome & AETH_TYPE_MASK;
  if (type === AETH_ACK) return "ACK";
  if (type === AETH_RNR_NAK) return `RNR NAK (timer ${syndrome & 0x1f})`;
  switch (syndrome) {
    case AETH_NAK_PSN_SEQ_ERROR:
      return "NAK PSN sequence error";
    case AETH_NAK_INVALID_REQ:
      return "NAK invalid request";
    case AETH_NAK_REM_ACC_ERR:
      return "NAK remote access error";
    case AETH_NAK_REM_OP_ERR:
      return "NAK remote operational error";
  }
  return `NAK 0x${syndrome.toString(16)}`;
}
