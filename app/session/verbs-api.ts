/**
 * The learner's verbs API: the contract's objects and method names (verbs/backend.ts),
 * with every verb returning a Promise so the session can pause before each one. Learner
 * programs are `export default async function main(verbs: Verbs) { … }` and `await` every
 * verb. Read-only fields (qp_num, lkey, cqe, …) are plain properties.
 *
 * MR memory lives with the backend (in the app, another process), so bytes are read and
 * written through `mr.read()` / `mr.write()` rather than a shared view.
 */
import type {
  AhAttr,
  DeviceAttr,
  DeviceInfo,
  GidEntry,
  PortAttr,
  PortCounters,
  QpAttrInput,
  QpCap,
  QpQuery,
  RecvWr,
  SendWr,
  Sge,
  Wc,
} from "../../verbs/types.js";
import type { LinkFaults, LinkState } from "../../verbs/lab.js";
import type {
  AddrInfo,
  AddrInfoHints,
  CmRoute,
  ConnParam,
  ConnParamEvent,
  SockAddr,
  UdParamEvent,
} from "../../verbs/cm.js";

export interface Verbs {
  /** "sim" or "native": which backend the session wraps (for labels only). */
  readonly kind: "sim" | "native";
  /** ibv_get_device_list */
  getDeviceList(): Promise<DeviceInfo[]>;
  /** ibv_open_device, by name ("rxe0"). */
  openDevice(name: string): Promise<VerbsContext>;
  /** The backend's clock in ms (virtual in the simulator). */
  now(): Promise<number>;
  /** Lets `ms` of the backend's clock pass. */
  sleep(ms: number): Promise<void>;
  /** Writes a line into the transcript (and the console of whoever runs the program). */
  log(...args: unknown[]): Promise<void>;
  /** Faults on the lab link between rxe0 and rxe1 (verbs/lab.ts): the same calls as `setLink`, `clearLink`, `getLink`. */
  readonly lab: VerbsLab;
  /** Applies faults on the lab link (loss, delay, reorder, per-side MTU, UDP 4791 blocked, one PSN dropped once); returns the new state. */
  setLink(faults: LinkFaults): Promise<LinkState>;
  /** Removes every fault from the lab link. */
  clearLink(): Promise<LinkState>;
  /** The lab link's faults now. */
  getLink(): Promise<LinkState>;
  /** librdmacm's connection manager (verbs/cm.ts): event channels, ids, and rdma_getaddrinfo. */
  readonly cm: VerbsCm;
}

/** `verbs.lab`: the lab link's faults, on the simulator's wire or the lab VM's veth pair. */
export interface VerbsLab {
  setLink(faults: LinkFaults): Promise<LinkState>;
  clearLink(): Promise<LinkState>;
  getLink(): Promise<LinkState>;
}

/** The rdma_cm entry points (verbs/cm.ts CmBackend). */
export interface VerbsCm {
  /** rdma_create_event_channel */
  createEventChannel(): Promise<VerbsCmChannel>;
  /** rdma_getaddrinfo(node, service, hints) */
  getAddrInfo(node: string | undefined, service: string | undefined, hints?: AddrInfoHints): Promise<AddrInfo[]>;
}

/** struct rdma_event_channel */
export interface VerbsCmChannel {
  /** rdma_create_id(channel, &id, context, RDMA_PS_TCP or RDMA_PS_UDP) */
  createId(ps: number, context?: unknown): Promise<VerbsCmId>;
  /** rdma_get_cm_event: the next event, or null when `timeoutMs` passes first. */
  getEvent(timeoutMs?: number): Promise<VerbsCmEvent | null>;
  /** rdma_destroy_event_channel */
  destroy(): Promise<void>;
}

/** struct rdma_cm_id: `verbs`, `qp`, `port_num` and `route` as of the last call or event that named it. */
export interface VerbsCmId {
  readonly channel: VerbsCmChannel;
  readonly ps: number;
  readonly qp_type: number;
  readonly context?: unknown;
  readonly verbs?: VerbsContext;
  readonly port_num: number;
  readonly qp?: VerbsQp;
  readonly route: CmRoute;
  bindAddr(addr: SockAddr): Promise<void>;
  listen(backlog: number): Promise<void>;
  resolveAddr(src: SockAddr | undefined, dst: SockAddr, timeoutMs: number): Promise<void>;
  resolveRoute(timeoutMs: number): Promise<void>;
  /** rdma_create_qp: librdmacm moves the new QP to INIT (RC) or RTS (UD) itself. */
  createQp(pd: VerbsPd | undefined, init: VerbsQpInitAttr): Promise<VerbsQp>;
  destroyQp(): Promise<void>;
  connect(param?: ConnParam): Promise<void>;
  accept(param?: ConnParam): Promise<void>;
  reject(private_data?: Uint8Array): Promise<void>;
  disconnect(): Promise<void>;
  initQpAttr(qp_state: number): Promise<{ attr: QpAttrInput; mask: number }>;
  /** rdma_join_multicast: MULTICAST_JOIN follows; librdmacm attaches the id's QP as it hands the event out. */
  joinMulticast(addr: SockAddr): Promise<void>;
  /** rdma_leave_multicast: detaches the id's QP and leaves the group. */
  leaveMulticast(addr: SockAddr): Promise<void>;
  getLocalAddr(): Promise<SockAddr>;
  getPeerAddr(): Promise<SockAddr>;
  destroy(): Promise<void>;
}

/** struct rdma_cm_event; give it back with `ack()` (rdma_ack_cm_event). */
export interface VerbsCmEvent {
  readonly event: number;
  readonly status: number;
  readonly id: VerbsCmId;
  readonly listen_id?: VerbsCmId;
  readonly param: { conn?: ConnParamEvent; ud?: UdParamEvent };
  ack(): Promise<void>;
}

export interface VerbsContext {
  readonly device: DeviceInfo;
  queryDevice(): Promise<DeviceAttr>;
  queryPort(port_num: number): Promise<PortAttr>;
  queryGid(port_num: number, index: number): Promise<string>;
  queryGidEx(port_num: number, index: number): Promise<GidEntry>;
  queryGidTable(): Promise<GidEntry[]>;
  queryPkey(port_num: number, index: number): Promise<number>;
  allocPd(): Promise<VerbsPd>;
  createCq(
    cqe: number,
    options?: { channel?: VerbsCompChannel; comp_vector?: number; cq_context?: unknown },
  ): Promise<VerbsCq>;
  createCompChannel(): Promise<VerbsCompChannel>;
  getAsyncEvent(timeoutMs?: number): Promise<VerbsAsyncEvent | null>;
  queryCounters(port_num?: number): Promise<PortCounters>;
  close(): Promise<void>;
}

export interface VerbsPd {
  readonly context: VerbsContext;
  /** ibv_reg_mr: the bytes are copied to the backend's memory; use `mr.read`/`mr.write` afterwards. */
  regMr(memory: ArrayBuffer | ArrayBufferView | number, access: number): Promise<VerbsMr>;
  createQp(init: VerbsQpInitAttr): Promise<VerbsQp>;
  createAh(attr: Partial<Omit<AhAttr, "grh">> & { grh?: Partial<AhAttr["grh"]> }): Promise<VerbsAh>;
  dealloc(): Promise<void>;
}

export interface VerbsMr {
  readonly pd: VerbsPd;
  readonly addr: number;
  readonly length: number;
  readonly lkey: number;
  readonly rkey: number;
  readonly access: number;
  /** An SGE over [offset, offset+length) of this MR (defaults: the whole MR). Not a verb: no await needed. */
  sge(offset?: number, length?: number): Sge;
  /** A copy of `length` registered bytes from `offset` (defaults: all of them). */
  read(offset?: number, length?: number): Promise<Uint8Array>;
  /** Writes bytes (or a string, as UTF-8) into the registered memory at `offset`. */
  write(offset: number, data: Uint8Array | ArrayBuffer | number[] | string): Promise<void>;
  dereg(): Promise<void>;
}

export interface VerbsCq {
  readonly context: VerbsContext;
  readonly cqe: number;
  readonly cq_context?: unknown;
  poll(num_entries?: number): Promise<Wc[]>;
  pollWait(count: number, timeoutMs: number): Promise<Wc[]>;
  reqNotify(solicited_only?: boolean): Promise<void>;
  ackEvents(n: number): Promise<void>;
  destroy(): Promise<void>;
}

export interface VerbsCompChannel {
  getCqEvent(timeoutMs?: number): Promise<VerbsCq | null>;
  destroy(): Promise<void>;
}

export interface VerbsQpInitAttr {
  send_cq: VerbsCq;
  recv_cq: VerbsCq;
  cap: QpCap;
  qp_type: number;
  sq_sig_all?: number;
  qp_context?: unknown;
}

/** struct ibv_send_wr with the UD address handle as a facade object. */
export type VerbsSendWr = Omit<SendWr, "ud"> & { ud?: { ah: VerbsAh; remote_qpn: number; remote_qkey: number } };

export interface VerbsQp {
  readonly pd: VerbsPd;
  readonly qp_num: number;
  readonly qp_type: number;
  readonly send_cq: VerbsCq;
  readonly recv_cq: VerbsCq;
  readonly cap: QpCap;
  modify(attr: QpAttrInput, mask: number): Promise<void>;
  query(mask?: number): Promise<QpQuery>;
  postSend(wr: VerbsSendWr | VerbsSendWr[]): Promise<void>;
  postRecv(wr: RecvWr | RecvWr[]): Promise<void>;
  destroy(): Promise<void>;
}

export interface VerbsAh {
  readonly pd: VerbsPd;
  destroy(): Promise<void>;
}

export interface VerbsAsyncEvent {
  event_type: number;
  qp_num?: number;
  cq?: VerbsCq;
  port_num?: number;
}

/** What a learner program exports. */
export type VerbsProgram = (verbs: Verbs) => Promise<unknown> | unknown;
