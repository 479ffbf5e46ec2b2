/**
 * The verbs contract: one set of interfaces implemented by the native addon over
 * libibverbs (native/) and by the rxe-faithful simulator (sim/). Nothing above this file
 * knows which one it has, except to label it.
 *
 * Verbs are synchronous, as in C; a failure throws a VerbsError with the errno the C call
 * would return. Only waiting is asynchronous (`sleep`, `pollWait`, channel and async
 * events), and it runs on the backend's clock: real time on hardware, virtual time in
 * the simulator (which advances only while someone waits), so one program behaves the
 * same on both.
 *
 * Ownership follows libibverbs: a child keeps its parent alive, a parent with live
 * children refuses to go (EBUSY), and any call on a destroyed object throws a VerbsError
 * (EINVAL, reason "… was already destroyed") rather than touching freed memory.
 */
import type {
  AhAttr,
  AsyncEvent,
  DeviceAttr,
  DeviceInfo,
  GidEntry,
  PortAttr,
  PortCounters,
  QpAttrInput,
  QpCap,
  QpInitAttr,
  QpQuery,
  RecvWr,
  SendWr,
  Sge,
  Wc,
} from "./types.js";
import type { LabLink } from "./lab.js";
import type { PacketDrop } from "./wc-reason.js";
import type { CmBackend, CmMad } from "./cm.js";

export interface VerbsBackend {
  /** Which implementation this is, for labels only. */
  readonly kind: "sim" | "native";
  /** ibv_get_device_list. Empty when there is no RDMA device; `unavailableReason` then says why. */
  getDeviceList(): DeviceInfo[];
  /** Why there are no devices (e.g. "ibv_get_device_list: ENOSYS: this kernel has no RDMA support"), if so. */
  readonly unavailableReason?: string;
  /** ibv_open_device, by name (`rxe0`). ENODEV if there is no such device. */
  openDevice(name: string): Context;
  /** The backend's clock in milliseconds (virtual in the simulator). */
  now(): number;
  /** Lets `ms` of the backend's clock pass. */
  sleep(ms: number): Promise<void>;
  /**
   * The packets this backend put on the wire, if it can see them: the simulator can; a real
   * NIC's packets cannot be observed from the verbs API, so native has none. Code above
   * the contract asks for this capability, never which backend it has.
   */
  readonly packetLog?: PacketLog;
  /**
   * Faults on the lab link between rxe0 and rxe1 (verbs/lab.ts): the simulator's wire, or the
   * lab VM's veth pair. Absent where a backend cannot inject any.
   */
  readonly lab?: LabLink;
  /**
   * The connection manager (librdmacm's rdma_cm, verbs/cm.ts), if this backend has one:
   * the simulator always; native when the addon was built with librdmacm.
   */
  readonly cm?: CmBackend;
  /** Why `cm` is absent, if it is (e.g. "the addon was built without librdmacm (apt install librdmacm-dev)"). */
  readonly cmUnavailableReason?: string;
}

/** A backend's own log of the packets it sent and received (an optional capability: `VerbsBackend.packetLog`). */
export interface PacketLog {
  /** The packets logged, oldest first by `seq` (from 0; the oldest may have fallen off a long log); empty while logging is off. */
  readonly entries: readonly PacketLogEntry[];
}

/** One line of the packet log: a packet on the wire (or dropped), with the headers rxe puts in it. */
export interface PacketLogEntry {
  /** Position in the log, from 0. */
  seq: number;
  /** Virtual time in ms. */
  time: number;
  src: string;
  dst: string;
  /** BTH opcode name, e.g. "RC_SEND_ONLY", "RC_ACKNOWLEDGE". */
  opcode: string;
  /** The BTH opcode byte itself (0x04 for RC_SEND_ONLY), for writing the packet out (a pcap). */
  bth_opcode?: number;
  psn: number;
  src_qpn: number;
  dest_qpn: number;
  payload_len: number;
  ack_req: boolean;
  solicited: boolean;
  /** The requester WQE's wr_id for request packets. */
  wr_id?: number;
  aeth?: { syndrome: number; text: string; msn: number };
  reth?: { va: number; rkey: number; len: number };
  imm_data?: number;
  atomic_eth?: { va: number; rkey: number; swap_add: bigint; compare: bigint };
  atomic_ack_eth?: { orig: bigint };
  deth?: { qkey: number; src_qpn: number };
  /** Set when the packet was dropped: why, in English (dropText of `drop`). */
  dropped?: string;
  /** Why it was dropped, as data. */
  drop?: PacketDrop;
  /**
   * The RoCE v2 IP/UDP layer the packet went on the wire in (absent for a packet that never
   * left its device: no route, link down, lost by netem in its qdisc). GIDs as IPv6 text:
   * IPv4-mapped ones mean IPv4.
   */
  ip?: { sgid: string; dgid: string; traffic_class: number; hop_limit: number; udp_sport: number };
  /** For a MAD on QP1 (a UD_SEND_ONLY to or from QPN 1): the CM message it carries. */
  mad?: CmMad;
}

/** struct ibv_context: an open device. */
export interface Context {
  readonly device: DeviceInfo;
  queryDevice(): DeviceAttr;
  /** EINVAL for a port that does not exist (rxe has only port 1). */
  queryPort(port_num: number): PortAttr;
  /** ibv_query_gid: an empty slot reads as "::" (rc 0), as libibverbs does. */
  queryGid(port_num: number, index: number): string;
  /** ibv_query_gid_ex: ENODATA for an empty slot. */
  queryGidEx(port_num: number, index: number): GidEntry;
  /** ibv_query_gid_table: the valid entries only. */
  queryGidTable(): GidEntry[];
  queryPkey(port_num: number, index: number): number;
  allocPd(): Pd;
  /** ibv_create_cq. `cq.cqe` is the rounded size rxe really gives. */
  createCq(cqe: number, options?: { channel?: CompChannel; comp_vector?: number; cq_context?: unknown }): Cq;
  createCompChannel(): CompChannel;
  /** ibv_get_async_event (with ibv_ack_async_event done for you); null when `timeoutMs` passes first. */
  getAsyncEvent(timeoutMs?: number): Promise<AsyncEvent | null>;
  /** The port's hardware counters by the driver's own names (rxe's: RXE_COUNTER_NAMES; others: see readCounter). */
  queryCounters(port_num?: number): PortCounters;
  /** ibv_close_device. Succeeds even with resources open, as libibverbs does. */
  close(): void;
}

/** struct ibv_pd */
export interface Pd {
  readonly context: Context;
  /**
   * ibv_reg_mr over JavaScript memory: an ArrayBuffer (all of it), a view (its bytes),
   * or a length (a new zeroed ArrayBuffer). The MR keeps the memory alive while registered.
   */
  regMr(memory: ArrayBuffer | ArrayBufferView | number, access: number): Mr;
  createQp(init: QpInitAttr): Qp;
  /** ibv_create_ah for UD sends. */
  createAh(attr: Partial<Omit<AhAttr, "grh">> & { grh?: Partial<AhAttr["grh"]> }): Ah;
  /** ibv_dealloc_pd: EBUSY while an MR, QP or AH still uses it. */
  dealloc(): void;
}

/** struct ibv_mr */
export interface Mr {
  readonly pd: Pd;
  /** The registered bytes, readable and writable by the program (the NIC sees the same bytes). */
  readonly bytes: Uint8Array;
  /** The address of the first registered byte, as a C program would see it. */
  readonly addr: number;
  readonly length: number;
  readonly lkey: number;
  /** 0 unless the access flags include a REMOTE_* bit (rxe's rule). */
  readonly rkey: number;
  readonly access: number;
  /** An SGE over [offset, offset+length) of this MR (defaults: the whole MR). */
  sge(offset?: number, length?: number): Sge;
  /** ibv_dereg_mr */
  dereg(): void;
}

/** struct ibv_cq */
export interface Cq {
  readonly context: Context;
  /** The capacity rxe gave (requests are rounded up to 2^k - 1). */
  readonly cqe: number;
  readonly cq_context?: unknown;
  /** ibv_poll_cq: up to `num_entries` completions (default 1), oldest first; never waits. */
  poll(num_entries?: number): Wc[];
  /** Polls until `count` completions have arrived or `timeoutMs` of the backend's clock has passed; returns what arrived. */
  pollWait(count: number, timeoutMs: number): Promise<Wc[]>;
  /** ibv_req_notify_cq: the next completion (solicited only, if asked) raises one channel event. */
  reqNotify(solicited_only?: boolean): void;
  /** ibv_ack_cq_events */
  ackEvents(n: number): void;
  /** ibv_destroy_cq: EBUSY while a QP uses it. */
  destroy(): void;
}

/** struct ibv_comp_channel */
export interface CompChannel {
  /** ibv_get_cq_event: the CQ that fired, or null when `timeoutMs` passes first. */
  getCqEvent(timeoutMs?: number): Promise<Cq | null>;
  /** ibv_destroy_comp_channel: EBUSY while a CQ is attached. */
  destroy(): void;
}

/** struct ibv_qp */
export interface Qp {
  readonly pd: Pd;
  readonly qp_num: number;
  readonly qp_type: number;
  readonly send_cq: Cq;
  readonly recv_cq: Cq;
  /** The capabilities ibv_create_qp wrote back (rxe: the requested WR depths, see query for the real ones). */
  readonly cap: QpCap;
  /** ibv_modify_qp: only fields named in `mask` are read; nothing changes on failure. */
  modify(attr: QpAttrInput, mask: number): void;
  /** ibv_query_qp (mask defaults to every attribute). */
  query(mask?: number): QpQuery;
  /** ibv_post_send: a list is posted in order; on failure `err.badWrIndex` names the first WR not posted. */
  postSend(wr: SendWr | SendWr[]): void;
  /** ibv_post_recv */
  postRecv(wr: RecvWr | RecvWr[]): void;
  /** ibv_destroy_qp */
  destroy(): void;
}

/** struct ibv_ah */
export interface Ah {
  readonly pd: Pd;
  /** ibv_destroy_ah */
  destroy(): void;
}
