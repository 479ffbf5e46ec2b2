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
  /** Applies faults on the lab link (loss, delay, reorder, per-side MTU, UDP 4791 blocked); returns the new state. */
  setLink(faults: LinkFaults): Promise<LinkState>;
  /** Removes every fault from the lab link. */
  clearLink(): Promise<LinkState>;
  /** The lab link's faults now. */
  getLink(): Promise<LinkState>;
}

/** `verbs.lab`: the lab link's faults, on the simulator's wire or the lab VM's veth pair. */
export interface VerbsLab {
  setLink(faults: LinkFaults): Promise<LinkState>;
  clearLink(): Promise<LinkState>;
  getLink(): Promise<LinkState>;
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
