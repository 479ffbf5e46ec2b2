/**
 * The rdma_cm contract (verbs/cm.ts) over librdmacm, through the addon's EventChannel, CmId
 * and CmEvent classes (native/src/cm*.cc, declared in ./addon.ts). Built only when the addon
 * was compiled with librdmacm; `backend.cm` is absent otherwise and `cmUnavailableReason`
 * says so.
 *
 * librdmacm moves a CM QP through its states inside its own calls; from outside only the
 * states before and after a call or an event are visible (the addon reads them with
 * ibv_query_qp). `librdmacmSteps` expands such an observed change into the ibv_modify_qp
 * calls librdmacm v44 makes there (librdmacm/cma.c), each reported through `onQpTransition`.
 */
import { isIP } from "node:net";
import type { Context, Pd, Qp } from "../verbs/backend.js";
import {
  RDMA_CM_EVENT_CONNECT_ERROR,
  RDMA_CM_EVENT_ESTABLISHED,
  RDMA_CM_EVENT_REJECTED,
  unackedCmEventsError,
  type AddrInfo,
  type AddrInfoHints,
  type CmBackend,
  type CmEvent,
  type CmEventChannel,
  type CmId,
  type CmQpTransition,
  type CmRoute,
  type ConnParam,
  type ConnParamEvent,
  type SockAddr,
  type UdParamEvent,
} from "../verbs/cm.js";
import {
  IBV_QPS_ERR,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
  IBV_QPT_UD,
} from "../verbs/constants.js";
import { VerbsError, errnos, typeErr } from "../verbs/errors.js";
import type { QpAttrInput, QpInitAttr } from "../verbs/types.js";
import { checkWaitMs } from "../verbs/waits.js";
import {
  RDMACM_MISSING,
  type NativeAddon,
  type NativeCmEvent,
  type NativeCmId,
  type NativeContext,
  type NativeCq,
  type NativeEventChannel,
  type NativePd,
  type NativeQp,
  type NativeQpChange,
  type NativeSockAddr,
} from "./addon.js";
import { because, type ForeignObject } from "../verbs/verb-failure.js";

/** What the CM layer needs from index.ts: the contract objects for native handles. */
export interface NativeWrappers {
  /** The contract Context for a handle (one per handle); `device` names it. */
  context(h: NativeContext, device: string): Context;
  /** The contract Pd for a handle (one per handle). */
  pd(h: NativePd, context: Context): Pd;
  qp(h: NativeQp, pd: Pd, init: QpInitAttr): Qp;
  /** The native handle behind a contract object, or a TypeError naming `field`, which must be a `what`. */
  handleOf<H>(o: unknown, field: string, verb: string, what?: ForeignObject): H;
  /** The contract's error for what the addon threw (index.ts `contractError`: argument errors as data). */
  contractError(e: unknown): unknown;
}

// ---------------------------------------------------------------------------------------
// What librdmacm v44 does to the QP inside each call (cma.c), in order.

interface Step {
  /** The librdmacm function that makes the ibv_modify_qp. */
  by: string;
  to: number;
  /** The mask: rdma_init_qp_attr's for that state, or a fixed one. */
  mask: "init_qp_attr" | number;
}

const RTR_RTS_ERR: Step[] = [
  // ucma_modify_qp_rtr re-applies INIT's attributes before it moves to RTR.
  { by: "ucma_modify_qp_rtr", to: IBV_QPS_INIT, mask: "init_qp_attr" },
  { by: "ucma_modify_qp_rtr", to: IBV_QPS_RTR, mask: "init_qp_attr" },
  { by: "ucma_modify_qp_rts", to: IBV_QPS_RTS, mask: "init_qp_attr" },
  // ucma_modify_qp_err when the accept (or the RTU) could not be sent.
  { by: "ucma_modify_qp_err", to: IBV_QPS_ERR, mask: IBV_QP_STATE },
];
const TO_ERR: Step[] = [{ by: "ucma_modify_qp_err", to: IBV_QPS_ERR, mask: IBV_QP_STATE }];

/** librdmacm's steps for a change seen across `during` (and, in rdma_get_cm_event, `event`). */
export function librdmacmSteps(during: string, event: number, qpType: number): Step[] {
  switch (during) {
    case "rdma_create_qp":
      return qpType === IBV_QPT_UD
        ? [
            { by: "ucma_init_ud_qp", to: IBV_QPS_INIT, mask: "init_qp_attr" },
            { by: "ucma_init_ud_qp", to: IBV_QPS_RTR, mask: IBV_QP_STATE },
            { by: "ucma_init_ud_qp", to: IBV_QPS_RTS, mask: IBV_QP_STATE | IBV_QP_SQ_PSN },
          ]
        : [{ by: "ucma_init_conn_qp", to: IBV_QPS_INIT, mask: "init_qp_attr" }];
    case "rdma_accept":
      return RTR_RTS_ERR;
    case "rdma_disconnect":
      return TO_ERR;
    case "rdma_get_cm_event":
      // The connect response (reported as ESTABLISHED, or CONNECT_ERROR when it failed) and
      // REJECTED are the events librdmacm modifies the QP for (rdma_get_cm_event).
      if (event === RDMA_CM_EVENT_ESTABLISHED || event === RDMA_CM_EVENT_CONNECT_ERROR) return RTR_RTS_ERR;
      if (event === RDMA_CM_EVENT_REJECTED) return TO_ERR;
      return [];
    default:
      return [];
  }
}

/**
 * The transitions from `from` to `to` along `steps`: librdmacm's order, stopping where the
 * observed end state is reached. When the steps cannot explain the change (the program also
 * modified the QP meanwhile), one transition from → to by "librdmacm".
 */
export function expandChange(
  from: number,
  to: number,
  steps: Step[],
): { by: string; from: number; to: number; mask: Step["mask"] }[] {
  const out: { by: string; from: number; to: number; mask: Step["mask"] }[] = [];
  let at = from;
  for (const s of steps) {
    // A modify to INIT is made from RESET (creation) or INIT (ucma_modify_qp_rtr's re-apply).
    if (s.to === IBV_QPS_INIT ? at !== IBV_QPS_INIT && at !== IBV_QPS_RESET : s.to === at) continue;
    out.push({ by: s.by, from: at, to: s.to, mask: s.mask });
    at = s.to;
    if (at === to) return out;
  }
  return [{ by: "librdmacm", from, to, mask: IBV_QP_STATE }];
}

// ---------------------------------------------------------------------------------------

function sockAddr(a: NativeSockAddr | null | undefined): SockAddr {
  return a ? { addr: a.addr, port: a.port } : { addr: "0.0.0.0", port: 0 };
}

function nativeSockAddr(verb: string, what: string, a: unknown): NativeSockAddr {
  if (typeof a !== "object" || a === null) throw typeErr(verb, what, "addr-port", a);
  const { addr, port } = a as SockAddr;
  if (typeof addr !== "string") throw typeErr(verb, `${what}.addr`, "ip-string", addr);
  return { addr, port: port ?? 0 };
}

function nativeConnParam(verb: string, p: ConnParam | undefined): ConnParam | null {
  if (p === undefined || p === null) return null;
  if (typeof p !== "object") throw typeErr(verb, "conn_param", "object", p);
  return p;
}

/**
 * backend.cm for an addon, or why there is none: an addon built without librdmacm has no
 * CM classes (CMake found no <rdma/rdma_cma.h>), and the loader says so.
 */
export function nativeCm(
  addon: NativeAddon,
  wrap: NativeWrappers,
): { cm: CmBackend } | { cmUnavailableReason: string } {
  return addon.RDMACM ? { cm: new NativeCmBackend(addon, wrap) } : { cmUnavailableReason: RDMACM_MISSING };
}

/** backend.cm for the native backend. */
export class NativeCmBackend implements CmBackend {
  readonly #addon: NativeAddon;
  readonly #wrap: NativeWrappers;
  readonly #listeners = new Set<(t: CmQpTransition) => void>();
  constructor(addon: NativeAddon, wrap: NativeWrappers) {
    this.#addon = addon;
    this.#wrap = wrap;
  }
  createEventChannel(): CmEventChannel {
    return new NativeCmChannel(this.#addon.createEventChannel!(), this);
  }
  getAddrInfo(node: string | undefined, service: string | undefined, hints?: AddrInfoHints): AddrInfo[] {
    const verb = "rdma_getaddrinfo";
    // Numeric only: a name would be looked up in DNS (traffic off this machine).
    if (node !== undefined && (typeof node !== "string" || isIP(node) === 0)) {
      throw new VerbsError(
        verb,
        errnos.EINVAL,
        because({ kind: "node-not-numeric", node: String(node) }, { attribute: "node" }),
      );
    }
    if (service !== undefined && (typeof service !== "string" || !/^\d{1,5}$/.test(service) || +service > 65535)) {
      throw new VerbsError(
        verb,
        errnos.EINVAL,
        because({ kind: "service", service: String(service), decimal: true }, { attribute: "service" }),
      );
    }
    let list: ReturnType<NonNullable<NativeAddon["getAddrInfo"]>>;
    try {
      list = this.#addon.getAddrInfo!(node ?? null, service ?? null, hints ?? null);
    } catch (e) {
      throw this.#wrap.contractError(e);
    }
    return list.map((a) => {
      const out: AddrInfo = {
        ai_flags: a.ai_flags,
        ai_family: a.ai_family,
        ai_qp_type: a.ai_qp_type,
        ai_port_space: a.ai_port_space,
      };
      if (a.ai_src_addr) out.ai_src_addr = sockAddr(a.ai_src_addr);
      if (a.ai_dst_addr) out.ai_dst_addr = sockAddr(a.ai_dst_addr);
      return out;
    });
  }
  onQpTransition(listener: (t: CmQpTransition) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** @internal The contract objects for handles. */
  get wrap(): NativeWrappers {
    return this.#wrap;
  }

  /** @internal Reports what librdmacm did to `id`'s QP since the last look. */
  report(id: NativeCmIdImpl): void {
    const changes = id.takeQpChanges();
    if (changes.length === 0) return;
    const qp = id.qpForReport;
    for (const c of changes) {
      if (qp === undefined) continue;
      const from = c.from < 0 ? IBV_QPS_RESET : c.from;
      for (const t of expandChange(from, c.to, librdmacmSteps(c.during, c.event, id.qp_type))) {
        const { attr, mask } = id.stepAttr(t.to, t.mask, qp);
        const transition: CmQpTransition = { qp, id, by: t.by, during: c.during, attr, mask, from: t.from, to: t.to };
        for (const l of this.#listeners) l(transition);
      }
    }
  }
}

class NativeCmChannel implements CmEventChannel {
  readonly #h: NativeEventChannel;
  readonly #cm: NativeCmBackend;
  /** The contract id for each native id (child ids appear first in an event). */
  readonly #ids = new WeakMap<NativeCmId, NativeCmIdImpl>();
  /**
   * Every id until rdma_destroy_id, as in C: an id the program stops referencing must not
   * be garbage-collected (its finalizer would destroy it: a REJ or DREQ at a random time).
   */
  readonly #live = new Set<NativeCmIdImpl>();
  constructor(h: NativeEventChannel, cm: NativeCmBackend) {
    this.#h = h;
    this.#cm = cm;
  }
  createId(ps: number, context?: unknown): CmId {
    const h = this.#h.createId(ps);
    const id = new NativeCmIdImpl(h, this, this.#cm, ps, context);
    this.#ids.set(h, id);
    this.#live.add(id);
    return id;
  }
  /** @internal rdma_destroy_id succeeded. */
  forget(id: NativeCmIdImpl): void {
    this.#live.delete(id);
  }
  #idFor(h: NativeCmId, context: unknown): NativeCmIdImpl {
    let id = this.#ids.get(h);
    if (id === undefined) {
      id = new NativeCmIdImpl(h, this, this.#cm, h.info().ps, context);
      this.#ids.set(h, id);
      this.#live.add(id);
    }
    return id;
  }
  async getEvent(timeoutMs?: number): Promise<CmEvent | null> {
    checkWaitMs("rdma_get_cm_event", "timeoutMs", timeoutMs);
    const ev = await this.#h.getEvent(timeoutMs);
    if (ev === null) return null;
    const listen = ev.listen_id === undefined ? undefined : this.#idFor(ev.listen_id, undefined);
    // A child id inherits the listening id's context, as librdmacm's does.
    const id = this.#idFor(ev.id, listen?.context);
    this.#cm.report(id);
    return new NativeCmEventImpl(ev, id, listen);
  }
  destroy(): void {
    this.#h.destroy();
  }
}

class NativeCmEventImpl implements CmEvent {
  readonly #h: NativeCmEvent;
  #acked = false;
  readonly event: number;
  readonly status: number;
  readonly id: CmId;
  readonly listen_id?: CmId;
  readonly param: { conn?: ConnParamEvent; ud?: UdParamEvent };
  constructor(h: NativeCmEvent, id: CmId, listen: CmId | undefined) {
    this.#h = h;
    this.event = h.event;
    this.status = h.status;
    this.id = id;
    if (listen !== undefined) this.listen_id = listen;
    this.param = {};
    if (h.conn !== undefined) this.param.conn = { ...h.conn };
    if (h.ud !== undefined) this.param.ud = { ...h.ud };
  }
  ack(): void {
    // librdmacm frees the event: a second rdma_ack_cm_event would be a double free.
    if (this.#acked) {
      throw new VerbsError("rdma_ack_cm_event", errnos.EINVAL, because({ kind: "event-acked" }));
    }
    this.#h.ack();
    this.#acked = true;
  }
}

class NativeCmIdImpl implements CmId {
  readonly #h: NativeCmId;
  readonly #cm: NativeCmBackend;
  readonly channel: NativeCmChannel;
  readonly ps: number;
  readonly qp_type: number;
  readonly context?: unknown;
  #qp: Qp | undefined;
  constructor(h: NativeCmId, channel: NativeCmChannel, cm: NativeCmBackend, ps: number, context: unknown) {
    this.#h = h;
    this.#cm = cm;
    this.channel = channel;
    this.ps = ps;
    this.qp_type = h.info().qp_type;
    if (context !== undefined) this.context = context;
  }
  get verbs(): Context | undefined {
    const v = this.#h.verbs();
    const device = this.#h.info().device;
    return v === null || device === null ? undefined : this.#cm.wrap.context(v, device);
  }
  get port_num(): number {
    return this.#h.info().port_num;
  }
  get qp(): Qp | undefined {
    // id->qp is cleared by rdma_destroy_qp and by destroying the QP itself.
    return this.#h.info().qp_num === null ? undefined : this.#qp;
  }
  /** @internal The QP to name in a transition report (still set right after a destroy). */
  get qpForReport(): Qp | undefined {
    return this.#qp;
  }
  get route(): CmRoute {
    const i = this.#h.info();
    const r: CmRoute = {
      src_addr: sockAddr(i.src_addr),
      dst_addr: sockAddr(i.dst_addr),
      sgid: i.sgid,
      dgid: i.dgid,
      pkey: i.pkey,
      num_paths: i.route.num_paths,
    };
    const p = i.route.path;
    if (p !== undefined) {
      // struct ibv_sa_path_rec has no GID type: the SGID's entry in the device's table does.
      const gid = this.verbs?.queryGidTable().find((g) => g.gid === p.sgid);
      r.path_rec = {
        dgid: p.dgid,
        sgid: p.sgid,
        pkey: p.pkey,
        mtu: p.mtu,
        rate: p.rate,
        packet_life_time: p.packet_life_time,
        sl: p.sl,
        traffic_class: p.traffic_class,
        hop_limit: p.hop_limit,
        flow_label: p.flow_label,
        gid_type: gid?.gid_type ?? 0,
      };
    }
    return r;
  }
  /** Runs an addon call, its argument errors made the contract's (index.ts `contractError`). */
  #call<T>(f: () => T): T {
    try {
      return f();
    } catch (e) {
      throw this.#cm.wrap.contractError(e);
    }
  }
  bindAddr(addr: SockAddr): void {
    const a = nativeSockAddr("rdma_bind_addr", "addr", addr);
    this.#call(() => this.#h.bindAddr(a));
  }
  listen(backlog: number): void {
    this.#call(() => this.#h.listen(backlog));
  }
  resolveAddr(src: SockAddr | undefined, dst: SockAddr, timeoutMs: number): void {
    const verb = "rdma_resolve_addr";
    const s = src === undefined || src === null ? null : nativeSockAddr(verb, "src_addr", src);
    const d = nativeSockAddr(verb, "dst_addr", dst);
    this.#call(() => this.#h.resolveAddr(s, d, timeoutMs));
  }
  resolveRoute(timeoutMs: number): void {
    this.#call(() => this.#h.resolveRoute(timeoutMs));
  }
  createQp(pd: Pd | undefined, init: QpInitAttr): Qp {
    const verb = "rdma_create_qp";
    if (typeof init !== "object" || init === null) throw typeErr(verb, "init_attr", "object", init);
    const w = this.#cm.wrap;
    const cq = (c: unknown, what: string) =>
      c === undefined || c === null ? (c as undefined) : w.handleOf<NativeCq>(c, what, verb, "CQ");
    const pdHandle = pd === undefined || pd === null ? null : w.handleOf<NativePd>(pd, "pd", verb);
    const h = this.#call(() =>
      this.#h.createQp(pdHandle, {
        send_cq: cq(init.send_cq, "send_cq") as NativeCq,
        recv_cq: cq(init.recv_cq, "recv_cq") as NativeCq,
        cap: init.cap,
        qp_type: init.qp_type,
        sq_sig_all: init.sq_sig_all,
      }),
    );
    // Without a PD, the QP's is librdmacm's own for the device (a Pd object of its context).
    const qpPd = pd ?? w.pd(h.pd, this.verbs!);
    this.#qp = w.qp(h, qpPd, init);
    this.#cm.report(this);
    return this.#qp;
  }
  destroyQp(): void {
    this.#h.destroyQp();
    this.#qp = undefined;
  }
  connect(param?: ConnParam): void {
    const p = nativeConnParam("rdma_connect", param);
    this.#call(() => this.#h.connect(p));
    this.#cm.report(this);
  }
  accept(param?: ConnParam): void {
    try {
      const p = nativeConnParam("rdma_accept", param);
      this.#call(() => this.#h.accept(p));
    } finally {
      this.#cm.report(this); // a failed accept still moved the QP (to ERR)
    }
  }
  reject(private_data?: Uint8Array): void {
    this.#call(() => this.#h.reject(private_data ?? null));
  }
  disconnect(): void {
    try {
      this.#h.disconnect();
    } finally {
      this.#cm.report(this);
    }
  }
  initQpAttr(qp_state: number): { attr: QpAttrInput; mask: number } {
    const r = this.#call(() => this.#h.initQpAttr(qp_state));
    return { attr: r.attr, mask: r.attr_mask };
  }
  joinMulticast(addr: SockAddr): void {
    const a = nativeSockAddr("rdma_join_multicast", "addr", addr);
    this.#call(() => this.#h.joinMulticast(a));
  }
  leaveMulticast(addr: SockAddr): void {
    const a = nativeSockAddr("rdma_leave_multicast", "addr", addr);
    // librdmacm waits (for ever) until the join's events are acknowledged.
    const n = this.#h.unacked();
    if (n > 0) throw unackedCmEventsError(n, "rdma_leave_multicast");
    this.#call(() => this.#h.leaveMulticast(a));
  }
  getLocalAddr(): SockAddr {
    return sockAddr(this.#h.info().src_addr);
  }
  getPeerAddr(): SockAddr {
    return sockAddr(this.#h.info().dst_addr);
  }
  destroy(): void {
    const n = this.#h.unacked();
    if (n > 0) throw unackedCmEventsError(n);
    this.#h.destroy();
    this.#qp = undefined;
    this.channel.forget(this);
  }

  /** @internal */
  takeQpChanges(): NativeQpChange[] {
    return this.#h.takeQpChanges();
  }
  /**
   * @internal The attributes and mask of one librdmacm modify to `to`: the mask librdmacm
   * used (rdma_init_qp_attr's, asked again now, or its fixed one), the values the QP holds.
   */
  stepAttr(to: number, mask: Step["mask"], qp: Qp): { attr: QpAttrInput; mask: number } {
    let m = typeof mask === "number" ? mask : IBV_QP_STATE;
    let attr: QpAttrInput = { qp_state: to };
    if (mask === "init_qp_attr") {
      try {
        const r = this.#h.initQpAttr(to);
        m = r.attr_mask;
        attr = { ...r.attr, qp_state: to };
      } catch {
        // The CM id has moved on (rejected, disconnected): the state is what is certain.
      }
    }
    if (m !== IBV_QP_STATE && to !== IBV_QPS_INIT) {
      // librdmacm overrides rdma_init_qp_attr's max_(dest_)rd_atomic with the negotiated
      // values (ucma_modify_qp_rtr/rts): the QP holds what it set.
      try {
        const now = qp.query().attr;
        if (to === IBV_QPS_RTR) attr.max_dest_rd_atomic = now.max_dest_rd_atomic;
        if (to === IBV_QPS_RTS && this.qp_type !== IBV_QPT_UD) attr.max_rd_atomic = now.max_rd_atomic;
        if (to === IBV_QPS_RTS && this.qp_type === IBV_QPT_UD) attr.sq_psn = 0;
      } catch {
        // the QP is gone
      }
    }
    return { attr, mask: m };
  }
}
