/**
 * The raw native module (native/src, built to native/build/Release/verbslab_native.node),
 * declared in one place. native/index.ts wraps it into the VerbsBackend contract.
 *
 * Every class is an ObjectWrap named after the C struct it owns. Methods check `this`
 * (a TypeError on the wrong object) and liveness (VerbsError EINVAL "… was already
 * destroyed") before anything else. Children hold references to their parents (a parent
 * lives while a child does); finalizers and `Context.close()` tear the graph down child-first.
 *
 * Errors, as data (native/src/common.h); native/index.ts `contractError` is the one place that
 * turns them into the contract's errors, the same as the simulator's for the same call:
 * - libibverbs' failures are the VerbsError class handed over with `init` (verb, errno,
 *   reason, attribute, badWrIndex), as are integers that do not fit their C field (EINVAL
 *   naming the field). Some carry `why` (verbs/verb-failure.ts VerbFailure, e.g. `not-a-gid`,
 *   `ud-ah`) and no reason: contractError words the reason from it.
 * - A learner's wrong JavaScript argument is a TypeError with data (see AddonArgError): `verb`,
 *   `kind` "arg-type" with `field`, `expected` (an ArgExpected: "integer", "object", ...) and
 *   `got` (the value itself), or `kind` "foreign-object" with `field` and `what` (a
 *   ForeignObject: "CQ", "completion channel", "object"). Its message is an English fallback;
 *   contractError makes it `argError(TypeError, verb, why)`, whose message is verbFailureText's.
 * - Misuse no contract call makes (a constructor called from JS, `this` of another class, a
 *   bound verb of a freed object) is a plain TypeError with an English message.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type {
  AhAttr,
  DeviceAttr,
  DeviceInfo,
  GidEntry,
  PortAttr,
  QpAttrInput,
  QpCap,
  QpQuery,
} from "../verbs/types.js";
import type { VerbsError } from "../verbs/errors.js";
import type { ArgExpected, ForeignObject } from "../verbs/verb-failure.js";

/** What the addon's argument TypeErrors carry (native/src/common.h ThrowArgType, ThrowForeign). */
export type AddonArgError = TypeError & { verb: string } & (
    | { kind: "arg-type"; field: string; expected: ArgExpected; got: unknown }
    | { kind: "foreign-object"; field: string; what: ForeignObject }
  );
import type { ConnParamEvent, UdParamEvent } from "../verbs/cm.js";

export interface NativeContext {
  queryDevice(): DeviceAttr;
  queryPort(port_num: number): PortAttr;
  queryGid(port_num: number, index: number): string;
  queryGidEx(port_num: number, index: number): GidEntry;
  queryGidTable(): GidEntry[];
  queryPkey(port_num: number, index: number): number;
  /**
   * The port's hardware counters by the driver's names, asked of the driver over RDMA netlink
   * (RDMA_NLDEV_CMD_STAT_GET) at every call: never sysfs's copy, which lags up to its lifespan.
   */
  queryCounters(port_num?: number): Record<string, number>;
  allocPd(): NativePd;
  createCq(cqe: number, channel: NativeChannel | null, comp_vector: number): NativeCq;
  createCompChannel(): NativeChannel;
  /** Resolves with null when the timeout (ms; undefined = forever) passes, or the device closes. */
  getAsyncEvent(timeoutMs?: number): Promise<{
    event_type: number;
    qp_num?: number;
    cq?: NativeCq;
    port_num?: number;
  } | null>;
  close(): void;
}

export interface NativePd {
  /** Registers [offset, offset+length) of a V8-owned ArrayBuffer, kept alive while registered. */
  regMr(buffer: ArrayBuffer, offset: number, length: number, access: number): NativeMr;
  createQp(init: {
    send_cq: NativeCq;
    recv_cq: NativeCq;
    cap: Partial<QpCap>;
    qp_type: number;
    sq_sig_all?: number;
  }): NativeQp;
  createAh(attr: Partial<Omit<AhAttr, "grh">> & { grh?: Partial<AhAttr["grh"]> }): NativeAh;
  dealloc(): void;
}

export interface NativeMr {
  readonly lkey: number;
  readonly rkey: number;
  readonly addr: number;
  readonly length: number;
  dereg(): void;
}

export interface NativeCq {
  readonly cqe: number;
  /** Fills `out` with up to `num_entries` completions, WC_WORDS numbers each; returns how many. */
  poll(num_entries: number, out: Uint32Array): number;
  /**
   * Binds `out` and returns the hot poll: poll(n) is this.poll(n, out) without `this` or an
   * array to read per call (a Node-API function bound to this CQ: a TypeError once the CQ is
   * freed, EINVAL once destroyed). Every such function fills the array bound last, which is
   * kept alive while bound and must not be transferred (detached), like a registered MR's
   * buffer.
   */
  bindPollOut(out: Uint32Array): (num_entries: number) => number;
  reqNotify(solicited_only: boolean | number): void;
  ackEvents(n: number): void;
  destroy(): void;
}

export interface NativeChannel {
  getCqEvent(timeoutMs?: number): Promise<NativeCq | null>;
  destroy(): void;
}

export interface NativeSendWr {
  wr_id?: number;
  opcode: number;
  send_flags?: number;
  sg_list?: { addr: number | bigint; length: number; lkey: number }[];
  imm_data?: number;
  rdma?: { remote_addr: number | bigint; rkey: number };
  atomic?: { remote_addr: number | bigint; compare_add: bigint | number; swap?: bigint | number; rkey: number };
  ud?: { ah: NativeAh; remote_qpn: number; remote_qkey: number };
}

export type NativeRecvWr = { wr_id?: number; sg_list?: NativeSendWr["sg_list"] };
/** A post that `NativeQp.bindPacked` returns: `wr` is read only if the packed words fail a check. */
export type PostPacked<W> = (wr: W) => void;

export interface NativeQp {
  readonly qp_num: number;
  /** What ibv_create_qp wrote back into init_attr.cap. */
  readonly cap: QpCap;
  modify(attr: QpAttrInput, mask: number): void;
  query(mask: number): QpQuery;
  postSend(wrs: NativeSendWr[]): void;
  postRecv(wrs: NativeRecvWr[]): void;
  /**
   * Binds two arrays and returns the hot posts that read them, [postSend(wr), postRecv(wr)]:
   * one WR each, packed by the caller into the array bound last, without `this` or an array
   * to read per call (Node-API functions bound to this QP: a TypeError once the QP is freed,
   * EINVAL once destroyed). The arrays are kept alive while bound and must not be transferred
   * (detached). A send WR packed for them (the common case, without a property read per field in C++): wr_id,
   * opcode, send_flags, imm_data, num_sge, has_rdma (0 or 1), rdma.remote_addr, rdma.rkey,
   * then num_sge × (addr, length, lkey), num_sge ≤ PACKED_SGES; a recv WR: wr_id, num_sge,
   * then the SGEs. Whatever the fast path would not post exactly as `postSend([wr])` (a value
   * out of range, inline data outside every MR, a UD QP) is handed to `postSend([wr])`, so
   * errors are the same.
   */
  bindPacked(send: Float64Array, recv: Float64Array): [PostPacked<NativeSendWr>, PostPacked<NativeRecvWr>];
  destroy(): void;
}

export interface NativeAh {
  destroy(): void;
}

/** A socket address as the addon reads and writes it (`family` only on the way out: AF_INET 2, AF_INET6 10). */
export interface NativeSockAddr {
  addr: string;
  port: number;
  family?: number;
}

/** struct rdma_conn_param as the addon reads it (absent fields are 0; no object: NULL). */
export interface NativeConnParam {
  private_data?: Uint8Array;
  responder_resources?: number;
  initiator_depth?: number;
  flow_control?: number;
  retry_count?: number;
  rnr_retry_count?: number;
  srq?: number;
  qp_num?: number;
}

/** struct rdma_cm_event, held by the addon until `ack()` (rdma_ack_cm_event). */
export interface NativeCmEvent {
  readonly event: number;
  readonly status: number;
  readonly id: NativeCmId;
  /** CONNECT_REQUEST only: the listening id (`id` is the new child id). */
  readonly listen_id?: NativeCmId;
  /** event->param.conn for RDMA_PS_TCP ids, every field as librdmacm filled it. */
  readonly conn?: ConnParamEvent;
  /** event->param.ud for RDMA_PS_UDP ids and multicast events. */
  readonly ud?: UdParamEvent;
  /** EINVAL ("already destroyed") the second time. */
  ack(): void;
}

/** What the struct rdma_cm_id holds right now (`info()`). */
export interface NativeCmIdInfo {
  ps: number;
  qp_type: number;
  port_num: number;
  /** id->verbs's device name, null before the id is bound to one. */
  device: string | null;
  src_addr: NativeSockAddr | null;
  dst_addr: NativeSockAddr | null;
  /** route.addr.addr.ibaddr */
  sgid: string;
  dgid: string;
  pkey: number;
  qp_num: number | null;
  route: {
    num_paths: number;
    path?: {
      sgid: string;
      dgid: string;
      mtu: number;
      rate: number;
      hop_limit: number;
      traffic_class: number;
      flow_label: number;
      sl: number;
      pkey: number;
      packet_life_time: number;
    };
  };
}

/** A QP state change librdmacm made, seen by ibv_query_qp before and after a call or an event. */
export interface NativeQpChange {
  /** "rdma_create_qp", "rdma_accept", "rdma_disconnect", "rdma_get_cm_event", … */
  during: string;
  /** The event rdma_get_cm_event returned (RDMA_CM_EVENT_*), -1 for a call. */
  event: number;
  /** IBV_QPS_*; -1: the QP did not exist before (rdma_create_qp). */
  from: number;
  to: number;
}

/** struct rdma_cm_id. Methods are the librdmacm calls; errors are VerbsErrors with its errno. */
export interface NativeCmId {
  /** id->verbs: librdmacm's own context for the id's device (one object per device), null before. */
  verbs(): NativeContext | null;
  info(): NativeCmIdInfo;
  bindAddr(addr: NativeSockAddr): void;
  resolveAddr(src: NativeSockAddr | null, dst: NativeSockAddr, timeout_ms: number): void;
  resolveRoute(timeout_ms: number): void;
  listen(backlog: number): void;
  /** rdma_create_qp; pd null: librdmacm's PD for the device (the QP's `pd` then names it). */
  createQp(
    pd: NativePd | null,
    init: { send_cq: NativeCq; recv_cq: NativeCq; cap: Partial<QpCap>; qp_type: number; sq_sig_all?: number },
  ): NativeQp & { readonly pd: NativePd };
  destroyQp(): void;
  connect(param: NativeConnParam | null): void;
  accept(param: NativeConnParam | null): void;
  reject(private_data: Uint8Array | null): void;
  disconnect(): void;
  initQpAttr(qp_state: number): { attr: QpAttrInput; attr_mask: number };
  joinMulticast(addr: NativeSockAddr): void;
  leaveMulticast(addr: NativeSockAddr): void;
  /** The QP state changes since the last call (then forgotten). */
  takeQpChanges(): NativeQpChange[];
  /** Events got for this id (a CONNECT_REQUEST: for its listening id) and not acknowledged. */
  unacked(): number;
  /** rdma_destroy_id; EBUSY while `unacked()` > 0 (librdmacm would wait for ever). */
  destroy(): void;
}

/** struct rdma_event_channel */
export interface NativeEventChannel {
  createId(ps: number): NativeCmId;
  /** Resolves with null when the timeout (ms; undefined = forever) passes, or the channel is destroyed. */
  getEvent(timeoutMs?: number): Promise<NativeCmEvent | null>;
  /** EBUSY while an id uses it. */
  destroy(): void;
}

export interface NativeAddon {
  init(classes: { VerbsError: typeof VerbsError }): void;
  /** errno is non-zero when ibv_get_device_list returned NULL (ENOSYS: no RDMA in the kernel). */
  getDeviceList(): { devices: DeviceInfo[]; errno: number };
  openDevice(name: string): NativeContext;
  /** Numbers per completion in the array `NativeCq.poll` fills. */
  readonly WC_WORDS: number;
  /** Most SGEs a WR packed for the posts `NativeQp.bindPacked` returns may carry. */
  readonly PACKED_SGES: number;
  /** Whether the addon was built with librdmacm (the functions below exist only then). */
  readonly RDMACM: boolean;
  createEventChannel?(): NativeEventChannel;
  getAddrInfo?(
    node: string | null,
    service: string | null,
    hints: { ai_flags?: number; ai_family?: number; ai_qp_type?: number; ai_port_space?: number } | null,
  ): {
    ai_flags: number;
    ai_family: number;
    ai_qp_type: number;
    ai_port_space: number;
    ai_src_addr: NativeSockAddr | null;
    ai_dst_addr: NativeSockAddr | null;
  }[];
}

/** What the loader says when the addon was built without librdmacm. */
export const RDMACM_MISSING =
  "rdma_cm unavailable: librdmacm-dev not installed when the addon was built " +
  "(sudo apt-get install librdmacm-dev, then npm run build:native)";

/** Where the build puts the addon. */
export const ADDON_PATH = join(dirname(fileURLToPath(import.meta.url)), "build", "Release", "verbslab_native.node");

/** Loads the addon, or says why it cannot be loaded. */
export function loadAddon(): { addon: NativeAddon } | { missing: string } {
  if (!existsSync(ADDON_PATH)) {
    return {
      missing:
        "the native addon is not built (native/build/Release/verbslab_native.node is missing): " +
        "install rdma-core's headers (sudo apt-get install libibverbs-dev cmake g++) and run `npm run build:native`",
    };
  }
  try {
    const require = createRequire(import.meta.url);
    return { addon: require(ADDON_PATH) as NativeAddon };
  } catch (e) {
    return {
      missing:
        `the native addon could not be loaded (${(e as Error).message}): ` +
        "is libibverbs1 installed (sudo apt-get install libibverbs1)? Rebuild with `npm run build:native`",
    };
  }
}
