/**
 * The native backend: the VerbsBackend contract over rdma-core's libibverbs, through the
 * Node-API addon in native/src (declared in ./addon.ts). Verbs are synchronous calls into
 * libibverbs; waiting runs on real time (`performance.now`, `setTimeout`), and channel and
 * async events arrive through the addon's poller thread without blocking the event loop.
 *
 * `loadNativeBackend()` never throws: where the addon is not built, or the kernel has no
 * RDMA, it says so and what to do instead.
 */
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import { basename, join } from "node:path";
import { performance } from "node:perf_hooks";
import { setImmediate as immediate, setTimeout as sleepMs } from "node:timers/promises";
import type { Ah, CompChannel, Context, Cq, Mr, Pd, Qp, VerbsBackend } from "../verbs/backend.js";
import { IBV_QP_ALL_ATTRS, IBV_QP_STATE } from "../verbs/constants.js";
import { ackCount, checkCqe, int, mrBytesOfLength, negativeNumEntries, obj, optInt } from "../verbs/args.js";
import { VerbsError, argError, errnoName, typeErr } from "../verbs/errors.js";
import { checkModifyMask } from "../verbs/qp-transitions.js";
import { because, seen, type ArgExpected, type ForeignObject } from "../verbs/verb-failure.js";
import { checkWaitMs } from "../verbs/waits.js";
import { unackedEventsError } from "../verbs/cq-events.js";
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
} from "../verbs/types.js";
import { nativeCm } from "./cm.js";
import type { CmBackend } from "../verbs/cm.js";
import {
  loadAddon,
  type NativeAddon,
  type NativeAh,
  type NativeChannel,
  type NativeContext,
  type NativeCq,
  type NativeMr,
  type NativePd,
  type NativeQp,
  type NativeRecvWr,
  type NativeSendWr,
  type PostPacked,
} from "./addon.js";

import { NativeLabLink } from "./lab-link.js";
export { rdmaResShowQp, type RdmaResQp } from "./rdma-res.js";

/** How to get real verbs when the kernel has none. */
const GET_RDMA =
  "Real verbs run in the lab VM (scripts/rxe-vm/run.sh -- <command>), or on a Linux kernel with soft-RoCE: " +
  "sudo modprobe rdma_rxe && sudo rdma link add rxe0 type rxe netdev <interface>";

/** Why ibv_get_device_list returned NULL, in words a learner can act on. */
export function noDevicesReason(errno: number): string {
  if (errno === 38) {
    return `ibv_get_device_list: ENOSYS (38): this kernel has no RDMA support (no ib_uverbs in /sys/class/infiniband_verbs). ${GET_RDMA}`;
  }
  return `ibv_get_device_list: ${errnoName(errno)} (${errno}): no RDMA devices. ${GET_RDMA}`;
}

/** Where the kernel lists RDMA devices. */
const SYSFS_INFINIBAND = "/sys/class/infiniband";

function sysReadLink(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}

/**
 * The RDMA driver behind a PCI driver that the device link names: a NIC's RDMA part is a
 * module of its own on top of the Ethernet driver (ice → irdma, bnxt_en → bnxt_re).
 */
const RDMA_DRIVER_OF_PCI: Record<string, string> = {
  mlx5_core: "mlx5",
  mlx4_core: "mlx4",
  bnxt_en: "bnxt_re",
  ice: "irdma",
  i40e: "irdma",
  hns3: "hns",
  qede: "qedr",
};

/**
 * The kernel driver behind an RDMA device ("rxe", "mlx5", "siw", "bnxt_re", …): rxe and
 * siw by their names (rxe0, siw0: they have no parent device); a NIC by the driver its
 * `<sysfs>/<dev>/device/driver` link names (mlx5_core → mlx5), else by the kernel's
 * "<driver><n>" name (mlx5_0, bnxt_re1). `undefined` when none tells.
 */
export function driverOf(
  device: string,
  readLink: (path: string) => string | null = sysReadLink,
  sysfs = SYSFS_INFINIBAND,
): string | undefined {
  // rxe and siw hang off no PCI device (no link), and the kernel names them rxe<n>, siw<n>.
  const soft = /^(rxe|siw)\d+$/.exec(device);
  if (soft) return soft[1];
  const link = readLink(join(sysfs, device, "device", "driver"));
  if (link) {
    const mod = basename(link);
    return RDMA_DRIVER_OF_PCI[mod] ?? mod;
  }
  const prefix = /^(mlx5|mlx4|bnxt_re|irdma|hns|efa|qedr|erdma|ocrdma|vmw_pvrdma)_?\d+$/.exec(device);
  return prefix?.[1];
}

/**
 * The port's IB counters (`<sysfs>/<dev>/ports/<n>/counters/*`: port_xmit_packets,
 * port_rcv_packets, link_downed, …), which mlx5 and other NICs keep beside their
 * hw_counters. rxe has none. Unreadable files are left out.
 */
export function portIbCounters(device: string, port: number, sysfs = SYSFS_INFINIBAND): PortCounters {
  const dir = join(sysfs, device, "ports", String(port), "counters");
  const out: PortCounters = {};
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    try {
      const v = Number(readFileSync(join(dir, name), "utf8").trim());
      if (Number.isFinite(v)) out[name] = v;
    } catch {
      // Some counters (PMA ones on a port without a link) refuse reads: skip them.
    }
  }
  return out;
}

/**
 * Loads the native backend, or says why it is unavailable: the addon is not built (install
 * libibverbs-dev and rebuild), the kernel has no RDMA (ENOSYS), or there is no device.
 */
export function loadNativeBackend(): { backend: VerbsBackend } | { unavailable: string } {
  const loaded = loadAddon();
  if ("missing" in loaded) return { unavailable: loaded.missing };
  const addon = loaded.addon;
  addon.init({ VerbsError });
  const list = addon.getDeviceList();
  if (list.errno !== 0) return { unavailable: noDevicesReason(list.errno) };
  if (list.devices.length === 0) return { unavailable: `ibv_get_device_list found no RDMA device. ${GET_RDMA}` };
  return { backend: new NativeBackend(addon) };
}

// The native handle behind each contract object, and the contract object for each handle
// (events come back from the addon as handles).
const handles = new WeakMap<object, object>();
const owners = new WeakMap<object, object>();
function bind<T extends object>(self: T, handle: object): T {
  handles.set(self, handle);
  owners.set(handle, self);
  return self;
}
/** The native handle of a contract object this backend made; `field` names the argument, `what` its kind. */
function handleOf<H>(o: unknown, field: string, verb: string, what: ForeignObject = "object"): H {
  const h = typeof o === "object" && o !== null ? handles.get(o) : undefined;
  if (h === undefined) throw argError(TypeError, verb, { kind: "foreign-object", field, what });
  return h as H;
}

/**
 * The contract's error for what the addon threw, in this one place: an argument TypeError of
 * the addon carries its data (`kind`, `field`, `expected`, `got`, `what`), and becomes the
 * argError (verbs/errors.ts) the simulator throws for the same call: same class, `verb`, `why`
 * and message; a VerbsError the addon gave a why but no reason gets its reason worded from
 * it. Anything else (other VerbsErrors, our own argErrors) passes unchanged.
 */
export function contractError(e: unknown): unknown {
  // A VerbsError whose why the addon gave as data (ThrowVerbsWhy): worded here, as `because` does.
  if (e instanceof VerbsError) {
    if (e.why === undefined || e.reason !== undefined) return e;
    const more = {
      ...(e.attribute !== undefined && { attribute: e.attribute }),
      ...(e.badWrIndex !== undefined && { badWrIndex: e.badWrIndex }),
    };
    return new VerbsError(e.verb, e.errno, because(e.why, more));
  }
  if (!(e instanceof TypeError) || "why" in e) return e;
  // Read as untrusted (addon.ts AddonArgError is the shape it should have).
  const d = e as Partial<Record<"verb" | "kind" | "field" | "expected" | "got" | "what", unknown>>;
  if (typeof d.field !== "string") return e;
  const verb = typeof d.verb === "string" ? d.verb : undefined;
  if (d.kind === "arg-type" && typeof d.expected === "string") {
    return argError(TypeError, verb, {
      kind: "arg-type",
      field: d.field,
      expected: d.expected as ArgExpected,
      got: seen(d.got),
    });
  }
  if (d.kind === "foreign-object" && typeof d.what === "string") {
    return argError(TypeError, verb, { kind: "foreign-object", field: d.field, what: d.what as ForeignObject });
  }
  return e;
}

let labLink: NativeLabLink | undefined;
function processLabLink(): NativeLabLink {
  labLink ??= new NativeLabLink();
  return labLink;
}

class NativeBackend implements VerbsBackend {
  readonly kind = "native" as const;
  /**
   * Faults on the lab VM's veth pair (refused, saying why, anywhere else). One per process: the
   * kernel's link outlives a backend, so every backend must see the state the last one left.
   */
  readonly lab = processLabLink();
  readonly #addon: NativeAddon;
  readonly cm?: CmBackend;
  readonly cmUnavailableReason?: string;
  constructor(addon: NativeAddon) {
    this.#addon = addon;
    const cm = nativeCm(addon, this.#wrappers());
    if ("cm" in cm) this.cm = cm.cm;
    else this.cmUnavailableReason = cm.cmUnavailableReason;
  }
  #layout(): Layout {
    return { wcWords: this.#addon.WC_WORDS, packedSges: this.#addon.PACKED_SGES };
  }
  /** The contract objects for the handles the CM hands out (librdmacm's context and PD, its QPs). */
  #wrappers() {
    const layout = this.#layout();
    return {
      context: (h: NativeContext, device: string): Context =>
        (owners.get(h) as Context | undefined) ?? bind(new NativeContextImpl(h, this.#deviceInfo(device), layout), h),
      pd: (h: NativePd, context: Context): Pd =>
        (owners.get(h) as Pd | undefined) ?? bind(new NativePdImpl(h, context, layout), h),
      qp: (h: NativeQp, pd: Pd, init: QpInitAttr): Qp => bind(new NativeQpImpl(h, pd, init, layout), h),
      handleOf,
      contractError,
    };
  }
  #deviceInfo(name: string): DeviceInfo {
    return (
      this.getDeviceList().find((d) => d.name === name) ?? {
        name,
        node_guid: "0000:0000:0000:0000",
        node_type: 0,
        transport_type: 0,
      }
    );
  }
  get unavailableReason(): string | undefined {
    const { errno, devices } = this.#addon.getDeviceList();
    if (errno !== 0) return noDevicesReason(errno);
    return devices.length === 0 ? `ibv_get_device_list found no RDMA device. ${GET_RDMA}` : undefined;
  }
  getDeviceList(): DeviceInfo[] {
    return this.#addon.getDeviceList().devices.map((d) => {
      const driver = driverOf(d.name);
      return driver === undefined ? d : { ...d, driver };
    });
  }
  openDevice(name: string): Context {
    let h: NativeContext;
    try {
      h = this.#addon.openDevice(name);
    } catch (e) {
      throw contractError(e);
    }
    return bind(new NativeContextImpl(h, this.#deviceInfo(name), this.#layout()), h);
  }
  now(): number {
    return performance.now();
  }
  async sleep(ms: number): Promise<void> {
    checkWaitMs("verbslab_sleep", "ms", ms);
    await sleepMs(ms);
  }
}

class NativeContextImpl implements Context {
  readonly #h: NativeContext;
  readonly layout: Layout;
  readonly device: DeviceInfo;
  constructor(h: NativeContext, device: DeviceInfo, layout: Layout) {
    this.#h = h;
    this.device = device;
    this.layout = layout;
  }
  queryDevice(): DeviceAttr {
    return this.#h.queryDevice();
  }
  queryPort(port_num: number): PortAttr {
    try {
      return this.#h.queryPort(port_num);
    } catch (e) {
      throw contractError(e);
    }
  }
  queryGid(port_num: number, index: number): string {
    try {
      return this.#h.queryGid(port_num, index);
    } catch (e) {
      throw contractError(e);
    }
  }
  queryGidEx(port_num: number, index: number): GidEntry {
    try {
      return this.#h.queryGidEx(port_num, index);
    } catch (e) {
      throw contractError(e);
    }
  }
  queryGidTable(): GidEntry[] {
    return this.#h.queryGidTable();
  }
  queryPkey(port_num: number, index: number): number {
    try {
      return this.#h.queryPkey(port_num, index);
    } catch (e) {
      throw contractError(e);
    }
  }
  allocPd(): Pd {
    const h = this.#h.allocPd();
    return bind(new NativePdImpl(h, this, this.layout), h);
  }
  createCq(cqe: number, options?: { channel?: CompChannel; comp_vector?: number; cq_context?: unknown }): Cq {
    const verb = "ibv_create_cq";
    // The simulator's checks in its order (sim/context.ts, verbs/args.ts); the limit is the device's max_cqe.
    const n = int(verb, "cqe", cqe);
    const o = options === undefined ? {} : obj(verb, "options", options);
    const vector = optInt(verb, "comp_vector", o.comp_vector, 0);
    checkCqe(verb, n, this.#maxCqe());
    const channel =
      o.channel === undefined || o.channel === null
        ? null
        : handleOf<NativeChannel>(o.channel, "channel", verb, "completion channel");
    let h: NativeCq;
    try {
      h = this.#h.createCq(n, channel, vector);
    } catch (e) {
      throw contractError(e);
    }
    return bind(new NativeCqImpl(h, this, o.cq_context, this.layout), h);
  }
  #maxCqeCached?: number;
  /** The device's max_cqe, asked once; no limit while it cannot be asked (a closed context: createCq says so). */
  #maxCqe(): number {
    if (this.#maxCqeCached === undefined) {
      try {
        this.#maxCqeCached = this.#h.queryDevice().max_cqe;
      } catch {
        return Infinity;
      }
    }
    return this.#maxCqeCached;
  }
  createCompChannel(): CompChannel {
    const h = this.#h.createCompChannel();
    return bind(new NativeChannelImpl(h), h);
  }
  async getAsyncEvent(timeoutMs?: number): Promise<AsyncEvent | null> {
    checkWaitMs("ibv_get_async_event", "timeoutMs", timeoutMs);
    const ev = await this.#h.getAsyncEvent(timeoutMs);
    if (ev === null) return null;
    const out: AsyncEvent = { event_type: ev.event_type };
    if (ev.qp_num !== undefined) out.qp_num = ev.qp_num;
    if (ev.port_num !== undefined) out.port_num = ev.port_num;
    if (ev.cq !== undefined) out.cq = owners.get(ev.cq) as Cq | undefined;
    return out;
  }
  queryCounters(port_num = 1): PortCounters {
    let hw: PortCounters;
    try {
      hw = this.#h.queryCounters(port_num);
    } catch (e) {
      throw contractError(e);
    }
    // rxe has only hw_counters; a NIC keeps its packet counts in the IB port counters.
    return this.device.driver === "rxe" ? hw : { ...portIbCounters(this.device.name, port_num), ...hw };
  }
  close(): void {
    this.#h.close();
  }
}

class NativePdImpl implements Pd {
  readonly #h: NativePd;
  readonly #layout: Layout;
  readonly context: Context;
  constructor(h: NativePd, context: Context, layout: Layout) {
    this.#h = h;
    this.#layout = layout;
    this.context = context;
  }
  regMr(memory: ArrayBuffer | ArrayBufferView | number, access: number): Mr {
    const verb = "ibv_reg_mr";
    // The simulator's order and rules (sim/mr.ts, verbs/args.ts): access an integer, then the memory.
    int(verb, "access", access);
    let buffer: ArrayBuffer;
    let offset = 0;
    let length: number;
    if (typeof memory === "number") {
      const bytes = mrBytesOfLength(verb, int(verb, "length", memory));
      buffer = bytes.buffer as ArrayBuffer;
      length = bytes.length;
    } else if (memory instanceof ArrayBuffer) {
      buffer = memory;
      length = memory.byteLength;
    } else if (ArrayBuffer.isView(memory) && memory.buffer instanceof ArrayBuffer) {
      buffer = memory.buffer;
      offset = memory.byteOffset;
      length = memory.byteLength;
    } else {
      throw typeErr(verb, "memory", "memory", memory);
    }
    let h: NativeMr;
    try {
      h = this.#h.regMr(buffer, offset, length, access);
    } catch (e) {
      throw contractError(e);
    }
    return bind(new NativeMrImpl(h, this, new Uint8Array(buffer, offset, length), access), h);
  }
  createQp(init: QpInitAttr): Qp {
    const verb = "ibv_create_qp";
    if (typeof init !== "object" || init === null) throw typeErr(verb, "init_attr", "object", init);
    // A missing recv_cq is refused by the addon (libibverbs 44 would segfault): pass it on as is.
    const cqHandle = (cq: unknown, what: string) =>
      cq === undefined || cq === null ? (cq as undefined) : handleOf<NativeCq>(cq, what, verb, "CQ");
    let h: NativeQp;
    try {
      h = this.#h.createQp({
        send_cq: cqHandle(init.send_cq, "send_cq") as NativeCq,
        recv_cq: cqHandle(init.recv_cq, "recv_cq") as NativeCq,
        cap: init.cap,
        qp_type: init.qp_type,
        sq_sig_all: init.sq_sig_all,
      });
    } catch (e) {
      throw contractError(e);
    }
    return bind(new NativeQpImpl(h, this, init, this.#layout), h);
  }
  createAh(attr: Partial<Omit<AhAttr, "grh">> & { grh?: Partial<AhAttr["grh"]> }): Ah {
    let h: NativeAh;
    try {
      h = this.#h.createAh(attr);
    } catch (e) {
      throw contractError(e);
    }
    return bind(new NativeAhImpl(h, this), h);
  }
  dealloc(): void {
    this.#h.dealloc();
  }
}

class NativeMrImpl implements Mr {
  readonly #h: NativeMr;
  readonly pd: Pd;
  readonly bytes: Uint8Array;
  readonly addr: number;
  readonly length: number;
  readonly lkey: number;
  readonly rkey: number;
  readonly access: number;
  constructor(h: NativeMr, pd: Pd, bytes: Uint8Array, access: number) {
    this.#h = h;
    this.pd = pd;
    this.bytes = bytes;
    this.addr = h.addr;
    this.length = h.length;
    this.lkey = h.lkey;
    this.rkey = h.rkey;
    this.access = access;
  }
  sge(offset = 0, length = this.length - offset): Sge {
    return { addr: this.addr + offset, length, lkey: this.lkey };
  }
  dereg(): void {
    this.#h.dereg();
  }
}

class NativeCqImpl implements Cq {
  readonly #h: NativeCq;
  readonly #words: number;
  #scratch: Uint32Array;
  /** The hot poll into #scratch (addon.ts, bindPollOut). */
  #pollInto: (num_entries: number) => number;
  /** Completion events ibv_get_cq_event returned for this CQ, and those acknowledged (verbs/cq-events.ts). */
  eventsGot = 0;
  #eventsAcked = 0;
  readonly context: Context;
  readonly cqe: number;
  readonly cq_context?: unknown;
  constructor(h: NativeCq, context: Context, cq_context: unknown, layout: Layout) {
    this.#h = h;
    this.#words = layout.wcWords;
    this.context = context;
    this.cqe = h.cqe;
    if (cq_context !== undefined) this.cq_context = cq_context;
    this.#scratch = new Uint32Array(16 * this.#words);
    this.#pollInto = h.bindPollOut(this.#scratch);
  }
  poll(num_entries = 1): Wc[] {
    // Room for every completion the CQ can hold; the addon validates num_entries itself.
    const want = typeof num_entries === "number" && num_entries > 0 ? Math.min(num_entries, this.cqe + 1) : 1;
    const words = this.#words;
    if (this.#scratch.length < want * words) {
      this.#scratch = new Uint32Array(Math.ceil(want) * words);
      this.#pollInto = this.#h.bindPollOut(this.#scratch);
    }
    const r = this.#scratch;
    let got: number;
    try {
      // More than C's int holds asks for every completion there is, as on the simulator.
      got = this.#pollInto(num_entries > 0x7fffffff ? 0x7fffffff : num_entries);
    } catch (e) {
      throw this.#pollError(contractError(e), num_entries);
    }
    if (got === 0) return [];
    const out: Wc[] = new Array(got);
    for (let i = 0, o = 0; i < got; i++, o += words) {
      out[i] = {
        wr_id: r[o] + r[o + 1] * 0x1_0000_0000,
        status: r[o + 2],
        opcode: r[o + 3],
        vendor_err: r[o + 4],
        byte_len: r[o + 5],
        imm_data: r[o + 6],
        qp_num: r[o + 7],
        src_qp: r[o + 8],
        wc_flags: r[o + 9],
        pkey_index: r[o + 10],
        slid: r[o + 11],
        sl: r[o + 12],
        dlid_path_bits: r[o + 13],
      };
    }
    return out;
  }
  /** The addon's EINVAL for a negative num_entries, with the simulator's why (verbs/args.ts). */
  #pollError(e: unknown, num_entries: number): unknown {
    return e instanceof VerbsError && e.why === undefined && e.attribute === "num_entries" && num_entries < 0
      ? negativeNumEntries(num_entries)
      : e;
  }
  async pollWait(count: number, timeoutMs: number): Promise<Wc[]> {
    if (!Number.isInteger(count) || count < 0) throw typeErr("pollWait", "count", "non-negative-integer", count);
    if (typeof timeoutMs !== "number" || Number.isNaN(timeoutMs))
      throw typeErr("pollWait", "timeoutMs", "number", timeoutMs);
    checkWaitMs("verbslab_poll_wait", "timeoutMs", timeoutMs);
    const out: Wc[] = [];
    const start = performance.now();
    for (;;) {
      if (out.length < count) for (const wc of this.poll(count - out.length)) out.push(wc);
      if (out.length >= count) return out;
      const elapsed = performance.now() - start;
      if (elapsed >= timeoutMs) return out;
      // Spin through the event loop first (latency), then sleep in 1 ms steps (CPU).
      if (elapsed < 5) await immediate();
      else await sleepMs(Math.min(1, timeoutMs - elapsed));
    }
  }
  reqNotify(solicited_only = false): void {
    try {
      this.#h.reqNotify(solicited_only);
    } catch (e) {
      throw contractError(e);
    }
  }
  ackEvents(n: number): void {
    const k = ackCount(n); // the simulator's rule (verbs/args.ts)
    try {
      this.#h.ackEvents(k);
    } catch (e) {
      throw contractError(e);
    }
    this.#eventsAcked += k;
  }
  destroy(): void {
    // The addon would acknowledge them itself to keep ibv_destroy_cq from hanging; libibverbs
    // would hang. Both backends refuse instead, with the same error (verbs/cq-events.ts).
    if (this.eventsGot > this.#eventsAcked) throw unackedEventsError(this.eventsGot - this.#eventsAcked);
    this.#h.destroy();
  }
}

class NativeChannelImpl implements CompChannel {
  readonly #h: NativeChannel;
  constructor(h: NativeChannel) {
    this.#h = h;
  }
  async getCqEvent(timeoutMs?: number): Promise<Cq | null> {
    checkWaitMs("ibv_get_cq_event", "timeoutMs", timeoutMs);
    const cq = await this.#h.getCqEvent(timeoutMs);
    const owner = cq === null ? null : ((owners.get(cq) as Cq | undefined) ?? null);
    if (owner instanceof NativeCqImpl) owner.eventsGot++;
    return owner;
  }
  destroy(): void {
    this.#h.destroy();
  }
}

class NativeAhImpl implements Ah {
  readonly #h: NativeAh;
  readonly pd: Pd;
  constructor(h: NativeAh, pd: Pd) {
    this.#h = h;
    this.pd = pd;
  }
  destroy(): void {
    this.#h.destroy();
  }
}

/** What the addon fills and reads in typed arrays: WC_WORDS per completion, PACKED_SGES per packed WR. */
interface Layout {
  wcWords: number;
  packedSges: number;
}

// The posting fast path: a single WR whose fields are plain numbers is packed into a
// Float64Array (layout in addon.ts, bindPacked), so the addon reads no property and builds
// no string per field. Anything else (bigints, a UD or atomic WR, a missing opcode, more SGEs
// than fit) returns false and takes the general path; so does any value the addon's checks
// would refuse (it hands the WR to postSend([wr]), which throws the usual error).
const SEND_HEAD = 8;
const RECV_HEAD = 2;
const isNum = (x: unknown): x is number => typeof x === "number";
const optNum = (x: unknown): boolean => x === undefined || typeof x === "number";

function packSges(sg_list: unknown, f: Float64Array, at: number, max: number): number {
  if (sg_list === undefined || sg_list === null) return 0;
  if (!Array.isArray(sg_list) || sg_list.length > max) return -1;
  for (let j = 0, o = at; j < sg_list.length; j++, o += 3) {
    const s: unknown = sg_list[j];
    if (typeof s !== "object" || s === null) return -1;
    const { addr, length, lkey } = s as Sge;
    if (!isNum(addr) || !isNum(length) || !isNum(lkey)) return -1;
    f[o] = addr;
    f[o + 1] = length;
    f[o + 2] = lkey;
  }
  return sg_list.length;
}

function packSend(w: unknown, f: Float64Array, max: number): boolean {
  if (typeof w !== "object" || w === null) return false;
  const { wr_id, opcode, send_flags, imm_data, sg_list, rdma, atomic, ud } = w as SendWr;
  if (ud !== undefined || atomic !== undefined || !isNum(opcode)) return false;
  if (!optNum(wr_id) || !optNum(send_flags) || !optNum(imm_data)) return false;
  const n = packSges(sg_list, f, SEND_HEAD, max);
  if (n < 0) return false;
  if (rdma === undefined) {
    f[5] = 0;
  } else {
    if (typeof rdma !== "object" || rdma === null) return false;
    const { remote_addr, rkey } = rdma;
    if (!isNum(remote_addr) || !optNum(rkey)) return false;
    f[5] = 1;
    f[6] = remote_addr;
    f[7] = rkey ?? 0;
  }
  f[0] = wr_id ?? 0;
  f[1] = opcode;
  f[2] = send_flags ?? 0;
  f[3] = imm_data ?? 0;
  f[4] = n;
  return true;
}

function packRecv(w: unknown, f: Float64Array, max: number): boolean {
  if (typeof w !== "object" || w === null) return false;
  const { wr_id, sg_list } = w as RecvWr;
  if (!optNum(wr_id)) return false;
  const n = packSges(sg_list, f, RECV_HEAD, max);
  if (n < 0) return false;
  f[0] = wr_id ?? 0;
  f[1] = n;
  return true;
}

class NativeQpImpl implements Qp {
  readonly #h: NativeQp;
  readonly pd: Pd;
  readonly qp_num: number;
  readonly qp_type: number;
  readonly send_cq: Cq;
  readonly recv_cq: Cq;
  readonly cap: QpCap;
  readonly #packedSges: number;
  readonly #sendWords: Float64Array;
  readonly #recvWords: Float64Array;
  /** The hot posts of one WR packed into #sendWords / #recvWords (addon.ts, bindPacked). */
  readonly #postSendPacked: PostPacked<NativeSendWr>;
  readonly #postRecvPacked: PostPacked<NativeRecvWr>;
  constructor(h: NativeQp, pd: Pd, init: QpInitAttr, layout: Layout) {
    this.#h = h;
    const packedSges = layout.packedSges;
    this.#packedSges = packedSges;
    this.#sendWords = new Float64Array(SEND_HEAD + 3 * packedSges);
    this.#recvWords = new Float64Array(RECV_HEAD + 3 * packedSges);
    [this.#postSendPacked, this.#postRecvPacked] = h.bindPacked(this.#sendWords, this.#recvWords);
    this.pd = pd;
    this.qp_num = h.qp_num;
    this.qp_type = init.qp_type;
    this.send_cq = init.send_cq;
    this.recv_cq = init.recv_cq;
    this.cap = h.cap;
  }
  modify(attr: QpAttrInput, mask: number): void {
    try {
      this.#h.modify(attr, mask);
    } catch (e) {
      throw this.#explain(contractError(e), attr, mask);
    }
  }
  /**
   * The kernel answers a bad modify with a bare errno. Where the transition table knows
   * why (a missing or extra mask bit, an illegal transition), the reason is added; the
   * errno is always the kernel's.
   */
  #explain(e: unknown, attr: QpAttrInput, mask: number): unknown {
    if (!(e instanceof VerbsError) || e.reason !== undefined) return e;
    if (e.code !== "EINVAL" && e.code !== "EOPNOTSUPP") return e;
    let current: number;
    try {
      current = this.#h.query(IBV_QP_STATE).attr.qp_state;
    } catch {
      return e;
    }
    const check = checkModifyMask(this.qp_type, current, attr ?? {}, mask);
    if (check.ok || check.errno !== e.code) return e;
    const attribute = [...check.missing, ...check.notAllowed].join(" | ") || undefined;
    return new VerbsError(e.verb, e.errno, because(check.why, { ...(attribute && { attribute }) }));
  }
  query(mask: number = IBV_QP_ALL_ATTRS): QpQuery {
    try {
      return this.#h.query(mask);
    } catch (e) {
      throw contractError(e);
    }
  }
  postSend(wr: SendWr | SendWr[]): void {
    const one: unknown = Array.isArray(wr) ? (wr.length === 1 ? wr[0] : undefined) : wr;
    try {
      if (packSend(one, this.#sendWords, this.#packedSges)) {
        this.#postSendPacked(one as NativeSendWr);
        return;
      }
      this.#postSendList(wr);
    } catch (e) {
      throw contractError(e);
    }
  }
  #postSendList(wr: SendWr | SendWr[]): void {
    const list = Array.isArray(wr) ? wr : [wr];
    let native: NativeSendWr[] = list as NativeSendWr[];
    // Only UD sends name an object (the AH) that needs translating to its native handle.
    if (list.some((w) => typeof w === "object" && w !== null && w.ud !== undefined)) {
      native = list.map((w) =>
        typeof w === "object" && w !== null && w.ud !== undefined && w.ud !== null
          ? {
              ...w,
              ud: {
                ...w.ud,
                // Not an AH of this backend: no AH (EINVAL at this WR on a UD QP, as on the simulator).
                ah: typeof w.ud.ah === "object" && w.ud.ah !== null ? (handles.get(w.ud.ah) ?? null) : null,
              },
            }
          : w,
      ) as NativeSendWr[];
    }
    this.#h.postSend(native);
  }
  postRecv(wr: RecvWr | RecvWr[]): void {
    const one: unknown = Array.isArray(wr) ? (wr.length === 1 ? wr[0] : undefined) : wr;
    try {
      if (packRecv(one, this.#recvWords, this.#packedSges)) {
        this.#postRecvPacked(one as RecvWr);
        return;
      }
      this.#h.postRecv(Array.isArray(wr) ? wr : [wr]);
    } catch (e) {
      throw contractError(e);
    }
  }
  destroy(): void {
    this.#h.destroy();
  }
}
