/**
 * The one table of what the call surface dispatches: for each kind of object, each method
 * the contract (verbs/backend.ts) gives it, plus the few the session adds (`log`, MR
 * `read`/`write`), with its C name and what the session does around it. The session looks
 * calls up here and nowhere else, and the facade forwards exactly these methods, so a name
 * such as `constructor`, `toString` or `__proto__` names nothing. The type below makes the
 * table list every contract method and nothing more. Browser-safe.
 */
import type { Ah, CompChannel, Context, Cq, Mr, Pd, Qp, VerbsBackend } from "../../verbs/backend.js";
import type { CmBackend, CmEvent, CmEventChannel, CmId } from "../../verbs/cm.js";
import type { HandleType } from "./wire.js";

/** What the session does around one method. */
export interface VerbSpec {
  /** The C function behind it; `verbslab_*` names what has no C verb. */
  readonly verb: string;
  /** The kind of object it returns (the session registers a handle for it). */
  readonly creates?: HandleType;
  /** It destroys its target. */
  readonly destroys?: true;
  /** Not a verb: no step gate, no snapshots (reading and writing MR bytes still get an event). */
  readonly ungated?: true;
  /** Traffic may move during it: counters are compared around it. */
  readonly traffic?: true;
}

interface Contract {
  verbs: VerbsBackend;
  context: Context;
  pd: Pd;
  mr: Mr;
  cq: Cq;
  channel: CompChannel;
  qp: Qp;
  ah: Ah;
  cm: CmBackend;
  cmChannel: CmEventChannel;
  cmId: CmId;
  cmEvent: CmEvent;
}

/** The session's own methods on an object, beside the contract's. */
interface SessionMethods {
  /** `setLink`/`clearLink`/`getLink` reach the backend's lab link (verbs/lab.ts; the facade also offers them as `verbs.lab.*`). */
  verbs: "log" | "setLink" | "clearLink" | "getLink";
  mr: "read" | "write";
}
/** Contract methods the facade answers itself, without a call (`mr.sge` builds an SGE from props). */
interface LocalMethods {
  mr: "sge";
  /** A callback cannot cross the bridge: the session itself listens (librdmacm's QP transitions). */
  cm: "onQpTransition";
}

type MethodsOf<T> = { [K in keyof T]-?: T[K] extends (...args: never[]) => unknown ? K : never }[keyof T] & string;
type Dispatched<T extends HandleType> =
  | Exclude<MethodsOf<Contract[T]>, T extends keyof LocalMethods ? LocalMethods[T] : never>
  | (T extends keyof SessionMethods ? SessionMethods[T] : never);

export type VerbTable = { readonly [T in HandleType]: { readonly [M in Dispatched<T>]: VerbSpec } };

export const VERBS: VerbTable = {
  verbs: {
    getDeviceList: { verb: "ibv_get_device_list" },
    openDevice: { verb: "ibv_open_device", creates: "context" },
    now: { verb: "verbslab_now", ungated: true },
    sleep: { verb: "verbslab_sleep", traffic: true },
    log: { verb: "verbslab_log", ungated: true },
    setLink: { verb: "verbslab_set_link" },
    clearLink: { verb: "verbslab_clear_link" },
    getLink: { verb: "verbslab_get_link" },
  },
  context: {
    queryDevice: { verb: "ibv_query_device" },
    queryPort: { verb: "ibv_query_port" },
    queryGid: { verb: "ibv_query_gid" },
    queryGidEx: { verb: "ibv_query_gid_ex" },
    queryGidTable: { verb: "ibv_query_gid_table" },
    queryPkey: { verb: "ibv_query_pkey" },
    allocPd: { verb: "ibv_alloc_pd", creates: "pd" },
    createCq: { verb: "ibv_create_cq", creates: "cq" },
    createCompChannel: { verb: "ibv_create_comp_channel", creates: "channel" },
    getAsyncEvent: { verb: "ibv_get_async_event", traffic: true },
    queryCounters: { verb: "verbslab_query_counters" },
    close: { verb: "ibv_close_device", destroys: true },
  },
  pd: {
    regMr: { verb: "ibv_reg_mr", creates: "mr" },
    createQp: { verb: "ibv_create_qp", creates: "qp" },
    createAh: { verb: "ibv_create_ah", creates: "ah" },
    dealloc: { verb: "ibv_dealloc_pd", destroys: true },
  },
  mr: {
    read: { verb: "verbslab_mr_read", ungated: true },
    write: { verb: "verbslab_mr_write", ungated: true },
    dereg: { verb: "ibv_dereg_mr", destroys: true },
  },
  cq: {
    poll: { verb: "ibv_poll_cq", traffic: true },
    pollWait: { verb: "verbslab_poll_wait", traffic: true },
    reqNotify: { verb: "ibv_req_notify_cq" },
    ackEvents: { verb: "ibv_ack_cq_events" },
    destroy: { verb: "ibv_destroy_cq", destroys: true },
  },
  channel: {
    getCqEvent: { verb: "ibv_get_cq_event", traffic: true },
    destroy: { verb: "ibv_destroy_comp_channel", destroys: true },
  },
  qp: {
    modify: { verb: "ibv_modify_qp", traffic: true },
    query: { verb: "ibv_query_qp" },
    postSend: { verb: "ibv_post_send", traffic: true },
    postRecv: { verb: "ibv_post_recv", traffic: true },
    destroy: { verb: "ibv_destroy_qp", destroys: true },
  },
  ah: { destroy: { verb: "ibv_destroy_ah", destroys: true } },
  cm: {
    createEventChannel: { verb: "rdma_create_event_channel", creates: "cmChannel" },
    getAddrInfo: { verb: "rdma_getaddrinfo" },
  },
  cmChannel: {
    createId: { verb: "rdma_create_id", creates: "cmId" },
    getEvent: { verb: "rdma_get_cm_event", creates: "cmEvent", traffic: true },
    destroy: { verb: "rdma_destroy_event_channel", destroys: true },
  },
  cmId: {
    bindAddr: { verb: "rdma_bind_addr" },
    listen: { verb: "rdma_listen" },
    resolveAddr: { verb: "rdma_resolve_addr" },
    resolveRoute: { verb: "rdma_resolve_route" },
    createQp: { verb: "rdma_create_qp", creates: "qp" },
    destroyQp: { verb: "rdma_destroy_qp" },
    connect: { verb: "rdma_connect", traffic: true },
    accept: { verb: "rdma_accept", traffic: true },
    reject: { verb: "rdma_reject", traffic: true },
    disconnect: { verb: "rdma_disconnect", traffic: true },
    initQpAttr: { verb: "rdma_init_qp_attr" },
    joinMulticast: { verb: "rdma_join_multicast" },
    leaveMulticast: { verb: "rdma_leave_multicast" },
    getLocalAddr: { verb: "rdma_get_local_addr" },
    getPeerAddr: { verb: "rdma_get_peer_addr" },
    destroy: { verb: "rdma_destroy_id", destroys: true },
  },
  cmEvent: { ack: { verb: "rdma_ack_cm_event" } },
};

/** The methods an object of `type` dispatches, in table order. */
export function methodsOf(type: HandleType): readonly string[] {
  return Object.keys(VERBS[type]);
}

/** The spec of `type.method`, or undefined when the table has no such method (own entries only). */
export function verbSpec(type: HandleType, method: unknown): VerbSpec | undefined {
  if (typeof method !== "string") return undefined;
  const row = VERBS[type] as Readonly<Record<string, VerbSpec>>;
  return Object.hasOwn(row, method) ? row[method] : undefined;
}

/** Method names (of any type) whose spec has `flag`: e.g. every method after which traffic may have moved. */
export function methodsWith(flag: "traffic" | "ungated" | "destroys"): ReadonlySet<string> {
  const out = new Set<string>();
  for (const row of Object.values(VERBS) as Readonly<Record<string, VerbSpec>>[])
    for (const [m, spec] of Object.entries(row)) if (spec[flag]) out.add(m);
  return out;
}
