/**
 * The rdma_cm contract: librdmacm's connection manager as methods, in this project's style.
 * Constants are spelled and valued as in <rdma/rdma_cma.h> (and the IB CM's reject reasons
 * as in <rdma/ib_cm.h>, which is what a REJECTED event's `status` holds on RoCE); structure
 * fields keep their C names (struct rdma_conn_param → ConnParam). Failures are VerbsErrors
 * whose `verb` is the librdmacm function (`rdma_connect`).
 *
 * Like the rest of the contract, calls are synchronous and only waiting is asynchronous:
 * `channel.getEvent(timeoutMs)` waits on the backend's clock, like `getCqEvent`. What a C
 * program learns from `rdma_get_cm_event` it learns here from the CmEvent; what it reads off
 * `struct rdma_cm_id` (`id->verbs`, `id->qp`, `id->port_num`, `id->route`) it reads off the
 * CmId's getters, which change as the id is bound, resolved and connected.
 *
 * The QP transitions librdmacm makes behind the program's back (rdma_create_qp → INIT,
 * CONNECT_RESPONSE/rdma_accept → RTR → RTS, rdma_disconnect → ERR; for UD all of
 * INIT → RTR → RTS inside rdma_create_qp) are made on the backend as librdmacm makes them
 * (librdmacm/cma.c: ucma_init_conn_qp, ucma_init_ud_qp, ucma_modify_qp_rtr/rts/err).
 * A backend that can see them reports each one through `CmBackend.onQpTransition`.
 *
 * Entry point: `backend.cm` (an optional capability of VerbsBackend; absent where the
 * backend has no connection manager, e.g. native without librdmacm).
 */
import type { Context, Pd, Qp } from "./backend.js";
import { VerbsError, errnos } from "./errors.js";
import { because } from "./verb-failure.js";
import type { AhAttr, QpAttrInput, QpInitAttr } from "./types.js";

// ---------------------------------------------------------------------------------------
// Constants, as in <rdma/rdma_cma.h>

/** enum rdma_cm_event_type */
export const rdma_cm_event_type = {
  RDMA_CM_EVENT_ADDR_RESOLVED: 0,
  RDMA_CM_EVENT_ADDR_ERROR: 1,
  RDMA_CM_EVENT_ROUTE_RESOLVED: 2,
  RDMA_CM_EVENT_ROUTE_ERROR: 3,
  RDMA_CM_EVENT_CONNECT_REQUEST: 4,
  RDMA_CM_EVENT_CONNECT_RESPONSE: 5,
  RDMA_CM_EVENT_CONNECT_ERROR: 6,
  RDMA_CM_EVENT_UNREACHABLE: 7,
  RDMA_CM_EVENT_REJECTED: 8,
  RDMA_CM_EVENT_ESTABLISHED: 9,
  RDMA_CM_EVENT_DISCONNECTED: 10,
  RDMA_CM_EVENT_DEVICE_REMOVAL: 11,
  RDMA_CM_EVENT_MULTICAST_JOIN: 12,
  RDMA_CM_EVENT_MULTICAST_ERROR: 13,
  RDMA_CM_EVENT_ADDR_CHANGE: 14,
  RDMA_CM_EVENT_TIMEWAIT_EXIT: 15,
} as const;
export const {
  RDMA_CM_EVENT_ADDR_RESOLVED,
  RDMA_CM_EVENT_ADDR_ERROR,
  RDMA_CM_EVENT_ROUTE_RESOLVED,
  RDMA_CM_EVENT_ROUTE_ERROR,
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_CONNECT_RESPONSE,
  RDMA_CM_EVENT_CONNECT_ERROR,
  RDMA_CM_EVENT_UNREACHABLE,
  RDMA_CM_EVENT_REJECTED,
  RDMA_CM_EVENT_ESTABLISHED,
  RDMA_CM_EVENT_DISCONNECTED,
  RDMA_CM_EVENT_DEVICE_REMOVAL,
  RDMA_CM_EVENT_MULTICAST_JOIN,
  RDMA_CM_EVENT_MULTICAST_ERROR,
  RDMA_CM_EVENT_ADDR_CHANGE,
  RDMA_CM_EVENT_TIMEWAIT_EXIT,
} = rdma_cm_event_type;

/** enum rdma_port_space */
export const rdma_port_space = {
  RDMA_PS_IPOIB: 0x0002,
  RDMA_PS_IB: 0x013f,
  RDMA_PS_TCP: 0x0106,
  RDMA_PS_UDP: 0x0111,
} as const;
export const { RDMA_PS_IPOIB, RDMA_PS_IB, RDMA_PS_TCP, RDMA_PS_UDP } = rdma_port_space;

/** "Use the most the device allows" for responder_resources / initiator_depth (rdma_cma.h). */
export const RDMA_MAX_RESP_RES = 0xff;
export const RDMA_MAX_INIT_DEPTH = 0xff;
/** The Q_Key librdmacm gives RDMA_PS_UDP ids (rdma_cma.h RDMA_UDP_QKEY). */
export const RDMA_UDP_QKEY = 0x01234567;
/**
 * The destination QPN of a multicast datagram (IB_MULTICAST_QPN, <rdma/ib_verbs.h>): a
 * MULTICAST_JOIN event's `param.ud.qp_num`. The receiving device hands such a datagram to every
 * QP attached to the group.
 */
export const IB_MULTICAST_QPN = 0xffffff;

/** rdma_getaddrinfo hints.ai_flags (rdma_cma.h). */
export const rdma_addrinfo_flags = {
  RAI_PASSIVE: 0x00000001,
  RAI_NUMERICHOST: 0x00000002,
  RAI_NOROUTE: 0x00000004,
  RAI_FAMILY: 0x00000008,
} as const;
export const { RAI_PASSIVE, RAI_NUMERICHOST, RAI_NOROUTE, RAI_FAMILY } = rdma_addrinfo_flags;

/**
 * enum ib_cm_rej_reason (<rdma/ib_cm.h>): on RoCE and IB a REJECTED event's `status` is the
 * reason of the REJ the peer's CM sent. rdma_reject sends IB_CM_REJ_CONSUMER_DEFINED (28); a
 * REQ for a service (port) nobody listens on is answered with IB_CM_REJ_INVALID_SERVICE_ID (8).
 */
export const ib_cm_rej_reason = {
  IB_CM_REJ_NO_QP: 1,
  IB_CM_REJ_NO_EEC: 2,
  IB_CM_REJ_NO_RESOURCES: 3,
  IB_CM_REJ_TIMEOUT: 4,
  IB_CM_REJ_UNSUPPORTED: 5,
  IB_CM_REJ_INVALID_COMM_ID: 6,
  IB_CM_REJ_INVALID_COMM_INSTANCE: 7,
  IB_CM_REJ_INVALID_SERVICE_ID: 8,
  IB_CM_REJ_INVALID_TRANSPORT_TYPE: 9,
  IB_CM_REJ_STALE_CONN: 10,
  IB_CM_REJ_RDC_NOT_EXIST: 11,
  IB_CM_REJ_INVALID_GID: 12,
  IB_CM_REJ_INVALID_LID: 13,
  IB_CM_REJ_INVALID_SL: 14,
  IB_CM_REJ_INVALID_TRAFFIC_CLASS: 15,
  IB_CM_REJ_INVALID_HOP_LIMIT: 16,
  IB_CM_REJ_INVALID_PACKET_RATE: 17,
  IB_CM_REJ_INVALID_ALT_GID: 18,
  IB_CM_REJ_INVALID_ALT_LID: 19,
  IB_CM_REJ_INVALID_ALT_SL: 20,
  IB_CM_REJ_INVALID_ALT_TRAFFIC_CLASS: 21,
  IB_CM_REJ_INVALID_ALT_HOP_LIMIT: 22,
  IB_CM_REJ_INVALID_ALT_PACKET_RATE: 23,
  IB_CM_REJ_PORT_CM_REDIRECT: 24,
  IB_CM_REJ_PORT_REDIRECT: 25,
  IB_CM_REJ_INVALID_MTU: 26,
  IB_CM_REJ_INSUFFICIENT_RESP_RESOURCES: 27,
  IB_CM_REJ_CONSUMER_DEFINED: 28,
  IB_CM_REJ_INVALID_RNR_RETRY: 29,
  IB_CM_REJ_DUPLICATE_LOCAL_COMM_ID: 30,
  IB_CM_REJ_INVALID_CLASS_VERSION: 31,
  IB_CM_REJ_INVALID_FLOW_LABEL: 32,
  IB_CM_REJ_INVALID_ALT_FLOW_LABEL: 33,
  IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED: 35,
} as const;
export const { IB_CM_REJ_INVALID_SERVICE_ID, IB_CM_REJ_CONSUMER_DEFINED } = ib_cm_rej_reason;

/**
 * enum ib_cm_sidr_status (<rdma/ib_cm.h>): an RDMA_PS_UDP "connect" is a SIDR_REQ; a SIDR_REP
 * with any status but success reaches the client as UNREACHABLE with this status.
 */
export const ib_cm_sidr_status = {
  IB_SIDR_SUCCESS: 0,
  IB_SIDR_UNSUPPORTED: 1,
  IB_SIDR_REJECT: 2,
  IB_SIDR_NO_QP: 3,
  IB_SIDR_REDIRECT: 4,
  IB_SIDR_UNSUPPORTED_VERSION: 5,
} as const;

/**
 * How many private-data bytes each message carries for a program (the kernel's
 * IB_CM_*_PRIVATE_DATA_SIZE, minus the 36-byte struct cma_hdr rdma_cm puts in front of a
 * REQ and a SIDR_REQ). More is EINVAL from the verb; the receiver's event always carries
 * the message's full size, the bytes sent followed by zeros.
 */
export const RDMA_CM_PRIVATE_DATA_MAX = {
  /** rdma_connect, RDMA_PS_TCP: IB_CM_REQ_PRIVATE_DATA_SIZE 92 − 36 */
  connect: 56,
  /** rdma_accept, RDMA_PS_TCP: IB_CM_REP_PRIVATE_DATA_SIZE */
  accept: 196,
  /** rdma_reject, RDMA_PS_TCP: IB_CM_REJ_PRIVATE_DATA_SIZE */
  reject: 148,
  /** rdma_connect, RDMA_PS_UDP: IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE 216 − 36 */
  udpConnect: 180,
  /** rdma_accept / rdma_reject, RDMA_PS_UDP: IB_CM_SIDR_REP_PRIVATE_DATA_SIZE */
  udpAccept: 136,
} as const;

/** The enum groups by the name a learner would search for (as `enums` in constants.ts). */
export const cmEnums = {
  rdma_cm_event_type,
  rdma_port_space,
  ib_cm_rej_reason,
  ib_cm_sidr_status,
  rdma_addrinfo_flags,
} as const;

/** rdma_event_str: the event's name as librdmacm prints it ("RDMA_CM_EVENT_ESTABLISHED"). */
export function rdmaEventStr(event: number): string {
  for (const [name, v] of Object.entries(rdma_cm_event_type)) if (v === event) return name;
  return "UNKNOWN EVENT";
}

// ---------------------------------------------------------------------------------------
// Data

/**
 * A socket address (struct sockaddr_in / sockaddr_in6): `addr` is dotted IPv4
 * ("10.77.0.2") or IPv6 text; `port` in host order (0: any / not yet chosen).
 */
export interface SockAddr {
  addr: string;
  port: number;
}

/** struct rdma_conn_param, as given to rdma_connect / rdma_accept. Every field is optional (0 by default). */
export interface ConnParam {
  /** At most RDMA_CM_PRIVATE_DATA_MAX bytes for the message; EINVAL beyond. */
  private_data?: Uint8Array;
  responder_resources?: number;
  initiator_depth?: number;
  flow_control?: number;
  /** Ignored when accepting. */
  retry_count?: number;
  rnr_retry_count?: number;
  /** Ignored when a QP was created on the id (rdma_create_qp). */
  srq?: number;
  /** Ignored when a QP was created on the id (rdma_create_qp). */
  qp_num?: number;
}

/** struct rdma_conn_param as an event carries it (event->param.conn): every field set. */
export interface ConnParamEvent {
  /** The bytes the message carried: its full private-data size (sent bytes, then zeros); length = private_data_len. */
  private_data: Uint8Array;
  private_data_len: number;
  responder_resources: number;
  initiator_depth: number;
  flow_control: number;
  retry_count: number;
  rnr_retry_count: number;
  srq: number;
  qp_num: number;
}

/** struct rdma_ud_param (event->param.ud): on an RDMA_PS_UDP ESTABLISHED, how to reach the peer. */
export interface UdParamEvent {
  private_data: Uint8Array;
  private_data_len: number;
  ah_attr: AhAttr;
  qp_num: number;
  qkey: number;
}

/** struct rdma_route (id->route): the resolved addresses and path. */
export interface CmRoute {
  /** src_addr / dst_addr of struct rdma_addr */
  src_addr: SockAddr;
  dst_addr: SockAddr;
  /** struct rdma_ib_addr: the GIDs rdma_resolve_addr found (RoCE: from the IPs), and the P_Key. */
  sgid: string;
  dgid: string;
  pkey: number;
  /** The path records rdma_resolve_route built (0 or 1 on RoCE). */
  num_paths: number;
  path_rec?: CmPathRec;
}

/** The struct ibv_sa_path_rec fields RoCE route resolution fills (cma_resolve_iboe_route). */
export interface CmPathRec {
  dgid: string;
  sgid: string;
  pkey: number;
  /** IBV_MTU_* */
  mtu: number;
  /** IBV_RATE_* */
  rate: number;
  /** 4.096 µs × 2^packet_life_time */
  packet_life_time: number;
  sl: number;
  traffic_class: number;
  hop_limit: number;
  flow_label: number;
  /** IBV_GID_TYPE_* of the SGID used */
  gid_type: number;
}

/** struct rdma_cm_event, got with `channel.getEvent`; give it back with `ack()` (rdma_ack_cm_event). */
export interface CmEvent {
  /** RDMA_CM_EVENT_* */
  readonly event: number;
  /**
   * 0, or what went wrong: a negative errno for local failures (ADDR_ERROR −110 ETIMEDOUT,
   * UNREACHABLE −110 when the REQ timed out), the peer's REJ reason for REJECTED
   * (ib_cm_rej_reason), the SIDR status for an RDMA_PS_UDP UNREACHABLE (ib_cm_sidr_status).
   */
  readonly status: number;
  /** The id the event is about: for CONNECT_REQUEST, the new id of that connection (the child). */
  readonly id: CmId;
  /** For CONNECT_REQUEST: the listening id it arrived on. */
  readonly listen_id?: CmId;
  /** event->param.conn (RDMA_PS_TCP connection events) or event->param.ud (RDMA_PS_UDP, and the multicast events). */
  readonly param: { conn?: ConnParamEvent; ud?: UdParamEvent };
  /** rdma_ack_cm_event: EINVAL the second time. */
  ack(): void;
}

/** struct rdma_addrinfo (one entry of what rdma_getaddrinfo returns). */
export interface AddrInfo {
  ai_flags: number;
  /** AF_INET (2) or AF_INET6 (10) */
  ai_family: number;
  /** IBV_QPT_RC for RDMA_PS_TCP, IBV_QPT_UD for RDMA_PS_UDP */
  ai_qp_type: number;
  /** RDMA_PS_TCP or RDMA_PS_UDP */
  ai_port_space: number;
  ai_src_addr?: SockAddr;
  ai_dst_addr?: SockAddr;
}

/** What rdma_getaddrinfo reads from `hints` (struct rdma_addrinfo). */
export interface AddrInfoHints {
  ai_flags?: number;
  ai_family?: number;
  ai_qp_type?: number;
  ai_port_space?: number;
}

/**
 * A CM MAD as a packet log shows it (PacketLogEntry.mad): the CM message (attribute) and the
 * fields a learner follows. Only backends that see packets (the simulator) fill it.
 */
export interface CmMad {
  /** "REQ", "MRA", "REJ", "REP", "RTU", "DREQ", "DREP", "SIDR_REQ", "SIDR_REP" */
  attr: string;
  /** The CM attribute ID (IBA 16.7.1: REQ 0x0010 … SIDR_REP 0x0018). */
  attr_id: number;
  /** The MAD's transaction ID, as hex text (64 bits). */
  tid: string;
  local_comm_id: number;
  remote_comm_id: number;
  /** REQ / SIDR_REQ: the service ID (rdma_cm: port space << 16 | port), as hex text. */
  service_id?: string;
  /** REQ / REP: the sender's QPN and starting PSN. */
  qpn?: number;
  starting_psn?: number;
  /** REJ: the reason (ib_cm_rej_reason); SIDR_REP: the status (ib_cm_sidr_status). */
  reason?: number;
  /** The bytes of the message's private-data field that the sender filled (the rest is zeros). */
  private_data_len: number;
  /** 0 for the first send; n for the n-th resend after a CM timeout. */
  retry: number;
}

// ---------------------------------------------------------------------------------------
// Objects

/** The connection manager of a backend (`backend.cm`). */
export interface CmBackend {
  /** rdma_create_event_channel */
  createEventChannel(): CmEventChannel;
  /**
   * rdma_getaddrinfo(node, service, hints): node is numeric IPv4/IPv6 text (or undefined with
   * RAI_PASSIVE), service a decimal port. A name it cannot resolve is a VerbsError
   * (verb "rdma_getaddrinfo", EINVAL, naming the argument).
   */
  getAddrInfo(node: string | undefined, service: string | undefined, hints?: AddrInfoHints): AddrInfo[];
  /**
   * Reports each QP transition librdmacm makes inside a CM call or event (not those the
   * program makes with `qp.modify`): the session records them as "made by librdmacm".
   * Returns a function that stops the reports.
   */
  onQpTransition?(listener: (t: CmQpTransition) => void): () => void;
}

/** One QP transition made by librdmacm, not by the program. */
export interface CmQpTransition {
  qp: Qp;
  id: CmId;
  /** The librdmacm function that made it: "ucma_init_conn_qp", "ucma_modify_qp_rtr", … */
  by: string;
  /** The librdmacm call or event it happened in: "rdma_create_qp", "rdma_accept", "rdma_get_cm_event", … */
  during: string;
  /** The ibv_modify_qp it made: the attributes (from rdma_init_qp_attr) and the mask. */
  attr: QpAttrInput;
  mask: number;
  /** IBV_QPS_* before and after. */
  from: number;
  to: number;
}

/** struct rdma_event_channel */
export interface CmEventChannel {
  /** rdma_create_id(channel, &id, context, ps): RDMA_PS_TCP (RC) or RDMA_PS_UDP (UD). */
  createId(ps: number, context?: unknown): CmId;
  /** rdma_get_cm_event: the next event, or null when `timeoutMs` of the backend's clock passes first. */
  getEvent(timeoutMs?: number): Promise<CmEvent | null>;
  /** rdma_destroy_event_channel: EBUSY while an id still uses it. */
  destroy(): void;
}

/** struct rdma_cm_id */
export interface CmId {
  readonly channel: CmEventChannel;
  /** RDMA_PS_TCP or RDMA_PS_UDP */
  readonly ps: number;
  /** IBV_QPT_RC (RDMA_PS_TCP) or IBV_QPT_UD (RDMA_PS_UDP) */
  readonly qp_type: number;
  readonly context?: unknown;
  /** id->verbs: the device the id is bound to (after bindAddr to a device's IP, resolveAddr, or on a child id); undefined before. */
  readonly verbs: Context | undefined;
  /** id->port_num (1 once bound to a device, 0 before). */
  readonly port_num: number;
  /** id->qp: the QP rdma_create_qp made on this id, until rdma_destroy_qp. */
  readonly qp: Qp | undefined;
  /** id->route: addresses, GIDs and the path as far as resolved. */
  readonly route: CmRoute;

  /** rdma_bind_addr: EADDRINUSE when another id holds the port, EADDRNOTAVAIL for an IP no interface has. */
  bindAddr(addr: SockAddr): void;
  /** rdma_listen (backlog 0: the kernel's default). */
  listen(backlog: number): void;
  /** rdma_resolve_addr: starts resolution; ADDR_RESOLVED or ADDR_ERROR follows on the channel. */
  resolveAddr(src: SockAddr | undefined, dst: SockAddr, timeoutMs: number): void;
  /** rdma_resolve_route: ROUTE_RESOLVED or ROUTE_ERROR follows. */
  resolveRoute(timeoutMs: number): void;
  /**
   * rdma_create_qp(id, pd, qp_init_attr): creates the QP on id->verbs and moves it as
   * librdmacm does (RC: to INIT; UD: to RTS). `pd` undefined: librdmacm's own PD for the device.
   */
  createQp(pd: Pd | undefined, init: QpInitAttr): Qp;
  /** rdma_destroy_qp: EBUSY while the QP is attached to a multicast group (leaveMulticast first). */
  destroyQp(): void;
  /** rdma_connect: sends the REQ (RDMA_PS_UDP: SIDR_REQ). */
  connect(param?: ConnParam): void;
  /** rdma_accept: on a child id, moves its QP to RTR and RTS and sends the REP. */
  accept(param?: ConnParam): void;
  /** rdma_reject(id, private_data, len): sends a REJ with reason IB_CM_REJ_CONSUMER_DEFINED. */
  reject(private_data?: Uint8Array): void;
  /** rdma_disconnect: moves the QP to ERR and sends a DREQ (or the DREP to a DREQ received). */
  disconnect(): void;
  /**
   * rdma_init_qp_attr(id, &attr, &mask) with attr.qp_state = `qp_state`: the attributes and
   * mask librdmacm would use to move a QP to that state (for a program that makes its own QP).
   */
  initQpAttr(qp_state: number): { attr: QpAttrInput; mask: number };
  /**
   * rdma_join_multicast(id, addr, NULL): joins the IPv4 multicast group `addr` (port ignored)
   * on the id's device; MULTICAST_JOIN follows, its `param.ud` carrying what a sender needs:
   * `ah_attr` (dgid ::ffff:<group>, sgid_index of the id's address), `qp_num`
   * IB_MULTICAST_QPN and `qkey` RDMA_UDP_QKEY, no private data. Inside the
   * `rdma_get_cm_event` that returns it librdmacm attaches id.qp to the group
   * (ibv_attach_mcast), if the id has a QP then: a QP created after the join is not attached
   * and receives nothing. When that attach fails (a unicast `addr`: its GID is no multicast
   * GID) the event is MULTICAST_ERROR with status -1 instead.
   *
   * Measured on rxe (sim/RXE-FACTS.md §10.5): only RDMA_PS_UDP ids bound to a device
   * (rdma_bind_addr to a device's address, or ADDR_RESOLVED) can join, otherwise EINVAL.
   * Datagrams sent to the group reach the QPs attached on every device whose id joined,
   * the sender's own included; the sender itself need not join. Joining the same group
   * twice succeeds (a second event); each join needs its own leave.
   */
  joinMulticast(addr: SockAddr): void;
  /**
   * rdma_leave_multicast: detaches id.qp from the group (ibv_detach_mcast) and leaves it; later
   * datagrams to the group no longer reach this id's QP. `addr` must be the joined address
   * and port (librdmacm compares the sockaddr): EADDRNOTAVAIL for a group this id has not
   * joined. With events on the id not acknowledged librdmacm would wait for ever: VerbsLab
   * refuses (`unackedCmEventsError`, EBUSY). While its QP is attached, `destroyQp` (and
   * `qp.destroy`) is EBUSY; `destroy` (rdma_destroy_id) leaves every group the id joined but
   * does not detach the QP.
   */
  leaveMulticast(addr: SockAddr): void;
  /** rdma_get_local_addr / rdma_get_src_port */
  getLocalAddr(): SockAddr;
  /** rdma_get_peer_addr / rdma_get_dst_port */
  getPeerAddr(): SockAddr;
  /**
   * rdma_destroy_id. With events got on this id and not acknowledged librdmacm would wait for
   * ever (rdma_destroy_id waits for events_completed): VerbsLab refuses instead (`unackedCmEventsError`),
   * and the id stays usable. A CONNECT_REQUEST counts on its listening id.
   */
  destroy(): void;
}

// ---------------------------------------------------------------------------------------
// The one refusal both backends share

/**
 * Whether a recorded error is an unacknowledged-events refusal (of rdma_destroy_id or
 * rdma_leave_multicast): a replay or C export must not make the real call, which would hang.
 */
export function isUnackedCmEventsRefusal(e: { verb?: string; code?: string; attribute?: string } | undefined): boolean {
  return (
    (e?.verb === "rdma_destroy_id" || e?.verb === "rdma_leave_multicast") &&
    e.code === "EBUSY" &&
    e.attribute === "rdma_ack_cm_event"
  );
}

/**
 * The error `verb` gets while `unacked` events on the id are not acknowledged. rdma_destroy_id
 * waits for every event got on the id; rdma_leave_multicast for the events of that join
 * (its events_completed wait): VerbsLab refuses a leave while any event on the id is unacknowledged.
 */
export function unackedCmEventsError(
  unacked: number,
  verb: "rdma_destroy_id" | "rdma_leave_multicast" = "rdma_destroy_id",
): VerbsError {
  return new VerbsError(
    verb,
    errnos.EBUSY,
    because({ kind: "unacked-cm-events", n: unacked }, { attribute: "rdma_ack_cm_event" }),
  );
}
