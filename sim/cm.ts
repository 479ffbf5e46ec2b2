/**
 * The simulator's rdma_cm (verbs/cm.ts): librdmacm over the kernel's rdma_cm and IB CM as rxe
 * runs them on Linux 6.1 / rdma-core 44.
 *
 * Three layers, each where its C lives:
 * - librdmacm (SimCmId methods, `getEvent`): argument checks, and the QP transitions it makes
 *   for the program, exactly as cma.c does them (ucma_init_conn_qp, ucma_init_ud_qp,
 *   ucma_modify_qp_rtr — an INIT→INIT modify first — ucma_modify_qp_rts, ucma_modify_qp_err),
 *   some inside `rdma_get_cm_event` (CONNECT_RESPONSE → RTR, RTS and the RTU; REJECTED → ERR).
 * - the kernel's rdma_cm (ports, address and route resolution, the event queue of a channel).
 * - the IB CM (`sim/cm-protocol.ts`): REQ, MRA, REP, RTU, REJ, DREQ, DREP, SIDR_REQ/REP as
 *   MADs on QP1, their timeouts and retries on the virtual clock, and timewait.
 */
import type { Context, Pd, Qp } from "../verbs/backend.js";
import {
  IB_CM_REJ_CONSUMER_DEFINED,
  RDMA_CM_EVENT_ADDR_ERROR,
  RDMA_CM_EVENT_ADDR_RESOLVED,
  RDMA_CM_EVENT_CONNECT_ERROR,
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_CONNECT_RESPONSE,
  RDMA_CM_EVENT_ESTABLISHED,
  RDMA_CM_EVENT_REJECTED,
  RDMA_CM_EVENT_ROUTE_RESOLVED,
  RDMA_CM_PRIVATE_DATA_MAX,
  RDMA_MAX_INIT_DEPTH,
  RDMA_MAX_RESP_RES,
  RDMA_PS_TCP,
  RDMA_PS_UDP,
  RDMA_UDP_QKEY,
  RAI_PASSIVE,
  ib_cm_sidr_status,
  rdmaEventStr,
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
  IBV_ACCESS_REMOTE_ATOMIC,
  IBV_ACCESS_REMOTE_READ,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_QPS_ERR,
  IBV_QPS_INIT,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_RC,
  IBV_QPT_UD,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_AV,
  IBV_QP_DEST_QPN,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_PATH_MTU,
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_QKEY,
  IBV_QP_RETRY_CNT,
  IBV_QP_RNR_RETRY,
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
  IBV_QP_TIMEOUT,
} from "../verbs/constants.js";
import { VerbsError, errnos, fail } from "../verbs/errors.js";
import type { AhAttr, QpAttrInput, QpInitAttr } from "../verbs/types.js";
import { alive, int, obj, typeErr } from "./check.js";
import {
  AF_INET,
  EPHEMERAL_HIGH,
  EPHEMERAL_LOW,
  anyOrLoopback,
  deviceOfIp,
  iboePath,
  ipGid,
  ipText,
  isAny,
  onLabNet,
  sockAddr,
  toSockAddr,
  type Ip4,
} from "./cm-addr.js";
import { joinMulticast, leaveAllOnDestroy, leaveMulticast, type McJoin } from "./cm-join.js";
import { isMulticastIp } from "./cm-mcast.js";
import { CmConn, emptyConn, padded, type RepInfo, type ReqInfo } from "./cm-protocol.js";
import { schedule } from "./cm-protocol.js";
import { checkWait, waitFor } from "./clock.js";
import { SimContext } from "./context.js";
import type { SimDevice } from "./device.js";
import type { SimPd } from "./pd.js";
import { SimQp } from "./qp.js";
import type { SimWorld } from "./world.js";
import { because, type PrivateDataCarrier } from "../verbs/verb-failure.js";

/** The kernel rdma_cm id states that decide what a call may do (enum rdma_cm_state). */
export type CmaState =
  | "idle"
  | "addr_query"
  | "addr_resolved"
  | "route_query"
  | "route_resolved"
  | "connect"
  | "disconnect"
  | "addr_bound"
  | "listen"
  | "destroying";

/** The connection manager of one simulated world: `backend.cm`. */
export class SimCm implements CmBackend {
  private listeners = new Set<(t: CmQpTransition) => void>();
  /** Bound ports per port space: port → the ids on it (cma_ps_find's bind lists). */
  readonly ports = new Map<number, Map<number, Set<SimCmId>>>();
  /** librdmacm's own ibv_context and PD per device (ucma_get_device: one per device, for every id). */
  private contexts = new Map<SimDevice, SimContext>();
  private pds = new Map<SimDevice, SimPd>();
  /** Every live IB CM connection endpoint by its local communication ID (where MADs go). */
  readonly conns = new Map<number, CmConn>();

  constructor(readonly world: SimWorld) {}

  createEventChannel(): SimCmChannel {
    return new SimCmChannel(this);
  }

  getAddrInfo(node: string | undefined, service: string | undefined, hints: AddrInfoHints = {}): AddrInfo[] {
    const verb = "rdma_getaddrinfo";
    const h = obj(verb, "hints", hints);
    const flags = h.ai_flags === undefined ? 0 : int(verb, "hints.ai_flags", h.ai_flags);
    const ps = h.ai_port_space === undefined ? RDMA_PS_TCP : int(verb, "hints.ai_port_space", h.ai_port_space);
    const qpType =
      h.ai_qp_type === undefined
        ? ps === RDMA_PS_UDP
          ? IBV_QPT_UD
          : IBV_QPT_RC
        : int(verb, "hints.ai_qp_type", h.ai_qp_type);
    if (ps !== RDMA_PS_TCP && ps !== RDMA_PS_UDP)
      fail(verb, "EINVAL", because({ kind: "port-space", ps, numbers: false }, { attribute: "hints.ai_port_space" }));
    if (node !== undefined && typeof node !== "string") throw typeErr(verb, "node", "string", node);
    if (service !== undefined && typeof service !== "string") throw typeErr(verb, "service", "string", service);
    let port = 0;
    if (service !== undefined) {
      if (!/^\d{1,5}$/.test(service) || Number(service) > 0xffff)
        fail(
          verb,
          "EINVAL",
          because({ kind: "service", service: String(service), decimal: false }, { attribute: "service" }),
        );
      port = Number(service);
    }
    const passive = (flags & RAI_PASSIVE) !== 0;
    if (node === undefined && !passive) fail(verb, "EINVAL", because({ kind: "node-required" }, { attribute: "node" }));
    const ip = node === undefined ? { bytes: [0, 0, 0, 0], port } : { ...sockAddr(verb, "node", { addr: node }), port };
    const addr = toSockAddr(ip.bytes, port);
    return [
      {
        ai_flags: flags,
        ai_family: AF_INET,
        ai_qp_type: qpType,
        ai_port_space: ps,
        ...(passive ? { ai_src_addr: addr } : { ai_dst_addr: addr }),
      },
    ];
  }

  onQpTransition(listener: (t: CmQpTransition) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** librdmacm's ibv_context for a device (opened once, shared by every id on it). */
  contextOf(dev: SimDevice): SimContext {
    let c = this.contexts.get(dev);
    if (!c || c.destroyed) {
      c = new SimContext(this.world, dev);
      this.contexts.set(dev, c);
    }
    return c;
  }

  /** librdmacm's PD for a device (id->pd until rdma_create_qp names one). */
  pdOf(dev: SimDevice): SimPd {
    let p = this.pds.get(dev);
    if (!p || p.destroyed) {
      p = this.contextOf(dev).allocPd();
      this.pds.set(dev, p);
    }
    return p;
  }

  /**
   * One ibv_modify_qp librdmacm makes: done on the QP (its VerbsError propagates), then
   * reported to every onQpTransition listener.
   */
  modifyQp(id: SimCmId, by: string, during: string, attr: QpAttrInput, mask: number): void {
    const qp = id.qp as SimQp;
    const from = qp.attr.qp_state;
    qp.modify(attr, mask);
    const t: CmQpTransition = { qp, id, by, during, attr, mask, from, to: qp.attr.qp_state };
    for (const l of [...this.listeners]) l(t);
  }

  /** A random free port of the ephemeral range (cma_alloc_any_port). */
  anyPort(ps: number): number {
    const used = this.ports.get(ps);
    const n = EPHEMERAL_HIGH - EPHEMERAL_LOW + 1;
    let p = EPHEMERAL_LOW + (this.world.rng.u32() % n);
    for (let i = 0; i < n; i++, p = p === EPHEMERAL_HIGH ? EPHEMERAL_LOW : p + 1) if (!used?.get(p)?.size) return p;
    return fail("rdma_bind_addr", "EADDRNOTAVAIL", because({ kind: "ephemeral-ports" }));
  }

  bindPort(id: SimCmId, port: number): void {
    let m = this.ports.get(id.ps);
    if (!m) this.ports.set(id.ps, (m = new Map()));
    let s = m.get(port);
    if (!s) m.set(port, (s = new Set()));
    s.add(id);
  }

  releasePort(id: SimCmId): void {
    if (!id.src) return;
    this.ports.get(id.ps)?.get(id.src.port)?.delete(id);
  }

  /** The listening id a REQ / SIDR_REQ for (ps, port, dst IP) reaches on `dev`, if any (cma_find_listener). */
  findListener(dev: SimDevice, ps: number, port: number, dst: number[]): SimCmId | undefined {
    for (const id of this.ports.get(ps)?.get(port) ?? []) {
      if (id.state !== "listen" || id.destroyed) continue;
      if (id.device && id.device !== dev) continue;
      if (id.src && !isAny(id.src.bytes) && ipText(id.src.bytes) !== ipText(dst)) continue;
      return id;
    }
    return undefined;
  }
}

/** One event in a channel's queue (the kernel's ucma_event), not yet got. */
export interface Pending {
  event: number;
  status: number;
  id: SimCmId;
  listen_id?: SimCmId;
  conn?: ConnParamEvent;
  ud?: UdParamEvent;
  /** librdmacm's processing in rdma_get_cm_event (ucma_process_conn_resp, REJECTED → ERR, ucma_process_join). */
  process?: (e: Pending) => void;
  /** The multicast join a MULTICAST_JOIN / MULTICAST_ERROR is about (dropped by its leave). */
  mc?: McJoin;
}

/** struct rdma_event_channel */
export class SimCmChannel implements CmEventChannel {
  destroyed = false;
  readonly ids = new Set<SimCmId>();
  private queue: Pending[] = [];

  constructor(readonly cm: SimCm) {}

  createId(ps: number, context?: unknown): SimCmId {
    alive("rdma_create_id", "event channel", this);
    const p = int("rdma_create_id", "ps", ps);
    if (p !== RDMA_PS_TCP && p !== RDMA_PS_UDP)
      fail("rdma_create_id", "EINVAL", because({ kind: "port-space", ps: p, numbers: true }, { attribute: "ps" }));
    const id = new SimCmId(this, p, context);
    this.ids.add(id);
    return id;
  }

  /** Queues an event for the program and wakes a waiting getEvent. */
  push(e: Pending): void {
    this.queue.push(e);
    this.cm.world.clock.poke();
  }

  /** Drops the queued events of a destroyed id (ucma_cleanup_ctx_events); returns them. */
  dropEventsOf(id: SimCmId): Pending[] {
    return this.dropWhere((e) => e.id === id || e.listen_id === id);
  }

  /** Drops the queued events `which` picks (also ucma_cleanup_mc_events); returns them. */
  dropWhere(which: (e: Pending) => boolean): Pending[] {
    const gone = this.queue.filter(which);
    this.queue = this.queue.filter((e) => !gone.includes(e));
    return gone;
  }

  getEvent(timeoutMs?: number): Promise<CmEvent | null> {
    const verb = "rdma_get_cm_event";
    alive(verb, "event channel", this);
    if (timeoutMs !== undefined && (typeof timeoutMs !== "number" || Number.isNaN(timeoutMs)))
      throw typeErr(verb, "timeoutMs", "number", timeoutMs);
    checkWait(this.cm.world.clock, verb, "timeoutMs", timeoutMs);
    return waitFor<CmEvent | null>(
      this.cm.world.clock,
      () => {
        if (this.destroyed) return null;
        const e = this.queue.shift();
        if (!e) return undefined;
        e.process?.(e);
        return new SimCmEvent(e);
      },
      timeoutMs,
      () => null,
    );
  }

  /** The id of a new connection request on `listener` (cma_ib_new_conn_id); the program meets it in CONNECT_REQUEST. */
  createChildId(listener: SimCmId): SimCmId {
    const id = new SimCmId(this, listener.ps, listener.context);
    this.ids.add(id);
    return id;
  }

  destroy(): void {
    alive("rdma_destroy_event_channel", "event channel", this);
    const live = [...this.ids].filter((i) => !i.destroyed).length;
    if (live)
      fail(
        "rdma_destroy_event_channel",
        "EBUSY",
        because({ kind: "cm-channel-busy", ids: live }, { attribute: "rdma_destroy_id" }),
      );
    this.destroyed = true;
  }
}

/** struct rdma_cm_event as got: its id counts it until ack(). */
export class SimCmEvent implements CmEvent {
  readonly event: number;
  readonly status: number;
  readonly id: SimCmId;
  readonly listen_id?: SimCmId;
  readonly param: { conn?: ConnParamEvent; ud?: UdParamEvent };
  private acked = false;
  /** The id whose events_completed the ack counts (the listening id for CONNECT_REQUEST). */
  private readonly owner: SimCmId;

  constructor(e: Pending) {
    this.event = e.event;
    this.status = e.status;
    this.id = e.id;
    if (e.listen_id) this.listen_id = e.listen_id;
    this.param = e.ud ? { ud: e.ud } : { conn: e.conn ?? emptyConn() };
    this.owner = e.listen_id ?? e.id;
    this.owner.unacked++;
  }

  ack(): void {
    if (this.acked)
      fail(
        "rdma_ack_cm_event",
        "EINVAL",
        because({ kind: "event-acked", event: rdmaEventStr(this.event) }, { attribute: "event" }),
      );
    this.acked = true;
    this.owner.unacked--;
  }
}

/** The conn_param fields a program passes, checked (uint8_t each, private data a Uint8Array). */
interface CheckedParam {
  private_data?: Uint8Array;
  responder_resources: number;
  initiator_depth: number;
  flow_control: number;
  retry_count: number;
  rnr_retry_count: number;
  srq: number;
  qp_num: number;
}

function checkParam(verb: string, v: unknown): CheckedParam | undefined {
  if (v === undefined || v === null) return undefined;
  const o = obj(verb, "conn_param", v);
  const u8 = (k: string): number => {
    if (o[k] === undefined) return 0;
    const n = int(verb, `conn_param.${k}`, o[k]);
    if (n < 0 || n > 255)
      fail(verb, "EINVAL", because({ kind: "conn-param-u8", field: k, value: n }, { attribute: `conn_param.${k}` }));
    return n;
  };
  const pd = o.private_data;
  if (pd !== undefined && !(pd instanceof Uint8Array)) throw typeErr(verb, "conn_param.private_data", "uint8array", pd);
  if (pd && pd.length > 255)
    fail(
      verb,
      "EINVAL",
      because({ kind: "private-data-u8", bytes: pd.length, param: true }, { attribute: "conn_param.private_data_len" }),
    );
  const qpn = o.qp_num === undefined ? 0 : int(verb, "conn_param.qp_num", o.qp_num) >>> 0;
  return {
    ...(pd && { private_data: pd }),
    responder_resources: u8("responder_resources"),
    initiator_depth: u8("initiator_depth"),
    flow_control: u8("flow_control"),
    retry_count: u8("retry_count"),
    rnr_retry_count: u8("rnr_retry_count"),
    srq: u8("srq"),
    qp_num: qpn,
  };
}

function tooLong(verb: string, pd: Uint8Array | undefined, max: number, what: PrivateDataCarrier): void {
  if (pd && pd.length > max)
    fail(
      verb,
      "EINVAL",
      because({ kind: "private-data-long", bytes: pd.length, what, max }, { attribute: "private_data_len" }),
    );
}

/** struct rdma_cm_id */
export class SimCmId implements CmId {
  destroyed = false;
  state: CmaState = "idle";
  readonly qp_type: number;
  /** Events got and not yet acknowledged that count on this id. */
  unacked = 0;
  /** The device the id is bound to (cma_dev), and whether librdmacm has learnt it (id->verbs). */
  device: SimDevice | undefined;
  private verbsKnown = false;
  src: Ip4 | undefined;
  dst: Ip4 | undefined;
  path: ReturnType<typeof iboePath> | undefined;
  private qpObj: SimQp | undefined;
  /** The rdma_cm PSN (id_priv->seq_num): every rq_psn librdmacm sets on this id's QP. */
  readonly seqNum: number;
  /** librdmacm's responder_resources / initiator_depth for the id (id_priv). */
  respRes = 0;
  initDepth = 0;
  /** The IB CM endpoint once connecting (id_priv->cm_id.ib). */
  conn: CmConn | undefined;
  /** The multicast groups joined and not yet left, in join order (id_priv->mc_list). */
  readonly mcJoins: McJoin[] = [];
  /** ucma's connect_error: set when librdmacm could not finish a CONNECT_RESPONSE. */
  connectError = false;
  private addrTimer: { cancel(): void } | undefined;
  /** dev_addr.bound_dev_if: the netdev (as its device) of the last specific address bound, even by a bind that failed. */
  private boundNetdev: SimDevice | undefined;

  constructor(
    readonly channel: SimCmChannel,
    readonly ps: number,
    readonly context: unknown,
  ) {
    this.qp_type = ps === RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
    this.seqNum = channel.cm.world.rng.u32() & 0xffffff;
  }

  get cm(): SimCm {
    return this.channel.cm;
  }

  get verbs(): Context | undefined {
    return this.device && this.verbsKnown ? this.cm.contextOf(this.device) : undefined;
  }

  get port_num(): number {
    return this.device && this.verbsKnown ? 1 : 0;
  }

  /** id->qp: unset by rdma_destroy_qp and by destroying the QP itself (as the native backend reports it). */
  get qp(): Qp | undefined {
    return this.qpObj && !this.qpObj.destroyed ? this.qpObj : undefined;
  }

  get route(): CmRoute {
    const sgid = this.src && !isAny(this.src.bytes) ? ipText(this.src.bytes) : undefined;
    return {
      src_addr: this.src ? toSockAddr(this.src.bytes, this.src.port) : { addr: "0.0.0.0", port: 0 },
      dst_addr: this.dst ? toSockAddr(this.dst.bytes, this.dst.port) : { addr: "0.0.0.0", port: 0 },
      sgid: this.path?.sgid ?? (sgid ? `::ffff:${sgid}` : "::"),
      dgid: this.path?.dgid ?? (this.dst && this.state !== "addr_query" ? `::ffff:${ipText(this.dst.bytes)}` : "::"),
      pkey: this.device ? 0xffff : 0,
      num_paths: this.path ? 1 : 0,
      ...(this.path && { path_rec: { ...this.path } }),
    };
  }

  private live(verb: string): void {
    alive(verb, "rdma_cm_id", this);
  }

  /** The device becomes the id's, and librdmacm knows it (ucma_get_device). */
  attach(dev: SimDevice): void {
    this.device = dev;
    this.verbsKnown = true;
  }

  // --- addresses -------------------------------------------------------------------------

  bindAddr(addr: SockAddr): void {
    const verb = "rdma_bind_addr";
    this.live(verb);
    const a = sockAddr(verb, "addr", addr);
    if (this.state !== "idle")
      fail(verb, "EINVAL", because({ kind: "id-bound", state: this.state }, { attribute: "id" }));
    this.bind(verb, a);
  }

  /** rdma_bind_addr's kernel half: the device of the IP (unless any), then the port. */
  private bind(verb: string, a: Ip4): void {
    let dev: SimDevice | undefined;
    if (!anyOrLoopback(a.bytes)) {
      dev = deviceOfIp(this.cm.world, a.bytes) ?? undefined;
      if (this.boundNetdev) {
        // rdma_translate_ip takes the netdev a failed bind left on the id (bound_dev_if), and
        // cma_acquire_dev_by_src_ip finds no device with this address's GID on it.
        if (dev !== this.boundNetdev)
          fail(
            verb,
            "ENODEV",
            because(
              { kind: "bind-stale-netdev", netdev: this.boundNetdev.name, ip: ipText(a.bytes) },
              { attribute: "addr" },
            ),
          );
      } else if (!dev)
        fail(verb, "EADDRNOTAVAIL", because({ kind: "no-device-ip", ip: ipText(a.bytes) }, { attribute: "addr" }));
      // The kernel keeps the netdev on the id even when the port below is refused (RXE-FACTS §10.1).
      this.boundNetdev = dev;
    }
    let port = a.port;
    if (port === 0) port = this.cm.anyPort(this.ps);
    else {
      if (port < 1024 && !this.cm.world.root)
        fail(verb, "EACCES", because({ kind: "port-privileged", port }, { attribute: "addr.port" }));
      for (const other of this.cm.ports.get(this.ps)?.get(port) ?? []) {
        if (other === this || other.destroyed || !other.src) continue;
        if (anyOrLoopback(a.bytes) || anyOrLoopback(other.src.bytes))
          fail(verb, "EADDRNOTAVAIL", because({ kind: "port-any-conflict", port }, { attribute: "addr.port" }));
        if (ipText(a.bytes) === ipText(other.src.bytes))
          fail(verb, "EADDRINUSE", because({ kind: "addr-in-use", ip: ipText(a.bytes), port }, { attribute: "addr" }));
      }
    }
    this.src = { bytes: a.bytes, port };
    this.cm.bindPort(this, port);
    if (dev) this.attach(dev);
    this.state = "addr_bound";
  }

  listen(backlog: number): void {
    const verb = "rdma_listen";
    this.live(verb);
    int(verb, "backlog", backlog);
    if (this.state === "idle") this.bind(verb, { bytes: [0, 0, 0, 0], port: 0 });
    if (this.state !== "addr_bound")
      fail(verb, "EINVAL", because({ kind: "id-state", step: "listen", state: this.state }, { attribute: "id" }));
    this.state = "listen";
  }

  resolveAddr(src: SockAddr | undefined, dst: SockAddr, timeoutMs: number): void {
    const verb = "rdma_resolve_addr";
    this.live(verb);
    const d = sockAddr(verb, "dst_addr", dst);
    const s = src === undefined || src === null ? undefined : sockAddr(verb, "src_addr", src);
    const t = int(verb, "timeout_ms", timeoutMs);
    if (this.state !== "idle" && this.state !== "addr_bound")
      fail(verb, "EINVAL", because({ kind: "id-state", step: "resolve-addr", state: this.state }, { attribute: "id" }));
    const world = this.cm.world;
    // Where the route goes, decided now as ip_route_output does (rdma_resolve_ip).
    let owner: SimDevice | null = null;
    if (anyOrLoopback(d.bytes)) owner = world.devices[0];
    else if (isMulticastIp(d.bytes)) {
      // ip_route_output_key: a multicast destination leaves through the source address's
      // netdev; without a source it needs a route, and the lab has none for 224.0.0.0/4.
      const from = s ?? this.src;
      owner = from && !anyOrLoopback(from.bytes) ? deviceOfIp(world, from.bytes) : null;
      if (!owner)
        fail(
          verb,
          "ENETUNREACH",
          because({ kind: "cm-no-route", ip: ipText(d.bytes), mcast: true }, { attribute: "dst_addr" }),
        );
    } else {
      owner = deviceOfIp(world, d.bytes);
      if (!owner && !onLabNet(d.bytes))
        fail(
          verb,
          "ENETUNREACH",
          because({ kind: "cm-no-route", ip: ipText(d.bytes), mcast: false }, { attribute: "dst_addr" }),
        );
    }
    if (this.state === "idle") {
      // cma_bind_addr: an unbound id binds to the source given, or to the any address.
      this.bind(verb, s ?? { bytes: [0, 0, 0, 0], port: 0 });
    }
    this.dst = d;
    this.state = "addr_query";
    if (owner) {
      // A local destination routes through lo: the source is the destination itself unless
      // bound, and an unbound id takes the destination's device (rdma_translate_ip).
      const dev = owner;
      const job = world.clock;
      const timer = schedule(job, 0, () => {
        this.addrTimer = undefined;
        if (this.destroyed || this.state !== "addr_query") return;
        if (!this.device) this.device = dev;
        if (isAny(this.src!.bytes))
          this.src = { bytes: anyOrLoopback(d.bytes) ? [127, 0, 0, 1] : d.bytes, port: this.src!.port };
        this.state = "addr_resolved";
        this.channel.push({
          event: RDMA_CM_EVENT_ADDR_RESOLVED,
          status: 0,
          id: this,
          process: () => this.attach(this.device!),
        });
      });
      this.addrTimer = timer;
    } else {
      // On the lab subnet but nobody has the address: ARP never answers; the kernel gives up
      // at the deadline (process_one_req: -ETIMEDOUT).
      const timer = schedule(world.clock, t, () => {
        this.addrTimer = undefined;
        if (this.destroyed || this.state !== "addr_query") return;
        this.state = "addr_bound";
        this.channel.push({ event: RDMA_CM_EVENT_ADDR_ERROR, status: -errnos.ETIMEDOUT, id: this });
      });
      this.addrTimer = timer;
    }
  }

  resolveRoute(timeoutMs: number): void {
    const verb = "rdma_resolve_route";
    this.live(verb);
    int(verb, "timeout_ms", timeoutMs);
    if (this.state !== "addr_resolved")
      fail(
        verb,
        "EINVAL",
        because({ kind: "id-state", step: "resolve-route", state: this.state }, { attribute: "id" }),
      );
    this.state = "route_query";
    const dev = this.device!;
    this.path = iboePath(dev, this.src!, this.dst!);
    this.addrTimer = schedule(this.cm.world.clock, 0, () => {
      this.addrTimer = undefined;
      if (this.destroyed || this.state !== "route_query") return;
      this.state = "route_resolved";
      this.channel.push({ event: RDMA_CM_EVENT_ROUTE_RESOLVED, status: 0, id: this });
    });
  }

  getLocalAddr(): SockAddr {
    this.live("rdma_get_local_addr");
    return this.route.src_addr;
  }

  getPeerAddr(): SockAddr {
    this.live("rdma_get_peer_addr");
    return this.route.dst_addr;
  }

  // --- the QP ----------------------------------------------------------------------------

  createQp(pd: Pd | undefined, init: QpInitAttr): Qp {
    const verb = "rdma_create_qp";
    this.live(verb);
    if (this.qpObj && !this.qpObj.destroyed) fail(verb, "EINVAL", because({ kind: "id-has-qp" }, { attribute: "id" }));
    if (!this.device || !this.verbsKnown)
      fail(verb, "EINVAL", because({ kind: "id-unbound", join: false }, { attribute: "id" }));
    const ctx = this.cm.contextOf(this.device);
    let p: SimPd;
    if (pd === undefined || pd === null) p = this.cm.pdOf(this.device);
    else {
      p = pd as SimPd;
      if ((p as { context?: unknown }).context !== ctx)
        fail(verb, "EINVAL", because({ kind: "pd-other-context" }, { attribute: "pd" }));
    }
    const qp = p.createQp(init);
    this.qpObj = qp;
    try {
      if (this.qp_type === IBV_QPT_UD) {
        // ucma_init_ud_qp: INIT (rdma_init_qp_attr), RTR, RTS with sq_psn 0.
        const a = this.initQpAttr(IBV_QPS_INIT);
        this.cm.modifyQp(this, "ucma_init_ud_qp", verb, a.attr, a.mask);
        this.cm.modifyQp(this, "ucma_init_ud_qp", verb, { qp_state: IBV_QPS_RTR }, IBV_QP_STATE);
        this.cm.modifyQp(
          this,
          "ucma_init_ud_qp",
          verb,
          { qp_state: IBV_QPS_RTS, sq_psn: 0 },
          IBV_QP_STATE | IBV_QP_SQ_PSN,
        );
      } else {
        const a = this.initQpAttr(IBV_QPS_INIT);
        this.cm.modifyQp(this, "ucma_init_conn_qp", verb, a.attr, a.mask);
      }
    } catch (e) {
      // librdmacm destroys the QP it could not bring up and returns the error.
      this.qpObj = undefined;
      qp.destroy();
      if (e instanceof VerbsError)
        throw new VerbsError(
          verb,
          e.errno,
          because({ kind: "cm-modify", ...(e.why && { cause: e.why }), text: e.reason ?? e.message }),
        );
      throw e;
    }
    return qp;
  }

  destroyQp(): void {
    const verb = "rdma_destroy_qp";
    this.live(verb);
    if (!this.qpObj) fail(verb, "EINVAL", because({ kind: "id-no-qp" }, { attribute: "id" }));
    const qp = this.qpObj;
    // ibv_destroy_qp's EBUSY (measured; librdmacm ignores it): the QP and id.qp stay.
    if (!qp.destroyed && this.cm.world.mcast.attachments(qp) > 0)
      fail(verb, "EBUSY", because({ kind: "qp-in-mcast" }, { attribute: "qp" }));
    this.qpObj = undefined;
    if (!qp.destroyed) qp.destroy();
  }

  joinMulticast(addr: SockAddr): void {
    this.live("rdma_join_multicast");
    joinMulticast(this, addr);
  }

  leaveMulticast(addr: SockAddr): void {
    this.live("rdma_leave_multicast");
    leaveMulticast(this, addr);
  }

  initQpAttr(qp_state: number): { attr: QpAttrInput; mask: number } {
    const verb = "rdma_init_qp_attr";
    this.live(verb);
    const st = int(verb, "qp_state", qp_state);
    if (!this.device) fail(verb, "EINVAL", because({ kind: "id-no-device" }, { attribute: "id" }));
    if (this.qp_type === IBV_QPT_UD || !this.conn) {
      // cma_ib_init_qp_attr: whatever the state, the INIT attributes (then the RTR rq_psn).
      const attr: QpAttrInput = { qp_state: st, pkey_index: 0, port_num: 1 };
      let mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
      if (this.qp_type === IBV_QPT_UD) {
        attr.qkey = RDMA_UDP_QKEY;
        mask |= IBV_QP_QKEY;
      } else {
        attr.qp_access_flags = 0;
        mask |= IBV_QP_ACCESS_FLAGS;
      }
      if (st === IBV_QPS_RTR) attr.rq_psn = this.seqNum;
      return { attr, mask };
    }
    const c = this.conn;
    if (st === IBV_QPS_INIT) {
      if (!c.canInit())
        fail(verb, "EINVAL", because({ kind: "connection-state", state: c.state }, { attribute: "qp_state" }));
      return {
        attr: {
          qp_state: st,
          qp_access_flags:
            IBV_ACCESS_REMOTE_WRITE | (c.responderResources ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0),
          pkey_index: 0,
          port_num: 1,
        },
        mask: IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT,
      };
    }
    if (st === IBV_QPS_RTR) {
      if (!c.canRtr())
        fail(
          verb,
          "EINVAL",
          because({ kind: "connection-state", state: c.state, need: "rtr-path" }, { attribute: "qp_state" }),
        );
      return {
        attr: {
          qp_state: st,
          ah_attr: c.ahAttr(),
          path_mtu: c.pathMtu,
          dest_qp_num: c.remoteQpn,
          // rdma_init_qp_attr overrides the CM's rq_psn with the id's own seq_num.
          rq_psn: this.seqNum,
          max_dest_rd_atomic: c.responderResources,
          min_rnr_timer: 0,
        },
        mask:
          IBV_QP_STATE |
          IBV_QP_AV |
          IBV_QP_PATH_MTU |
          IBV_QP_DEST_QPN |
          IBV_QP_RQ_PSN |
          IBV_QP_MAX_DEST_RD_ATOMIC |
          IBV_QP_MIN_RNR_TIMER,
      };
    }
    if (st === IBV_QPS_RTS) {
      if (!c.canRts())
        fail(
          verb,
          "EINVAL",
          because({ kind: "connection-state", state: c.state, need: "rts-psn" }, { attribute: "qp_state" }),
        );
      return {
        attr: {
          qp_state: st,
          sq_psn: c.sqPsn,
          timeout: c.avTimeout,
          retry_cnt: c.retryCount,
          rnr_retry: c.rnrRetryCount,
          max_rd_atomic: c.initiatorDepth,
        },
        mask:
          IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC,
      };
    }
    return fail(verb, "EINVAL", because({ kind: "init-qp-attr-state", state: st }, { attribute: "qp_state" }));
  }

  /** ucma_modify_qp_rtr: INIT→INIT with the CM's INIT attributes, then RTR (max_dest_rd_atomic = resp_res unless 0xff). */
  modifyRtr(during: string, respRes: number): void {
    if (!this.qpObj) return;
    const i = this.initQpAttr(IBV_QPS_INIT);
    this.cm.modifyQp(this, "ucma_modify_qp_rtr", during, i.attr, i.mask);
    const r = this.initQpAttr(IBV_QPS_RTR);
    if (respRes !== RDMA_MAX_RESP_RES) r.attr.max_dest_rd_atomic = respRes;
    this.cm.modifyQp(this, "ucma_modify_qp_rtr", during, r.attr, r.mask);
  }

  /** ucma_modify_qp_rts (max_rd_atomic = init_depth unless 0xff). */
  modifyRts(during: string, initDepth: number): void {
    if (!this.qpObj) return;
    const r = this.initQpAttr(IBV_QPS_RTS);
    if (initDepth !== RDMA_MAX_INIT_DEPTH) r.attr.max_rd_atomic = initDepth;
    this.cm.modifyQp(this, "ucma_modify_qp_rts", during, r.attr, r.mask);
  }

  /** ucma_modify_qp_err: the QP to ERR, if there is one (and it is not destroyed). */
  modifyErr(during: string): void {
    if (!this.qpObj || this.qpObj.destroyed) return;
    this.cm.modifyQp(this, "ucma_modify_qp_err", during, { qp_state: IBV_QPS_ERR }, IBV_QP_STATE);
  }

  // --- connecting ------------------------------------------------------------------------

  /** ucma_valid_param (RDMA_PS_TCP only): EINVAL without QP and param, or over the device's limits. */
  private validParam(verb: string, p: CheckedParam | undefined): void {
    if (this.ps !== RDMA_PS_TCP) return;
    if (!this.qpObj && !p) fail(verb, "EINVAL", because({ kind: "conn-param-required" }, { attribute: "conn_param" }));
    if (!p) return;
    const max = this.device!.deviceAttr();
    if (p.responder_resources !== RDMA_MAX_RESP_RES && p.responder_resources > max.max_qp_rd_atom)
      fail(
        verb,
        "EINVAL",
        because(
          {
            kind: "rd-atom-limit",
            field: "responder_resources",
            value: p.responder_resources,
            max: max.max_qp_rd_atom,
          },
          { attribute: "conn_param.responder_resources" },
        ),
      );
    if (p.initiator_depth !== RDMA_MAX_INIT_DEPTH && p.initiator_depth > max.max_qp_init_rd_atom)
      fail(
        verb,
        "EINVAL",
        because(
          { kind: "rd-atom-limit", field: "initiator_depth", value: p.initiator_depth, max: max.max_qp_init_rd_atom },
          { attribute: "conn_param.initiator_depth" },
        ),
      );
  }

  connect(param?: ConnParam): void {
    const verb = "rdma_connect";
    this.live(verb);
    const p = checkParam(verb, param);
    if (this.state !== "route_resolved")
      fail(verb, "EINVAL", because({ kind: "id-state", step: "connect", state: this.state }, { attribute: "id" }));
    this.validParam(verb, p);
    const max = this.device!.deviceAttr();
    this.initDepth = p && p.initiator_depth !== RDMA_MAX_INIT_DEPTH ? p.initiator_depth : max.max_qp_init_rd_atom;
    this.respRes = p && p.responder_resources !== RDMA_MAX_RESP_RES ? p.responder_resources : max.max_qp_rd_atom;
    const qpn = this.qpObj ? this.qpObj.qp_num : (p?.qp_num ?? 0);
    if (this.ps === RDMA_PS_UDP) {
      tooLong(verb, p?.private_data, RDMA_CM_PRIVATE_DATA_MAX.udpConnect, "udp-req");
      this.state = "connect";
      this.conn = CmConn.sidrReq(this, p?.private_data);
      return;
    }
    tooLong(verb, p?.private_data, RDMA_CM_PRIVATE_DATA_MAX.connect, "tcp-req");
    const req: ReqInfo = {
      qpn,
      startingPsn: this.seqNum,
      responderResources: this.respRes,
      initiatorDepth: this.initDepth,
      flowControl: p?.flow_control ?? 0,
      // Without conn_param librdmacm sends retry_count and rnr_retry_count 7.
      retryCount: Math.min(7, p ? p.retry_count : 7),
      rnrRetryCount: Math.min(7, p ? p.rnr_retry_count : 7),
      srq: 0,
      privateData: p?.private_data,
    };
    this.state = "connect";
    this.conn = CmConn.req(this, req);
  }

  accept(param?: ConnParam): void {
    const verb = "rdma_accept";
    this.live(verb);
    const p = checkParam(verb, param);
    if (this.state !== "connect" || !this.conn || !this.conn.passive)
      fail(verb, "EINVAL", because({ kind: "accept-needs-request" }, { attribute: "id" }));
    this.validParam(verb, p);
    const max = this.device!.deviceAttr();
    this.initDepth =
      !p || p.initiator_depth === RDMA_MAX_INIT_DEPTH
        ? Math.min(this.initDepth, max.max_qp_init_rd_atom)
        : p.initiator_depth;
    this.respRes =
      !p || p.responder_resources === RDMA_MAX_RESP_RES
        ? Math.min(this.respRes, max.max_qp_rd_atom)
        : p.responder_resources;
    const c = this.conn;
    if (this.ps === RDMA_PS_UDP) {
      try {
        if (p?.private_data && p.private_data.length > RDMA_CM_PRIVATE_DATA_MAX.udpAccept) {
          // The kernel refuses the SIDR_REP and rejects the request itself (rdma_accept's
          // reject path: IB_SIDR_REJECT, no private data): the client gets UNREACHABLE 2.
          if (c.state === "SIDR_REQ_RCVD") c.sidrRep(ib_cm_sidr_status.IB_SIDR_REJECT, 0, undefined);
          tooLong(verb, p.private_data, RDMA_CM_PRIVATE_DATA_MAX.udpAccept, "udp-rep");
        }
        c.sidrRep(0, this.qpObj ? this.qpObj.qp_num : (p?.qp_num ?? 0), p?.private_data);
      } catch (e) {
        // librdmacm's rdma_accept: whatever the kernel refused, the QP goes to ERR (ucma_modify_qp_err).
        this.modifyErr(verb);
        throw e;
      }
      return;
    }
    if (!c.canRtr()) fail(verb, "EINVAL", because({ kind: "connection-state", state: c.state }, { attribute: "id" }));
    this.modifyRtr(verb, this.respRes);
    this.modifyRts(verb, this.initDepth);
    if (p?.private_data && p.private_data.length > RDMA_CM_PRIVATE_DATA_MAX.accept) {
      // The kernel refuses the REP (ib_send_cm_rep: EINVAL) and rejects the request itself
      // (rdma_accept: IB_CM_REJ_CONSUMER_DEFINED); then librdmacm moves the QP to ERR.
      c.rej(IB_CM_REJ_CONSUMER_DEFINED, undefined);
      this.modifyErr(verb);
      tooLong(verb, p.private_data, RDMA_CM_PRIVATE_DATA_MAX.accept, "rep");
    }
    const rep: RepInfo = {
      qpn: this.qpObj ? this.qpObj.qp_num : (p?.qp_num ?? 0),
      startingPsn: this.seqNum,
      responderResources: this.respRes,
      initiatorDepth: this.initDepth,
      flowControl: p?.flow_control ?? 0,
      rnrRetryCount: Math.min(7, p ? p.rnr_retry_count : 7),
      srq: 0,
      privateData: p?.private_data,
    };
    c.rep(rep);
  }

  reject(private_data?: Uint8Array): void {
    const verb = "rdma_reject";
    this.live(verb);
    if (private_data !== undefined && !(private_data instanceof Uint8Array))
      throw typeErr(verb, "private_data", "uint8array", private_data);
    if (private_data && private_data.length > 255)
      fail(
        verb,
        "EINVAL",
        because(
          { kind: "private-data-u8", bytes: private_data.length, param: false },
          { attribute: "private_data_len" },
        ),
      );
    if (!this.conn) fail(verb, "EINVAL", because({ kind: "no-request" }, { attribute: "id" }));
    if (this.ps === RDMA_PS_UDP) {
      tooLong(verb, private_data, RDMA_CM_PRIVATE_DATA_MAX.udpAccept, "udp-rep");
      this.conn.sidrRep(ib_cm_sidr_status.IB_SIDR_REJECT, 0, private_data);
      return;
    }
    tooLong(verb, private_data, RDMA_CM_PRIVATE_DATA_MAX.reject, "rej");
    this.conn.rej(IB_CM_REJ_CONSUMER_DEFINED, private_data);
  }

  disconnect(): void {
    const verb = "rdma_disconnect";
    this.live(verb);
    // ucma_shutdown: needs the device, moves the QP to ERR; then the kernel needs an IB CM id.
    if (!this.device || !this.verbsKnown) fail(verb, "EINVAL", because({ kind: "id-no-device" }, { attribute: "id" }));
    this.modifyErr(verb);
    if (!this.conn) fail(verb, "EINVAL", because({ kind: "not-connected" }, { attribute: "id" }));
    this.conn.disconnect();
  }

  destroy(): void {
    const verb = "rdma_destroy_id";
    this.live(verb);
    if (this.unacked > 0) throw unackedCmEventsError(this.unacked);
    // The kernel destroys the id: pending events go, a pending request's child is destroyed
    // too (ucma_cleanup_ctx_events), the IB CM says goodbye as its state asks (cm_destroy_id).
    for (const e of this.channel.dropEventsOf(this)) {
      if (e.listen_id === this && e.id !== this && !e.id.destroyed) e.id.destroyKernel();
    }
    this.destroyKernel();
    this.channel.ids.delete(this);
  }

  /** The kernel half of destroying an id (also for a child whose CONNECT_REQUEST was never got). */
  destroyKernel(): void {
    this.destroyed = true;
    this.state = "destroying";
    this.addrTimer?.cancel();
    this.conn?.destroy();
    leaveAllOnDestroy(this);
    this.cm.releasePort(this);
  }
}
