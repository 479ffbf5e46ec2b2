/**
 * The raw native module (native/src, built to native/build/Release/verbslab_native.node),
 * declared in one place. native/index.ts wraps it into the VerbsBackend contract.
 *
 * Every class is an ObjectWrap named after the C struct it owns. Methods check `this`
 * (a TypeError on the wrong object) and liveness (VerbsError EINVAL "… was already
 * destroyed") before anything else. Errors from libibverbs are thrown as the VerbsError
 * class handed over with `init` (verb, errno, reason, attribute, badWrIndex); wrong
 * JavaScript types are TypeErrors; integers that do not fit their C field are EINVAL
 * naming the field. Children hold references to their parents (a parent lives while a
 * child does); finalizers and `Context.close()` tear the graph down child-first.
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

export interface NativeAddon {
  init(classes: { VerbsError: typeof VerbsError }): void;
  /** errno is non-zero when ibv_get_device_list returned NULL (ENOSYS: no RDMA in the kernel). */
  getDeviceList(): { devices: DeviceInfo[]; errno: number };
  openDevice(name: string): NativeContext;
  /** Numbers per completion in the array `NativeCq.poll` fills. */
  readonly WC_WORDS: number;
  /** Most SGEs a WR packed for the posts `NativeQp.bindPacked` returns may carry. */
  readonly PACKED_SGES: number;
}

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
