/**
 * The IB CM of the simulated rdma_cm (Linux 6.1 drivers/infiniband/core/cm.c as rdma_cm drives
 * it): one CmConn per connection end (an ib_cm_id), its states, and the MADs it sends on QP1 —
 * REQ, MRA, REP, RTU, REJ, DREQ, DREP, SIDR_REQ, SIDR_REP — with their timeouts and retries on
 * the virtual clock. Every time follows, as in cm.c, from the path's packet_life_time (18 on
 * RoCE: sim/cm-addr.ts), rxe's local_ca_ack_delay (15), CMA_CM_RESPONSE_TIMEOUT 20 and
 * CMA_MAX_CM_RETRIES 15, with cm_convert_to_ms(t) = 2^(t−8) ms:
 *
 * - av.timeout (the QP's local ACK timeout): packet_life_time + 1 on the active side until the
 *   REP (cm_init_av_by_path), then cm_ack_timeout(the REP's target ACK delay, av.timeout − 1);
 *   on the passive side cm_ack_timeout(its own ACK delay, packet_life_time). 19 either way.
 * - REQ: resent every 2·2^(18−8) + 2^(20−8) = 6144 ms, 15 times (UNREACHABLE −ETIMEDOUT after
 *   16 waits, 98.3 s: measured 98–102 s). An MRA from the passive side (rdma_cm sends one as soon
 *   as the request is queued for the program) stretches each wait to 2^(24−8) + 2^(19−8) ms.
 * - REP: 2^(20−8) = 4096 ms × 15 (the REQ's local response timeout); the active side answers a
 *   REP with an MRA too, and the RTU only once the program got CONNECT_RESPONSE (librdmacm).
 * - DREQ: resent like the REQ; the DREP comes only when the peer's program calls
 *   rdma_disconnect (or destroys its id). Both ends then wait in timewait 2^(19−8) = 2048 ms
 *   (measured 2.2 s) and report TIMEWAIT_EXIT.
 * - A REQ for a port nobody listens on is answered with REJ IB_CM_REJ_INVALID_SERVICE_ID (8);
 *   a SIDR_REQ with SIDR_REP IB_SIDR_UNSUPPORTED (1).
 */
import {
  IB_CM_REJ_CONSUMER_DEFINED,
  IB_CM_REJ_INVALID_SERVICE_ID,
  RDMA_CM_EVENT_CONNECT_ERROR,
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_CONNECT_RESPONSE,
  RDMA_CM_EVENT_DISCONNECTED,
  RDMA_CM_EVENT_ESTABLISHED,
  RDMA_CM_EVENT_REJECTED,
  RDMA_CM_EVENT_TIMEWAIT_EXIT,
  RDMA_CM_EVENT_UNREACHABLE,
  RDMA_CM_PRIVATE_DATA_MAX,
  RDMA_MAX_INIT_DEPTH,
  RDMA_MAX_RESP_RES,
  RDMA_PS_UDP,
  RDMA_UDP_QKEY,
  type CmMad,
  type CmPathRec,
  type ConnParamEvent,
  type UdParamEvent,
} from "../verbs/cm.js";
import { errnos, VerbsError } from "../verbs/errors.js";
import type { AhAttr } from "../verbs/types.js";
import { ipText, type Ip4 } from "./cm-addr.js";
import type { SimCm, SimCmId } from "./cm.js";
import { Timer, type Clock } from "./clock.js";
import type { SimDevice } from "./device.js";
import { parseGid } from "./gid.js";
import { because } from "../verbs/verb-failure.js";

/** cm_convert_to_ms: 4.096 µs × 2^t, approximated as 2^(t − 8) ms. */
export function convertToMs(t: number): number {
  return 2 ** Math.max(t - 8, 0);
}

/** cm_ack_timeout: the QP's local ACK timeout from the peer's CA ACK delay and the packet lifetime. */
export function ackTimeout(caAckDelay: number, packetLifeTime: number): number {
  let t = packetLifeTime + 1;
  if (t >= caAckDelay) t += caAckDelay >= t - 1 ? 1 : 0;
  else t = caAckDelay + (t >= caAckDelay - 1 ? 1 : 0);
  return Math.min(31, t);
}

const CM_RESPONSE_TIMEOUT = 20;
const MAX_CM_RETRIES = 15;
/** CMA_CM_MRA_SETTING's service timeout (IB_CM_MRA_FLAG_DELAY | 24). */
const MRA_SERVICE_TIMEOUT = 24;
/** rdma_cm's header in front of a REQ's and a SIDR_REQ's private data (struct cma_hdr). */
const CMA_HDR = 36;
export const IB_CM_REJ_TIMEOUT = 4;

const ATTR_ID: Record<string, number> = {
  REQ: 0x10,
  MRA: 0x11,
  REJ: 0x12,
  REP: 0x13,
  RTU: 0x14,
  DREQ: 0x15,
  DREP: 0x16,
  SIDR_REQ: 0x17,
  SIDR_REP: 0x18,
};

/** What a REQ carries that the passive side uses. */
export interface ReqInfo {
  qpn: number;
  startingPsn: number;
  responderResources: number;
  initiatorDepth: number;
  flowControl: number;
  retryCount: number;
  rnrRetryCount: number;
  srq: number;
  privateData?: Uint8Array;
}

/** What a REP carries. */
export interface RepInfo {
  qpn: number;
  startingPsn: number;
  responderResources: number;
  initiatorDepth: number;
  flowControl: number;
  rnrRetryCount: number;
  srq: number;
  privateData?: Uint8Array;
}

/** A MAD in flight: its attribute, the communication IDs, and what the receiver reads. */
interface Mad {
  attr: string;
  tid: string;
  localComm: number;
  remoteComm: number;
  /** REQ / SIDR_REQ: port space, port and addresses (service ID + cma_hdr). */
  ps?: number;
  port?: number;
  src?: Ip4;
  dst?: Ip4;
  path?: CmPathRec;
  req?: ReqInfo;
  rep?: RepInfo;
  reason?: number;
  /** REP: the sender's local_ca_ack_delay (the REP's target ACK delay). */
  targetAckDelay?: number;
  /** SIDR_REP */
  qpn?: number;
  qkey?: number;
  privateData?: Uint8Array;
  retry: number;
}

type ConnState =
  | "IDLE"
  | "REQ_SENT"
  | "MRA_REQ_RCVD"
  | "REQ_RCVD"
  | "MRA_REQ_SENT"
  | "REP_SENT"
  | "MRA_REP_RCVD"
  | "REP_RCVD"
  | "MRA_REP_SENT"
  | "ESTABLISHED"
  | "DREQ_SENT"
  | "DREQ_RCVD"
  | "TIMEWAIT"
  | "SIDR_REQ_SENT"
  | "SIDR_REQ_RCVD";

let tidCounter = 0;

/** One end of a connection in the IB CM (struct cm_id_private). */
export class CmConn {
  state: ConnState = "IDLE";
  readonly localId: number;
  remoteId = 0;
  /** Where this end's MADs go. */
  peerGid: Uint8Array = new Uint8Array(16);
  /** The path as this end sees it (sgid: its own GID). */
  path!: CmPathRec;
  remoteQpn = 0;
  sqPsn = 0;
  responderResources = 0;
  initiatorDepth = 0;
  retryCount = 0;
  rnrRetryCount = 0;
  /** av.timeout: the QP's local ACK timeout, and what timewait and an MRA's wait are made of. */
  avTimeout = 0;
  get pathMtu(): number {
    return this.path.mtu;
  }
  /** How long this end waits for an answer to its MADs, and how often it resends. */
  timeoutMs = 0;
  private retry: { cancel(): void } | undefined;
  private timewait: { cancel(): void } | undefined;
  private readonly cm: SimCm;

  private constructor(
    readonly id: SimCmId,
    readonly dev: SimDevice,
    readonly passive: boolean,
  ) {
    this.cm = id.cm;
    this.localId = this.cm.world.rng.u32() >>> 0;
    this.cm.conns.set(this.localId, this);
  }

  // --- the active side -------------------------------------------------------------------

  /** ib_send_cm_req (cma_connect_ib). */
  static req(id: SimCmId, req: ReqInfo): CmConn {
    const c = new CmConn(id, id.device!, false);
    c.path = id.path!;
    c.peerGid = parseGid(c.path.dgid)!;
    c.responderResources = req.responderResources;
    c.initiatorDepth = req.initiatorDepth;
    c.retryCount = req.retryCount;
    c.avTimeout = c.path.packet_life_time + 1;
    c.timeoutMs = 2 * convertToMs(c.path.packet_life_time) + convertToMs(CM_RESPONSE_TIMEOUT);
    c.state = "REQ_SENT";
    const mad = c.mad("REQ", {
      ps: id.ps,
      port: id.dst!.port,
      src: id.src,
      dst: id.dst,
      path: c.path,
      req,
      privateData: req.privateData,
    });
    c.sendRetried(mad, c.timeoutMs, () => c.unreachable());
    return c;
  }

  /** ib_send_cm_sidr_req (cma_resolve_ib_udp). */
  static sidrReq(id: SimCmId, privateData: Uint8Array | undefined): CmConn {
    const c = new CmConn(id, id.device!, false);
    c.path = id.path!;
    c.peerGid = parseGid(c.path.dgid)!;
    c.timeoutMs = convertToMs(CM_RESPONSE_TIMEOUT);
    c.state = "SIDR_REQ_SENT";
    const mad = c.mad("SIDR_REQ", {
      ps: id.ps,
      port: id.dst!.port,
      src: id.src,
      dst: id.dst,
      path: c.path,
      privateData,
    });
    c.sendRetried(mad, c.timeoutMs, () => c.unreachable());
    return c;
  }

  // --- what the program's calls send ---------------------------------------------------

  /** ib_send_cm_rep (rdma_accept). */
  rep(rep: RepInfo): void {
    this.cancelRetry();
    this.state = "REP_SENT";
    const targetAckDelay = this.dev.deviceAttr().local_ca_ack_delay;
    this.sendRetried(this.mad("REP", { rep, targetAckDelay, privateData: rep.privateData }), this.timeoutMs, () =>
      this.unreachable(),
    );
  }

  /**
   * ib_send_cm_rej with `reason` (rdma_reject: IB_CM_REJ_CONSUMER_DEFINED): only while a
   * connection is being set up; EINVAL once it was answered, established or is going away
   * (measured: a second rdma_reject, a reject on an established id). After a REP it waits out
   * timewait, before it goes idle.
   */
  rej(reason: number, privateData: Uint8Array | undefined): void {
    const settingUp = ["REQ_SENT", "MRA_REQ_RCVD", "REQ_RCVD", "MRA_REQ_SENT", "REP_RCVD", "MRA_REP_SENT"];
    const repSent = this.state === "REP_SENT" || this.state === "MRA_REP_RCVD";
    if (!settingUp.includes(this.state) && !repSent)
      throw new VerbsError(
        "rdma_reject",
        errnos.EINVAL,
        because(this.state === "IDLE" ? { kind: "request-answered" } : { kind: "not-rejectable", state: this.state }, {
          attribute: "id",
        }),
      );
    this.cancelRetry();
    this.send(this.mad("REJ", { reason, privateData }));
    if (repSent) this.enterTimewait();
    else this.state = "IDLE";
  }

  /** ib_send_cm_sidr_rep: status 0 (rdma_accept) or IB_SIDR_REJECT (rdma_reject). */
  sidrRep(status: number, qpn: number, privateData: Uint8Array | undefined): void {
    if (this.state !== "SIDR_REQ_RCVD")
      throw new VerbsError(
        status ? "rdma_reject" : "rdma_accept",
        errnos.EINVAL,
        because({ kind: "request-answered" }, { attribute: "id" }),
      );
    this.send(this.mad("SIDR_REP", { reason: status, qpn, qkey: status ? 0 : RDMA_UDP_QKEY, privateData }));
    this.state = "IDLE";
  }

  /** The kernel's rdma_disconnect: a DREQ, or the DREP to one received; nothing otherwise. */
  disconnect(): void {
    if (this.state === "ESTABLISHED") {
      this.state = "DREQ_SENT";
      this.sendRetried(this.mad("DREQ", {}), this.timeoutMs, () => {
        // IB_CM_DREQ_ERROR: rdma_cm reports DISCONNECTED with −ETIMEDOUT, the CM waits out timewait.
        this.disconnected(-errnos.ETIMEDOUT);
        this.enterTimewait();
      });
    } else if (this.state === "DREQ_RCVD") {
      this.send(this.mad("DREP", {}));
      this.enterTimewait();
    }
  }

  /** cm_destroy_id: what the CM sends when the id goes, by state. */
  destroy(): void {
    this.cancelRetry();
    switch (this.state) {
      case "REQ_SENT":
      case "MRA_REQ_RCVD":
        this.send(this.mad("REJ", { reason: IB_CM_REJ_TIMEOUT }));
        break;
      case "REQ_RCVD":
      case "MRA_REQ_SENT":
      case "REP_RCVD":
      case "MRA_REP_SENT":
      case "REP_SENT":
      case "MRA_REP_RCVD":
        this.send(this.mad("REJ", { reason: IB_CM_REJ_CONSUMER_DEFINED }));
        break;
      case "ESTABLISHED":
        this.send(this.mad("DREQ", {}));
        break;
      case "DREQ_RCVD":
        this.send(this.mad("DREP", {}));
        break;
      default:
        break;
    }
    this.timewait?.cancel();
    this.state = "IDLE";
    this.cm.conns.delete(this.localId);
  }

  /** Which rdma_init_qp_attr states the CM can answer now (cm_init_qp_*_attr). */
  canInit(): boolean {
    return (
      this.state !== "IDLE" && this.state !== "TIMEWAIT" && this.state !== "DREQ_SENT" && this.state !== "DREQ_RCVD"
    );
  }
  canRtr(): boolean {
    return ["REQ_RCVD", "MRA_REQ_SENT", "REP_RCVD", "MRA_REP_SENT", "REP_SENT", "MRA_REP_RCVD", "ESTABLISHED"].includes(
      this.state,
    );
  }
  canRts(): boolean {
    return this.canRtr();
  }

  /** ib_init_ah_attr_from_path: the address vector of this end's path. */
  ahAttr(): AhAttr {
    const sgid = parseGid(this.path.sgid)!;
    return {
      grh: {
        dgid: this.path.dgid,
        flow_label: this.path.flow_label,
        sgid_index: Math.max(0, this.dev.findGid(sgid)),
        hop_limit: this.path.hop_limit,
        traffic_class: this.path.traffic_class,
      },
      dlid: 0,
      sl: this.path.sl,
      src_path_bits: 0,
      static_rate: this.path.rate,
      is_global: 1,
      port_num: 1,
    };
  }

  // --- receiving ---------------------------------------------------------------------------

  /** A MAD for this end (routed by its local communication ID). */
  receive(m: Mad): void {
    const id = this.id;
    switch (m.attr) {
      case "MRA":
        if (this.state === "REQ_SENT") this.state = "MRA_REQ_RCVD";
        else if (this.state === "REP_SENT") this.state = "MRA_REP_RCVD";
        else return;
        // The sender will answer within its service timeout: wait that long (cm_mra_handler).
        this.stretchRetry(convertToMs(MRA_SERVICE_TIMEOUT) + convertToMs(this.avTimeout));
        return;
      case "REP": {
        if (this.state !== "REQ_SENT" && this.state !== "MRA_REQ_RCVD") return;
        this.cancelRetry();
        const rep = m.rep!;
        this.remoteId = m.localComm;
        this.remoteQpn = rep.qpn;
        this.sqPsn = rep.startingPsn;
        this.initiatorDepth = rep.responderResources;
        this.responderResources = rep.initiatorDepth;
        this.rnrRetryCount = rep.rnrRetryCount;
        this.avTimeout = ackTimeout(m.targetAckDelay!, this.avTimeout - 1);
        this.state = "REP_RCVD";
        // rdma_cm acknowledges the REP at once (the program's RTU may take a while).
        this.send(this.mad("MRA", {}));
        this.state = "MRA_REP_SENT";
        const conn: ConnParamEvent = {
          ...emptyConn(),
          private_data: padded(rep.privateData, RDMA_CM_PRIVATE_DATA_MAX.accept),
          private_data_len: RDMA_CM_PRIVATE_DATA_MAX.accept,
          responder_resources: rep.initiatorDepth,
          initiator_depth: rep.responderResources,
          flow_control: rep.flowControl,
          rnr_retry_count: rep.rnrRetryCount,
          srq: rep.srq,
          qp_num: rep.qpn,
        };
        id.channel.push({
          event: RDMA_CM_EVENT_CONNECT_RESPONSE,
          status: 0,
          id,
          conn,
          process: (e) => {
            // rdma_get_cm_event, CONNECT_RESPONSE with a QP: ucma_process_conn_resp.
            if (!id.qp || id.destroyed) return;
            try {
              id.modifyRtr("rdma_get_cm_event", RDMA_MAX_RESP_RES);
              id.modifyRts("rdma_get_cm_event", RDMA_MAX_INIT_DEPTH);
              this.rtu();
              e.event = RDMA_CM_EVENT_ESTABLISHED;
            } catch (err) {
              id.modifyErr("rdma_get_cm_event");
              e.event = RDMA_CM_EVENT_CONNECT_ERROR;
              e.status = err instanceof VerbsError ? -err.errno : -errnos.EINVAL;
              id.connectError = true;
            }
          },
        });
        return;
      }
      case "RTU":
        if (this.state !== "REP_SENT" && this.state !== "MRA_REP_RCVD") return;
        this.cancelRetry();
        this.state = "ESTABLISHED";
        id.channel.push({ event: RDMA_CM_EVENT_ESTABLISHED, status: 0, id, conn: emptyConn() });
        return;
      case "REJ": {
        if (this.state === "IDLE" || this.state === "ESTABLISHED" || this.state === "TIMEWAIT") return;
        this.cancelRetry();
        this.state = "IDLE";
        if (id.state !== "connect") return;
        id.channel.push({
          event: RDMA_CM_EVENT_REJECTED,
          status: m.reason!,
          id,
          conn: {
            ...emptyConn(),
            private_data: padded(m.privateData, RDMA_CM_PRIVATE_DATA_MAX.reject),
            private_data_len: RDMA_CM_PRIVATE_DATA_MAX.reject,
          },
          // librdmacm: a REJECTED after a failed CONNECT_RESPONSE is swallowed; otherwise QP → ERR.
          process: () => {
            if (!id.connectError) id.modifyErr("rdma_get_cm_event");
          },
        });
        return;
      }
      case "DREQ":
        if (this.state === "TIMEWAIT") {
          this.send(this.mad("DREP", {}));
          return;
        }
        if (!["ESTABLISHED", "MRA_REP_RCVD", "REP_SENT", "DREQ_SENT"].includes(this.state)) return;
        this.cancelRetry();
        this.state = "DREQ_RCVD";
        this.disconnected(0);
        return;
      case "DREP":
        if (this.state !== "DREQ_SENT") return;
        this.cancelRetry();
        this.enterTimewait();
        this.disconnected(0);
        return;
      case "SIDR_REP": {
        if (this.state !== "SIDR_REQ_SENT") return;
        this.cancelRetry();
        this.state = "IDLE";
        const status = m.reason ?? 0;
        const privateData = padded(m.privateData, RDMA_CM_PRIVATE_DATA_MAX.udpAccept);
        const ud: UdParamEvent = {
          private_data: privateData,
          private_data_len: privateData.length,
          ah_attr: status ? emptyAh() : this.ahAttr(),
          qp_num: status ? 0 : m.qpn!,
          qkey: status ? 0 : m.qkey!,
        };
        id.channel.push({ event: status ? RDMA_CM_EVENT_UNREACHABLE : RDMA_CM_EVENT_ESTABLISHED, status, id, ud });
        return;
      }
      default:
        return;
    }
  }

  /** RDMA_CM_EVENT_DISCONNECTED once (rdma_cm: CONNECT → DISCONNECT). */
  private disconnected(status: number): void {
    const id = this.id;
    if (id.state !== "connect") return;
    id.state = "disconnect";
    id.channel.push({ event: RDMA_CM_EVENT_DISCONNECTED, status, id, conn: emptyConn() });
  }

  private enterTimewait(): void {
    this.state = "TIMEWAIT";
    this.timewait = schedule(this.cm.world.clock, convertToMs(this.avTimeout), () => {
      this.timewait = undefined;
      this.state = "IDLE";
      this.cm.conns.delete(this.localId);
      const id = this.id;
      if (id.destroyed || id.state !== "disconnect") return;
      id.channel.push({ event: RDMA_CM_EVENT_TIMEWAIT_EXIT, status: 0, id, conn: emptyConn() });
    });
  }

  /** ib_send_cm_rtu (librdmacm's ACCEPT on the active side, cma_rep_recv). */
  private rtu(): void {
    this.send(this.mad("RTU", {}));
    this.state = "ESTABLISHED";
  }

  /** REQ_ERROR / REP_ERROR / SIDR_REQ_ERROR: out of retries. */
  private unreachable(): void {
    this.state = "IDLE";
    const id = this.id;
    if (id.destroyed || id.state !== "connect") return;
    id.channel.push({
      event: RDMA_CM_EVENT_UNREACHABLE,
      status: -errnos.ETIMEDOUT,
      id,
      ...(id.ps === RDMA_PS_UDP
        ? { ud: { private_data: new Uint8Array(0), private_data_len: 0, ah_attr: emptyAh(), qp_num: 0, qkey: 0 } }
        : { conn: emptyConn() }),
    });
  }

  // --- the passive side's first MAD ----------------------------------------------------

  /** A REQ or SIDR_REQ arrived at `dev` (cm_req_handler / cm_sidr_req_handler, then cma_ib_req_handler). */
  static request(cm: SimCm, dev: SimDevice, m: Mad): void {
    for (const c of cm.conns.values())
      if (c.dev === dev && c.passive && c.remoteId === m.localComm) {
        // A resent request: the CM repeats its MRA (cm_dup_req_handler) and nothing else.
        if (c.state === "MRA_REQ_SENT") c.send(c.mad("MRA", {}));
        return;
      }
    const listener = cm.findListener(dev, m.ps!, m.port!, m.dst!.bytes);
    const udp = m.attr === "SIDR_REQ";
    if (!listener) {
      // No listener for the service ID on this device.
      const answer: Mad = {
        attr: udp ? "SIDR_REP" : "REJ",
        tid: m.tid,
        localComm: 0,
        remoteComm: m.localComm,
        reason: udp ? 1 : IB_CM_REJ_INVALID_SERVICE_ID,
        retry: 0,
      };
      CmConn.transmit(cm, dev, parseGid(m.path!.sgid)!, answer);
      return;
    }
    const child = listener.channel.createChildId(listener);
    child.device = dev;
    child.src = { bytes: m.dst!.bytes, port: m.port! };
    child.dst = { bytes: m.src!.bytes, port: m.src!.port };
    const c = new CmConn(child, dev, true);
    c.remoteId = m.localComm;
    c.peerGid = parseGid(m.path!.sgid)!;
    // The path as the passive side sees it (cm_format_paths_from_req).
    c.path = { ...m.path!, sgid: m.path!.dgid, dgid: m.path!.sgid };
    // An RC child arrives routed (num_paths 1); a SIDR child has no path (num_paths 0, measured).
    if (m.attr === "REQ") child.path = c.path;
    child.conn = c;
    child.state = "connect";
    c.timeoutMs = convertToMs(CM_RESPONSE_TIMEOUT);
    if (udp) {
      c.state = "SIDR_REQ_RCVD";
      listener.channel.push({
        event: RDMA_CM_EVENT_CONNECT_REQUEST,
        status: 0,
        id: child,
        listen_id: listener,
        ud: {
          private_data: padded(m.privateData, RDMA_CM_PRIVATE_DATA_MAX.udpConnect),
          private_data_len: RDMA_CM_PRIVATE_DATA_MAX.udpConnect,
          ah_attr: emptyAh(),
          qp_num: 0,
          qkey: 0,
        },
        process: () => child.attach(dev),
      });
      return;
    }
    const r = m.req!;
    c.remoteQpn = r.qpn;
    c.sqPsn = r.startingPsn;
    c.responderResources = r.initiatorDepth;
    c.initiatorDepth = r.responderResources;
    c.retryCount = r.retryCount;
    c.rnrRetryCount = r.rnrRetryCount;
    c.avTimeout = ackTimeout(dev.deviceAttr().local_ca_ack_delay, c.path.packet_life_time);
    child.respRes = r.initiatorDepth;
    child.initDepth = r.responderResources;
    c.state = "REQ_RCVD";
    listener.channel.push({
      event: RDMA_CM_EVENT_CONNECT_REQUEST,
      status: 0,
      id: child,
      listen_id: listener,
      conn: {
        private_data: padded(r.privateData, RDMA_CM_PRIVATE_DATA_MAX.connect),
        private_data_len: RDMA_CM_PRIVATE_DATA_MAX.connect,
        responder_resources: r.initiatorDepth,
        initiator_depth: r.responderResources,
        flow_control: r.flowControl,
        retry_count: r.retryCount,
        rnr_retry_count: r.rnrRetryCount,
        srq: r.srq,
        qp_num: r.qpn,
      },
      process: () => child.attach(dev),
    });
    // rdma_cm tells the active side to wait: the program may take its time to accept.
    c.send(c.mad("MRA", {}));
    c.state = "MRA_REQ_SENT";
  }

  // --- MADs on the wire --------------------------------------------------------------------

  private mad(attr: string, f: Partial<Mad>): Mad {
    return {
      attr,
      tid: (++tidCounter).toString(16).padStart(16, "0"),
      localComm: this.localId,
      remoteComm: this.remoteId,
      retry: 0,
      ...f,
    };
  }

  private send(m: Mad): void {
    CmConn.transmit(this.cm, this.dev, this.peerGid, m);
  }

  /** Sends `m` and resends it every `timeoutMs` until answered, MAX_CM_RETRIES times; then `onTimeout`. */
  private sendRetried(m: Mad, timeoutMs: number, onTimeout: () => void): void {
    this.cancelRetry();
    let left = MAX_CM_RETRIES;
    let wait = timeoutMs;
    const attempt = () => {
      this.retry = schedule(this.cm.world.clock, wait, () => {
        if (left-- > 0) {
          m.retry++;
          this.send(m);
          attempt();
        } else {
          this.retry = undefined;
          onTimeout();
        }
      });
    };
    this.send(m);
    attempt();
    // ib_modify_mad: the new timeout holds for this wait and every resend after it.
    this.stretch = (ms: number) => {
      this.retry?.cancel();
      wait = ms;
      attempt();
    };
  }

  private stretch: ((ms: number) => void) | undefined;

  private stretchRetry(ms: number): void {
    this.stretch?.(ms);
  }

  private cancelRetry(): void {
    this.retry?.cancel();
    this.retry = undefined;
    this.stretch = undefined;
  }

  /** Puts a MAD on QP1 from `from` toward `dgid`: logged and handled when it arrives (at once, on the virtual clock). */
  static transmit(cm: SimCm, from: SimDevice, dgid: Uint8Array, m: Mad): void {
    const world = cm.world;
    const to = world.findDeviceByGid(dgid);
    const summary: CmMad = {
      attr: m.attr,
      attr_id: ATTR_ID[m.attr],
      tid: m.tid,
      local_comm_id: m.localComm,
      remote_comm_id: m.remoteComm,
      private_data_len: m.privateData
        ? m.privateData.length + (m.attr === "REQ" || m.attr === "SIDR_REQ" ? CMA_HDR : 0)
        : m.attr === "REQ" || m.attr === "SIDR_REQ"
          ? CMA_HDR
          : 0,
      retry: m.retry,
    };
    if (m.ps !== undefined && m.port !== undefined)
      summary.service_id = `0x${((BigInt(m.ps) << 16n) | BigInt(m.port)).toString(16).padStart(16, "0")}`;
    if (m.req) {
      summary.qpn = m.req.qpn;
      summary.starting_psn = m.req.startingPsn;
    }
    if (m.rep) {
      summary.qpn = m.rep.qpn;
      summary.starting_psn = m.rep.startingPsn;
    }
    if (m.reason !== undefined) summary.reason = m.reason;
    if (m.attr === "SIDR_REP" && m.qpn !== undefined) summary.qpn = m.qpn;
    schedule(world.clock, 0, () => {
      if (!to || !world.reachable(from, to) || !from.linkUp) {
        world.mad(
          from,
          to,
          summary,
          to ? { kind: "link-down" } : { kind: "no-device-with-ip", ip: ipText([...dgid.subarray(12)]) },
        );
        return;
      }
      world.mad(from, to, summary);
      if (m.attr === "REQ" || m.attr === "SIDR_REQ") {
        CmConn.request(cm, to, m);
        return;
      }
      const c = cm.conns.get(m.remoteComm);
      if (c && c.dev === to) c.receive(m);
      else if (m.attr === "DREQ")
        CmConn.transmit(cm, to, parseGid(formatSgidOf(from, dgid))!, {
          ...m,
          attr: "DREP",
          localComm: 0,
          remoteComm: m.localComm,
          retry: 0,
        });
    });
  }
}

/** The GID a device answers from when it gets a MAD for one of its GIDs (the same one). */
function formatSgidOf(from: SimDevice, _to: Uint8Array): string {
  // The answer goes back to the sender's device: any of its GIDs reaches it.
  const g = from.gids.find((s) => s !== null)!;
  return g.text;
}

/** A one-shot timer on the virtual clock; `cancel()` stops it. */
export function schedule(clock: Clock, ms: number, fn: () => void): { cancel(): void } {
  const t = new Timer(fn);
  clock.arm(t, clock.now + ms);
  return { cancel: () => clock.cancel(t) };
}

/** event->param.conn with nothing in it (events that carry no connection data). */
export function emptyConn(): ConnParamEvent {
  return {
    private_data: new Uint8Array(0),
    private_data_len: 0,
    responder_resources: 0,
    initiator_depth: 0,
    flow_control: 0,
    retry_count: 0,
    rnr_retry_count: 0,
    srq: 0,
    qp_num: 0,
  };
}

/** An all-zero struct ibv_ah_attr (a SIDR request's event, a failed SIDR). */
export function emptyAh(): AhAttr {
  return {
    grh: { dgid: "::", flow_label: 0, sgid_index: 0, hop_limit: 0, traffic_class: 0 },
    dlid: 0,
    sl: 0,
    src_path_bits: 0,
    static_rate: 0,
    is_global: 0,
    port_num: 0,
  };
}

/** `len` bytes: `data` then zeros (what a MAD's fixed private-data field carries). */
export function padded(data: Uint8Array | undefined, len: number): Uint8Array {
  const out = new Uint8Array(len);
  if (data) out.set(data.subarray(0, len));
  return out;
}
