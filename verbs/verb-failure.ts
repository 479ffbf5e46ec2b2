/**
 * Why a verb call failed, as data: every `fail(verb, code, because({ kind, ... }))` site in the
 * simulator, the native pre-checks and the session fills it with what it checked, and each
 * language words it in one place: English here (`verbFailureText`, the error's `reason`, also
 * what transcripts, exports and the CLI print), Chinese in the renderer
 * (app/renderer/src/i18n/verb-failure-zh.ts). Values stay numbers and names (sizes, limits,
 * attribute names, states) so that every wording names them. It travels on the error as
 * `VerbsError.why` (and ErrorData's `why`); a transcript from before it existed has only the
 * sentence.
 */
import { flagNames, ibv_access_flags, ibv_qp_state, nameOf } from "./constants.js";
import type { VerbsErrorDetails } from "./errors.js";

/** Which queue of a QP: the send queue or the receive queue. */
export type Queue = "send" | "recv";

/** The rdma_cm verb whose id state was wrong (what it needs is worded from this). */
export type CmStep = "listen" | "resolve-addr" | "resolve-route" | "connect" | "join";

/** The rdma_cm message that carries private data. */
export type PrivateDataCarrier = "tcp-req" | "rep" | "rej" | "udp-req" | "udp-rep";
const CARRIER: Record<PrivateDataCarrier, string> = {
  "tcp-req": "an RDMA_PS_TCP REQ (92 bytes less rdma_cm's 36-byte header)",
  rep: "a REP",
  rej: "a REJ",
  "udp-req": "an RDMA_PS_UDP SIDR_REQ",
  "udp-rep": "an RDMA_PS_UDP SIDR_REP",
};

/** What makes this machine not VerbsLab's lab network (native/lab-link.ts): faults are refused there. */
export type OffLab =
  | { kind: "not-vm" }
  | { kind: "not-root" }
  | { kind: "no-netdev"; netdev: string }
  | { kind: "not-bound"; device: string; netdev: string }
  | { kind: "ip-failed"; netdev: string; error: string }
  | { kind: "not-veth"; netdev: string }
  | { kind: "wrong-peer"; netdev: string; peer: string; expected: string }
  | { kind: "no-address"; netdev: string; address: string };

/** How the backend process ended (app/backend/supervisor.ts): its exit, and why VerbsLab ended it if it hung. */
export interface BackendExit {
  code: number | null;
  signal: string | null;
  /** It stopped answering within `ms`: a request (`method`) or, without one, a liveness check. */
  hung?: { method?: string; ms: number };
}

/**
 * What a JavaScript argument should have been (a TypeError's `arg-type`): worded "an integer",
 * "a Uint8Array", ... in English.
 */
export type ArgExpected =
  | "integer"
  | "non-negative-integer"
  | "number"
  | "object"
  | "bigint"
  | "string"
  | "boolean"
  | "array"
  | "uint8array"
  | "device-name"
  | "ipv4"
  | "ipv6-text"
  | "addr-port"
  | "ip-string"
  | "memory"
  | "mr-data";

/** A JavaScript value as an argument error names it (`seen`): a string or number with its text, else its type. */
export type Got =
  | { t: "string"; text: string }
  | { t: "number"; text: string }
  | { t: "null" | "array" | "undefined" | "object" | "boolean" | "bigint" | "function" | "symbol" };

/** What a learner's value was, for an argument error (strings cut at 20 characters). */
export function seen(v: unknown): Got {
  if (typeof v === "string") return { t: "string", text: v.length > 20 ? v.slice(0, 20) + "…" : v };
  if (typeof v === "number") return { t: "number", text: Number.isNaN(v) ? "NaN" : String(v) };
  if (v === null) return { t: "null" };
  if (Array.isArray(v)) return { t: "array" };
  return { t: typeof v as "undefined" | "object" | "boolean" | "bigint" | "function" | "symbol" };
}

/** The English of a value an argument error names ("the string \"4\"", "NaN", "null", "an array", "boolean"). */
export function gotText(g: Got): string {
  if (g.t === "string") return `the string ${JSON.stringify(g.text)}`;
  if (g.t === "number") return g.text;
  if (g.t === "array") return "an array";
  return g.t;
}

/** An object this backend did not make (a TypeError's `foreign-object`). */
export type ForeignObject = "CQ" | "completion channel" | "object";

/** What the runner itself says of a program (app/renderer/src/runner/learner-worker.ts). */
export type RunnerFailure =
  /** main.ts has no default export that is a function. */
  | { kind: "no-default-export" }
  /** `method` was still running when main returned: it was called without `await`. */
  | { kind: "not-awaited"; method: string };

/** What the route to a dgid lacks. */
export type NoRoute = { kind: "no-device" } | { kind: "link-down"; device: string };

export type VerbFailure =
  // ---- device, port, GID (lessons 1-3)
  /** ibv_open_device: no device has this name. */
  | { kind: "no-device"; name: string }
  /** ibv_query_port: rxe has port 1 only. */
  | { kind: "one-port"; port: number }
  /** `field` (port_num, ah_attr.port_num) must be 1. */
  | { kind: "port-num"; field: string; got: number }
  /** A GID index past the table (`count` entries). */
  | { kind: "gid-index"; index: number; count: number }
  /** The GID table's entry `index` is empty. */
  | { kind: "gid-empty"; index: number }
  /** The P_Key table has one entry. */
  | { kind: "pkey-index" }
  // ---- PD, MR (lessons 2-4)
  /** ibv_dealloc_pd while objects still use the PD. */
  | { kind: "pd-busy"; mrs: number; qps: number; ahs: number }
  /** Access bits no verbs.h flag names. */
  | { kind: "access-unknown"; bits: number }
  /** REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE; `access` is the flags given. */
  | { kind: "remote-needs-local-write"; access: number }
  /** IBV_ACCESS_ON_DEMAND: rxe has no ODP. */
  | { kind: "no-odp" }
  /** A length that is not positive (`length` 0: the buffer is empty). */
  | { kind: "length-not-positive"; length: number }
  | { kind: "length-zero" }
  /** More than can be pinned (`allocate`: this process could not even allocate it). */
  | { kind: "cannot-pin"; length: number; allocate: boolean }
  | { kind: "mr-pool-exhausted" }
  /** The object was destroyed already (`object` as the site names it: "QP", "CQ", "PD", ...). */
  | { kind: "destroyed"; object: string }
  // ---- CQ, channel (lessons 4-8)
  /** cqe outside 1..max. */
  | { kind: "cqe-range"; cqe: number; max: number }
  /** comp_vector not below num_comp_vectors. */
  | { kind: "comp-vector"; vector: number; count: number }
  /** The completion channel belongs to another device. */
  | { kind: "channel-other-device" }
  | { kind: "negative-num-entries"; n: number }
  /** ibv_destroy_cq while `qps` QPs use the CQ. */
  | { kind: "cq-busy"; qps: number }
  /** ibv_destroy_comp_channel while `cqs` CQs use it. */
  | { kind: "channel-busy"; cqs: number }
  /** ibv_destroy_cq with `n` completion events got and not acknowledged: libibverbs would wait for ever. */
  | { kind: "unacked-events"; n: number }
  // ---- QP creation (lesson 4 on)
  /** A QP type rxe does not support (`known`: a verbs.h type rxe lacks, else no type at all). */
  | { kind: "qp-type"; type: number; known: boolean }
  /** send_cq or recv_cq is missing. */
  | { kind: "cq-required"; cq: string }
  /** send_cq or recv_cq is of another device context. */
  | { kind: "cq-other-context"; cq: string }
  /** cap.`field` `value` is above rxe's `max`. */
  | { kind: "cap-limit"; field: string; value: number; max: number }
  /** ibv_destroy_qp while the QP is attached to a multicast group. */
  | { kind: "qp-in-mcast" }
  // ---- posting (lessons 5 on)
  | { kind: "wr-list-empty" }
  /** post_send outside RTS: the WRs stay queued. */
  | { kind: "sq-not-ready"; state: number }
  /** The session's prediction: post_send before RTS (rxe refuses it; ERR flushes). */
  | { kind: "send-needs-rts"; state: number }
  /** The session's prediction: post_recv in RESET. */
  | { kind: "recv-needs-init" }
  /** The QP model's prediction (state-machines/qp.ts): `from` → `to` with ah_attr.is_global 0 on RoCE. */
  | { kind: "predict-no-grh"; from: number; to: number }
  /** The prediction: ah_attr.grh.sgid_index `index` is not among the port's GID indices `valid`. */
  | { kind: "predict-sgid-index"; from: number; to: number; index: number; valid: number[] }
  /** The prediction: path_mtu `mtu` above the port's max_mtu (`maxMtu`, its verbs.h name). */
  | { kind: "predict-path-mtu"; from: number; to: number; mtu: number; maxMtu: string }
  /** post_recv in RESET. */
  | { kind: "recv-in-reset" }
  /** wr[i] has `n` SGEs, over max_send_sge / max_recv_sge `max`. */
  | { kind: "too-many-sge"; queue: Queue; i: number; n: number; max: number }
  /** wr[i] is an atomic without an 8-byte local buffer. */
  | { kind: "atomic-buffer"; i: number }
  /** wr[i]'s atomic remote_addr is not 8-byte aligned. */
  | { kind: "atomic-unaligned"; i: number; addr: number }
  /** wr[i] has `bytes` inline bytes, over max_inline_data `max`. */
  | { kind: "inline-too-long"; i: number; bytes: number; max: number }
  /** wr[i].sg_list[k]'s inline address is in no registered buffer. */
  | { kind: "inline-unregistered"; i: number; k: number; addr: number }
  | { kind: "no-mw" }
  /** wr[i] is a UD send without an AH of this backend (`gone`: the AH was destroyed or is another device's). */
  | { kind: "ud-ah"; i: number; gone: boolean }
  /** The queue is full: `capacity` WQEs. */
  | { kind: "queue-full"; queue: Queue; capacity: number }
  // ---- ibv_modify_qp (lessons 5-9): the transition table (verbs/qp-transitions.ts) and rxe's checks
  /** The mask lacks bits the transition requires, or has bits it does not accept. */
  | { kind: "mask"; from: number; to: number; needs: string[]; missing: string[]; notAllowed: string[] }
  /** There is no such transition (`withoutState`: the mask had no IBV_QP_STATE, so the target was the current state). */
  | { kind: "illegal"; from: number; to: number; withoutState: boolean }
  /** cur_qp_state named a state the QP is not in. */
  | { kind: "cur-state"; claimed: number; actual: number }
  /** libibverbs refuses mask bits from IBV_QP_RATE_LIMIT up. */
  | { kind: "rate-limit"; notAllowed: string[] }
  /** `field` (qp_state, cur_qp_state) `value` is not a QP state. */
  | { kind: "not-a-state"; field: string; value: number }
  /** The table has no row for this QP type. */
  | { kind: "no-modify-table"; qpType: number }
  /** A Q_Key with bit 31 set needs CAP_NET_RAW. */
  | { kind: "qkey-privileged" }
  | { kind: "no-alt-path" }
  | { kind: "sq-draining" }
  /** path_mtu above the port's max_mtu. */
  | { kind: "path-mtu"; mtu: number }
  /** max_rd_atomic above max_qp_init_rd_atom. */
  | { kind: "max-rd-atomic"; value: number; max: number }
  /** timeout above 31. */
  | { kind: "qp-timeout"; value: number }
  // ---- address vectors (lessons 6 on)
  /** RoCE needs is_global = 1 (`prefix`: ah_attr or the AH). */
  | { kind: "needs-grh"; prefix: string }
  /** `device` has no GID at `index`. */
  | { kind: "no-gid"; device: string; index: number }
  /** `text` is not a GID. */
  | { kind: "not-a-gid"; text: string }
  /** dgid is ::. */
  | { kind: "dgid-unset" }
  /** `device`'s link is down. */
  | { kind: "link-down"; device: string }
  /** No route to `gid`. */
  | { kind: "no-route"; gid: string; why: NoRoute }
  /** The sgid is IPv4 and the dgid IPv6. */
  | { kind: "gid-family"; dgid: string }
  // ---- waits (every lesson that polls or sleeps)
  /** `arg` `ms` is over the longest wait `max`. */
  | { kind: "wait-too-long"; arg: string; ms: number; max: number }
  /** Waiting `ms` would take the simulator's clock past `max`. */
  | { kind: "clock-limit"; arg: string; ms: number; max: number }
  // ---- rdma_cm (lessons 17-19)
  /** A port space other than RDMA_PS_TCP / RDMA_PS_UDP (`numbers`: the message gives theirs). */
  | { kind: "port-space"; ps: number; numbers: boolean }
  /** `service` is not a port number (`decimal`: native's words). */
  | { kind: "service"; service: string; decimal: boolean }
  /** `node` is not a numeric address (native: no DNS). */
  | { kind: "node-not-numeric"; node: string }
  | { kind: "node-required" }
  | { kind: "ephemeral-ports" }
  /** rdma_destroy_event_channel while `ids` ids use it. */
  | { kind: "cm-channel-busy"; ids: number }
  /** The event was acknowledged already (`event`: its name, where known). */
  | { kind: "event-acked"; event?: string }
  /** rdma_destroy_id / rdma_leave_multicast with `n` events on the id not acknowledged. */
  | { kind: "unacked-cm-events"; n: number }
  /** conn_param.`field` `value` does not fit a uint8_t. */
  | { kind: "conn-param-u8"; field: string; value: number }
  /** private_data of `bytes` bytes: private_data_len is a uint8_t (`param`: said of conn_param.private_data). */
  | { kind: "private-data-u8"; bytes: number; param: boolean }
  /** `bytes` of private data; `what` (a REQ, a REP, ...) carries at most `max`. */
  | { kind: "private-data-long"; bytes: number; what: PrivateDataCarrier; max: number }
  /** rdma_bind_addr on an id already bound (it is in `state`). */
  | { kind: "id-bound"; state: string }
  /** A bind that failed earlier left the id on `netdev`, which lacks `ip`. */
  | { kind: "bind-stale-netdev"; netdev: string; ip: string }
  /** No RDMA device has `ip`. */
  | { kind: "no-device-ip"; ip: string }
  /** `port` is below 1024 and the program is not root. */
  | { kind: "port-privileged"; port: number }
  /** `port` is bound by another id and one of the two binds the any address. */
  | { kind: "port-any-conflict"; port: number }
  /** `ip`:`port` is bound by another id. */
  | { kind: "addr-in-use"; ip: string; port: number }
  /** The id is in `state`; `step` needs another. */
  | { kind: "id-state"; step: CmStep; state: string }
  /** No route to `ip` (`mcast`: a multicast group, give src_addr). */
  | { kind: "cm-no-route"; ip: string; mcast: boolean }
  | { kind: "id-has-qp" }
  | { kind: "id-no-qp" }
  /** The id has no device yet (`join`: the words for rdma_join_multicast, else for rdma_create_qp). */
  | { kind: "id-unbound"; join: boolean }
  /** The id is not bound to a device. */
  | { kind: "id-no-device" }
  | { kind: "pd-other-context" }
  /** The rdma_cm modify of the id's QP failed: `cause` as data where there is some, else `text`. */
  | { kind: "cm-modify"; cause?: VerbFailure; text: string }
  /** The connection is in `state` (`need`: what the step needs of it). */
  | { kind: "connection-state"; state: string; need?: "rtr-path" | "rts-psn" }
  /** rdma_init_qp_attr for a state other than INIT, RTR, RTS. */
  | { kind: "init-qp-attr-state"; state: number }
  | { kind: "conn-param-required" }
  /** conn_param.responder_resources / initiator_depth above the device's max. */
  | { kind: "rd-atom-limit"; field: "responder_resources" | "initiator_depth"; value: number; max: number }
  | { kind: "accept-needs-request" }
  | { kind: "no-request" }
  | { kind: "request-answered" }
  /** Only a connection being set up can be rejected; this one is `state`. */
  | { kind: "not-rejectable"; state: string }
  | { kind: "not-connected" }
  | { kind: "join-needs-udp" }
  | { kind: "addr-any" }
  /** rdma_leave_multicast of a group the id has not joined. */
  | { kind: "not-joined"; ip: string; port: number }
  /** `field`.port is not a 16-bit port. */
  | { kind: "port-16"; field: string; port: number }
  /** `field`.addr `addr` is IPv6 (`ipv6`) or not a numeric IPv4 address. */
  | { kind: "not-ipv4"; field: string; addr: string; ipv6: boolean }
  // ---- the lab link (verbs.setLink)
  /** `field` must be a fraction from 0 to 1; `got` is what was given, as JSON. */
  | { kind: "link-fraction"; field: string; got: string }
  /** mtu.`side` outside min..max. */
  | { kind: "link-mtu"; side: string; min: number; max: number; got: string }
  | { kind: "link-not-object"; got: string }
  /** No fault named `name`; `known` are the ones there are. */
  | { kind: "link-unknown"; name: string; known: string[] }
  | { kind: "link-delay"; max: number; got: string }
  | { kind: "link-mtu-object"; got: string }
  | { kind: "link-mtu-device"; got: string }
  | { kind: "link-bool"; field: string; got: string }
  | { kind: "link-psn"; max: number; got: string }
  | { kind: "link-wire"; models: string[]; got: string }
  | { kind: "link-reorder" }
  /** Real rxe runs at its host's speed: only wire "rxe". */
  | { kind: "link-wire-native" }
  /** Faults are injected only on the lab network, and this is not it (`check`: what failed). */
  | { kind: "off-lab"; check: OffLab }
  /** The backend process died (`during` a run, or before answering a request); VerbsLab restarts it. */
  | { kind: "backend-died"; exit: BackendExit; during: "run" | "request" }
  /** This backend has no lab link. */
  | { kind: "link-unsupported" }
  // ---- JavaScript argument errors (TypeError, RangeError: verbs/errors.ts `argError`)
  /** `field` must be `expected`; `got` is what was given (absent where the site does not say). */
  | { kind: "arg-type"; field: string; expected: ArgExpected; got?: Got }
  /** `field` is not a `what` this backend made (`native`: the native backend's words). */
  | { kind: "foreign-object"; field: string; what: ForeignObject; native?: boolean }
  /** `field` `value` is negative. */
  | { kind: "arg-negative"; field: string; value: number }
  /** The simulator has no device `name`; it has `devices`. */
  | { kind: "no-sim-device"; name: string; devices: string[] }
  /** An SGE's [offset, offset + length) is outside the MR of `mrLength` bytes. */
  | { kind: "mr-range"; offset: number; length: number; mrLength: number }
  /** `offset` is outside the MR of `mrLength` bytes. */
  | { kind: "mr-offset"; offset: number; mrLength: number }
  /** An SGE (`sge`), mr.read or mr.write of `length` bytes at `offset` runs past the MR of `mrLength` bytes. */
  | { kind: "mr-past-end"; op: "sge" | "read" | "write"; offset: number; length: number; mrLength: number }
  /** mr.read/mr.write on `mr` after ibv_dereg_mr. */
  | { kind: "mr-deregistered"; mr: string }
  /** The session has no object type `type`. */
  | { kind: "no-object-type"; type: string }
  /** `handle` (as JSON) is not a number. */
  | { kind: "not-a-handle"; handle: string }
  /** No object has handle `handle` in this session. */
  | { kind: "no-handle"; handle: string }
  /** The `type` object has no method `method`. */
  | { kind: "no-method"; type: string; method: string }
  /** A value nested more than `max` deep (or a cycle); `path`: where, when encoding. */
  | { kind: "too-deep"; max: number; path?: string }
  /** The value at `path` (a `what`: "function", "symbol", a class name) cannot be passed to a verb. */
  | { kind: "cannot-encode"; path: string; what: string }
  /** `text` is not a hex byte string. */
  | { kind: "not-hex"; text: string }
  /** The runner's own refusals of a program. */
  | { kind: "runner"; runner: RunnerFailure };

/** The error details for a failure: its data and its English sentence, with the attribute at fault etc. */
export function because(why: VerbFailure, more: Omit<VerbsErrorDetails, "reason" | "why"> = {}): VerbsErrorDetails {
  return { ...more, reason: verbFailureText(why), why };
}

const hex = (n: number) => `0x${n.toString(16)}`;
const st = (s: number) => nameOf(ibv_qp_state, s).replace("IBV_QPS_", "");
const s = (n: number) => (n === 1 ? "" : "s");
const QUEUE = { send: "send", recv: "receive" } as const;
const STEP: Record<CmStep, string> = {
  listen: "rdma_listen needs a bound id, not one in state ",
  "resolve-addr": "rdma_resolve_addr needs a new or bound id, not one in state ",
  "resolve-route": "rdma_resolve_route needs ADDR_RESOLVED first (the id is in state ",
  connect: "rdma_connect needs ROUTE_RESOLVED first (the id is in state ",
  join: "an id joins while bound or address-resolved, not in state ",
};

const EXPECTED: Record<ArgExpected, string> = {
  integer: "an integer",
  "non-negative-integer": "a non-negative integer",
  number: "a number",
  object: "an object",
  bigint: "a bigint",
  string: "a string",
  boolean: "a boolean",
  array: "an array",
  uint8array: "a Uint8Array",
  "device-name": "a device name",
  ipv4: "an IPv4 address",
  "ipv6-text": "IPv6 text",
  "addr-port": "{ addr, port }",
  "ip-string": "an IP address string",
  memory: "an ArrayBuffer, a typed array/DataView or a length",
  "mr-data": "bytes, an array of numbers, or a string",
};

/** The failure in English: the sentence the error's `reason` carries. */
export function verbFailureText(w: VerbFailure): string {
  switch (w.kind) {
    case "no-device":
      return `no device named ${JSON.stringify(w.name)}`;
    case "one-port":
      return `rxe has only port 1, not ${w.port}`;
    case "port-num":
      return `${w.field} must be 1 (rxe has one port), got ${w.got}`;
    case "gid-index":
      return `GID index ${w.index} is outside the table (0..${w.count - 1})`;
    case "gid-empty":
      return `GID index ${w.index} is empty`;
    case "pkey-index":
      return "rxe's P_Key table has one entry (index 0)";
    case "pd-busy": {
      const busy: string[] = [];
      if (w.mrs) busy.push(`${w.mrs} MR(s)`);
      if (w.qps) busy.push(`${w.qps} QP(s)`);
      if (w.ahs) busy.push(`${w.ahs} AH(s)`);
      return `the PD still has ${busy.join(", ")}; destroy them first`;
    }
    case "access-unknown":
      return `unknown access bits ${hex(w.bits)}`;
    case "remote-needs-local-write":
      return "REMOTE_WRITE and REMOTE_ATOMIC need IBV_ACCESS_LOCAL_WRITE too";
    case "no-odp":
      return "rxe has no on-demand paging";
    case "length-not-positive":
      return `length must be positive, got ${w.length}`;
    case "length-zero":
      return "length 0 cannot be registered";
    case "cannot-pin":
      return `cannot ${w.allocate ? "allocate" : "pin"} ${w.length} bytes`;
    case "mr-pool-exhausted":
      return "the device's MR pool is exhausted";
    case "destroyed":
      return `this ${w.object} was already destroyed`;
    case "cqe-range":
      return `cqe must be 1..${w.max} (max_cqe), got ${w.cqe}`;
    case "comp-vector":
      return `comp_vector must be below num_comp_vectors (${w.count})`;
    case "channel-other-device":
      return "the completion channel belongs to another device";
    case "negative-num-entries":
      return "num_entries must not be negative";
    case "cq-busy":
      return `${w.qps} QP(s) still use this CQ; destroy them first`;
    case "channel-busy":
      return `${w.cqs} CQ(s) are still attached; destroy them first`;
    case "unacked-events":
      return (
        `libibverbs would wait for ever: ${w.n} completion event${s(w.n)} not acknowledged ` +
        `(ibv_get_cq_event returned ${w.n === 1 ? "it" : "them"}; call cq.ackEvents(${w.n}) first)`
      );
    case "qp-type":
      return w.known ? `rxe does not support QP type ${w.type}` : `${w.type} is not a QP type`;
    case "cq-required":
      return `${w.cq} is required (libibverbs 44 would crash on a NULL ${w.cq})`;
    case "cq-other-context":
      return `${w.cq} belongs to another device context`;
    case "cap-limit":
      return `cap.${w.field} ${w.value} is outside 0..${w.max} (rxe's limit)`;
    case "qp-in-mcast":
      return "the QP is attached to a multicast group: rdma_leave_multicast first";
    case "wr-list-empty":
      return "the work request list is empty (NULL)";
    case "sq-not-ready":
      return `the QP's send queue is not ready (QP state ${st(w.state)}; sending needs RTS). The WRs stay queued in the ring, as in rxe`;
    case "send-needs-rts":
      return `ibv_post_send needs the QP in RTS, it is in ${st(w.state)}`;
    case "recv-needs-init":
      return "ibv_post_recv needs the QP out of RESET (modify it to INIT first)";
    case "predict-no-grh":
      return `${st(w.from)} → ${st(w.to)}: ah_attr.is_global is 0, but RoCE needs a GRH: set ah_attr.is_global = 1 and ah_attr.grh.dgid to the peer's GID`;
    case "predict-sgid-index":
      return `${st(w.from)} → ${st(w.to)}: ah_attr.grh.sgid_index ${w.index} is not in the port's GID table (valid: ${w.valid.join(", ") || "none"}); pick an index from ibv_query_gid_table`;
    case "predict-path-mtu":
      return `${st(w.from)} → ${st(w.to)}: path_mtu ${w.mtu} is above the port's max_mtu (${w.maxMtu})`;
    case "recv-in-reset":
      return "receives cannot be posted in RESET (move the QP to INIT first)";
    case "too-many-sge":
      return `wr[${w.i}] has ${w.n} SGEs but the QP allows max_${w.queue}_sge ${w.max}`;
    case "atomic-buffer":
      return `wr[${w.i}]: an atomic needs an 8-byte local buffer`;
    case "atomic-unaligned":
      return `wr[${w.i}]: atomic remote_addr ${hex(w.addr)} is not 8-byte aligned`;
    case "inline-too-long":
      return `wr[${w.i}]: ${w.bytes} inline bytes exceed max_inline_data ${w.max}`;
    case "inline-unregistered":
      return `wr[${w.i}].sg_list[${w.k}]: inline address ${hex(w.addr)} is not in any registered buffer`;
    case "no-mw":
      return "memory windows are not simulated";
    case "ud-ah":
      return w.gone
        ? `wr[${w.i}]: the AH was destroyed or belongs to another device`
        : `wr[${w.i}]: a UD send needs wr.ud.ah (an AH of this backend)`;
    case "queue-full":
      return `the ${QUEUE[w.queue]} queue is full (${w.capacity} WQEs${w.queue === "send" ? "; completions free slots" : ""})`;
    case "mask": {
      const arrow = `${st(w.from)} → ${st(w.to)}`;
      const parts = [];
      // Every one missing: listing them twice says nothing more.
      if (w.missing.length === w.needs.length)
        parts.push(`${arrow} needs ${w.needs.join(", ")}: the mask has none of them`);
      else if (w.missing.length) parts.push(`${arrow} needs ${w.needs.join(", ")}; missing: ${w.missing.join(", ")}`);
      if (w.notAllowed.length)
        parts.push(`${w.notAllowed.join(", ")} ${w.notAllowed.length > 1 ? "are" : "is"} not allowed on ${arrow}`);
      return parts.join("; ");
    }
    case "illegal":
      return (
        `${st(w.from)} → ${st(w.to)} is not a legal transition` +
        (w.withoutState ? " (without IBV_QP_STATE the target is the current state)" : "")
      );
    case "cur-state":
      return `cur_qp_state says ${st(w.claimed)} but the QP is in ${st(w.actual)}`;
    case "rate-limit":
      return "libibverbs refuses IBV_QP_RATE_LIMIT and higher mask bits";
    case "not-a-state":
      return `${w.field} ${w.value} is not a QP state`;
    case "no-modify-table":
      return `QP type ${w.qpType} has no modify table here`;
    case "qkey-privileged":
      return "a Q_Key with bit 31 set is privileged (needs CAP_NET_RAW)";
    case "no-alt-path":
      return "RoCE has no alternate paths (ib_core refuses IBV_QP_ALT_PATH)";
    case "sq-draining":
      return "the send queue is still draining; wait for IBV_EVENT_SQ_DRAINED";
    case "path-mtu":
      return `path_mtu ${w.mtu} is above the port's max_mtu (5 = IBV_MTU_4096)`;
    case "max-rd-atomic":
      return `max_rd_atomic ${w.value} is above max_qp_init_rd_atom (${w.max})`;
    case "qp-timeout":
      return `timeout ${w.value} is above 31`;
    case "needs-grh":
      return `RoCE needs a GRH: set ${w.prefix}.is_global = 1 (and grh.dgid, grh.sgid_index)`;
    case "no-gid":
      return `${w.device} has no GID at index ${w.index}`;
    case "not-a-gid":
      return `${JSON.stringify(w.text)} is not a GID (IPv6 text)`;
    case "dgid-unset":
      return "dgid is :: (not set)";
    case "link-down":
      return `${w.device}'s link is down`;
    case "no-route":
      return `no route to ${w.gid}: ${w.why.kind === "no-device" ? "no device has this GID" : `${w.why.device}'s link is down`}`;
    case "gid-family":
      return `the sgid is IPv4 but the dgid ${w.dgid} is IPv6 (address families differ)`;
    case "wait-too-long":
      return `${w.arg} ${w.ms} is longer than the longest wait, ${w.max} ms (2^31 - 1)`;
    case "clock-limit":
      return `waiting ${w.ms} ms would take the simulator's clock past ${w.max} ms (2^40), where its timers lose precision`;
    case "port-space":
      return `port space ${hex(w.ps)} is not ${w.numbers ? "RDMA_PS_TCP (0x106) or RDMA_PS_UDP (0x111)" : "RDMA_PS_TCP or RDMA_PS_UDP"}`;
    case "service":
      return `service ${JSON.stringify(w.service)} is not a ${w.decimal ? "decimal port (0-65535)" : "port number"}`;
    case "node-not-numeric":
      return `node ${JSON.stringify(w.node)} is not a numeric IPv4 or IPv6 address`;
    case "node-required":
      return "node is required unless hints.ai_flags has RAI_PASSIVE";
    case "ephemeral-ports":
      return "every ephemeral port is in use";
    case "cm-channel-busy":
      return `${w.ids} rdma_cm_id(s) still use this channel; destroy them first (librdmacm would close the channel under them)`;
    case "event-acked":
      return w.event
        ? `this ${w.event} event was already acknowledged (librdmacm would free it twice)`
        : "this event was already acknowledged";
    case "unacked-cm-events":
      return (
        `librdmacm would wait for ever: ${w.n} event${s(w.n)} on this id not acknowledged ` +
        `(call event.ack() on ${w.n === 1 ? "it" : "each"} first)`
      );
    case "conn-param-u8":
      return `conn_param.${w.field} ${w.value} does not fit its uint8_t`;
    case "private-data-u8":
      return w.param
        ? `conn_param.private_data is ${w.bytes} bytes; private_data_len is a uint8_t (at most 255)`
        : `private_data_len is a uint8_t (at most 255), not ${w.bytes}`;
    case "private-data-long":
      return `${w.bytes} bytes of private data; ${CARRIER[w.what]} carries at most ${w.max}`;
    case "id-bound":
      return `the id is already bound (${w.state})`;
    case "bind-stale-netdev":
      return `an earlier rdma_bind_addr that failed left the id on ${w.netdev}'s netdev, which does not have ${w.ip}: use a new id`;
    case "no-device-ip":
      return `no RDMA device has the address ${w.ip} (rxe0 has 10.77.0.1, rxe1 10.77.0.2)`;
    case "port-privileged":
      return `port ${w.port} is below 1024 and the program is not root`;
    case "port-any-conflict":
      return `port ${w.port} is already bound by another id, and one of the two binds the any address`;
    case "addr-in-use":
      return `${w.ip}:${w.port} is already bound by another id`;
    case "id-state":
      return STEP[w.step] + w.state + (w.step === "resolve-route" || w.step === "connect" ? ")" : "");
    case "cm-no-route":
      return w.mcast
        ? `no route to the multicast group ${w.ip}: give src_addr (a device's address) to send through its netdev`
        : `no route to ${w.ip}: the lab network is 10.77.0.0/24`;
    case "id-has-qp":
      return "this id already has a QP (rdma_destroy_qp it first)";
    case "id-no-qp":
      return "this id has no QP";
    case "id-unbound":
      return w.join
        ? "the id is not bound to a device yet: rdma_bind_addr to a device's address, or rdma_resolve_addr, first"
        : "the id is not bound to a device yet: create the QP after ADDR_RESOLVED (client) or on the CONNECT_REQUEST's id (server)";
    case "id-no-device":
      return "the id is not bound to a device";
    case "pd-other-context":
      return "the PD belongs to another ibv_context: allocate it on id.verbs (librdmacm's context for the device)";
    case "cm-modify":
      return `ibv_modify_qp failed: ${w.cause ? verbFailureText(w.cause) : w.text}`;
    case "connection-state":
      return (
        `the connection is ${w.state}` +
        (w.need === "rtr-path" ? ": no path for RTR yet" : w.need === "rts-psn" ? ": RTS needs its peer's PSN" : "")
      );
    case "init-qp-attr-state":
      return `rdma_init_qp_attr gives INIT, RTR or RTS, not state ${w.state}`;
    case "conn-param-required":
      return "without a QP on the id, conn_param is required (it names qp_num)";
    case "rd-atom-limit":
      return w.field === "responder_resources"
        ? `responder_resources ${w.value} is over the device's max_qp_rd_atom ${w.max}`
        : `initiator_depth ${w.value} is over the device's max_qp_init_rd_atom ${w.max}`;
    case "accept-needs-request":
      return "rdma_accept takes the id of a CONNECT_REQUEST event (event.id), not a listening or client id";
    case "no-request":
      return "the id has no connection request to reject";
    case "request-answered":
      return "this connection request was already answered";
    case "not-rejectable":
      return `the connection is ${w.state}: only one being set up can be rejected`;
    case "not-connected":
      return "the id is not connected (no rdma_connect or rdma_accept)";
    case "join-needs-udp":
      return "only RDMA_PS_UDP ids can join a multicast group";
    case "addr-any":
      return "addr is the any address";
    case "not-joined":
      return `this id has not joined ${w.ip} (port ${w.port}): leave the address and port it joined`;
    case "port-16":
      return `${w.field}.port ${w.port} is not a 16-bit port`;
    case "not-ipv4":
      return w.ipv6
        ? `${w.field}.addr ${JSON.stringify(w.addr)} is IPv6; the simulator's rdma_cm models IPv4 addresses (the lab VM's 10.77.0.x)`
        : `${w.field}.addr ${JSON.stringify(w.addr)} is not a numeric IPv4 address (like "10.77.0.1")`;
    case "link-fraction":
      return `${w.field} must be a fraction from 0 to 1 (0.01 is 1%), got ${w.got}`;
    case "link-mtu":
      return `mtu.${w.side} must be a whole number of bytes from ${w.min} to ${w.max}, got ${w.got}`;
    case "link-not-object":
      return `setLink takes an object such as { loss: 0.01 }, got ${w.got}`;
    case "link-unknown":
      return `setLink has no fault named ${JSON.stringify(w.name)} (it knows ${w.known.join(", ")})`;
    case "link-delay":
      return `delay must be a number of ms from 0 to ${w.max}, got ${w.got}`;
    case "link-mtu-object":
      return `mtu must be an object such as { rxe1: 1200 }, got ${w.got}`;
    case "link-mtu-device":
      return `mtu is set per device: rxe0 or rxe1, not ${w.got}`;
    case "link-bool":
      return `${w.field} must be true or false, got ${w.got}`;
    case "link-psn":
      return `dropPsn must be a PSN from 0 to ${w.max} (0xffffff) or null, got ${w.got}`;
    case "link-wire":
      return `wire must be one of ${w.models.join(", ")} (the simulator's models), got ${w.got}`;
    case "link-reorder":
      return "reorder needs a delay: the packets not reordered wait `delay` ms while the others overtake them";
    case "link-wire-native":
      return "the wire models are the simulator's: real rxe's link runs at its host's speed (only wire \"rxe\")";
    case "off-lab":
      return offLabText(w.check);
    case "backend-died":
      return w.during === "run"
        ? `the backend process died (${backendExitText(w.exit)}) during this run; VerbsLab restarted it, and the objects this run created are gone`
        : `the backend process died (${backendExitText(w.exit)}) before answering; it is being restarted`;
    case "link-unsupported":
      return "this backend cannot inject faults on its link";
    case "arg-type":
      return `${w.field} must be ${EXPECTED[w.expected]}${w.got ? `, got ${gotText(w.got)}` : ""}`;
    case "foreign-object":
      return `${w.field} is not ${w.what === "object" ? "an object" : `a ${w.what}`} of this ${w.native ? "(native) " : ""}backend`;
    case "arg-negative":
      return `${w.field} must not be negative, got ${w.value}`;
    case "no-sim-device":
      return `no simulated device ${JSON.stringify(w.name)} (there are ${w.devices.join(" and ")})`;
    case "mr-range":
      return `[${w.offset}, ${w.offset + w.length}) is outside this MR (length ${w.mrLength})`;
    case "mr-offset":
      return `offset ${w.offset} is outside the MR (length ${w.mrLength})`;
    case "mr-past-end":
      return w.op === "sge"
        ? `length ${w.length} at offset ${w.offset} runs past this MR (length ${w.mrLength})`
        : `${w.op === "read" ? "reading" : "writing"} ${w.length} bytes at ${w.offset} runs past the MR (length ${w.mrLength})`;
    case "mr-deregistered":
      return `${w.mr} was deregistered: its memory is no longer registered`;
    case "no-object-type":
      return `${JSON.stringify(w.type)} is not an object type`;
    case "not-a-handle":
      return `${w.handle} is not an object handle (handles are numbers)`;
    case "no-handle":
      return `no object with handle ${w.handle} in this session`;
    case "no-method":
      return `${w.type} has no method ${JSON.stringify(w.method)}`;
    case "too-deep":
      return w.path
        ? `${w.path}: nested too deeply (or a cycle) to encode (more than ${w.max} levels)`
        : `a value nested more than ${w.max} deep (or a cycle) cannot be passed`;
    case "cannot-encode":
      return `${w.path}: a ${w.what} cannot be encoded`;
    case "not-hex":
      return `not a hex byte string: ${JSON.stringify(w.text)}`;
    case "runner":
      return w.runner.kind === "no-default-export"
        ? "the program must `export default async function main(verbs) { … }`"
        : `${w.runner.method}(…) was not awaited: main returned while it was still running (write \`await …${w.runner.method}(…)\`)`;
    default: {
      // A kind this build does not know (a transcript from a newer one): its data, as JSON.
      const unknown: never = w;
      return JSON.stringify(unknown);
    }
  }
}

/** How the backend process ended, in English ("killed by SIGKILL", "it stopped answering (…), so VerbsLab ended it; …"). */
export function backendExitText(e: BackendExit): string {
  const exit = e.signal ? `killed by ${e.signal}` : `exit code ${e.code ?? "unknown"}`;
  return e.hung ? `it stopped answering (${hungText(e.hung)}), so VerbsLab ended it; ${exit}` : exit;
}

/** What the backend did not answer in time, in English. */
export function hungText(h: NonNullable<BackendExit["hung"]>): string {
  return h.method
    ? `it did not answer ${h.method} within ${h.ms} ms`
    : `no answer to a liveness check within ${h.ms} ms`;
}

function offLabText(c: OffLab): string {
  const notLab = ": this is not the lab network";
  switch (c.kind) {
    case "not-vm":
      return "faults are injected only on the lab network VerbsLab creates (scripts/rxe-vm, where VERBSLAB_IN_RXE_VM=1), never on this machine's own network; use the simulator (--backend sim) or the lab VM";
    case "not-root":
      return "the lab VM runs jobs as root, and tc/ip/nft need root: this process is not root";
    case "no-netdev":
      return `${c.netdev} does not exist${notLab}`;
    case "not-bound":
      return `${c.device} is not bound to ${c.netdev}${notLab}`;
    case "ip-failed":
      return `cannot read ${c.netdev} with ip: ${c.error}`;
    case "not-veth":
      return `${c.netdev} is not a veth${notLab}`;
    case "wrong-peer":
      return `${c.netdev}'s peer is ${c.peer}, not ${c.expected}`;
    case "no-address":
      return `${c.netdev} does not hold ${c.address}`;
  }
}

/** A flag word's names joined, or "none" (for wordings that name the access flags given). */
export const accessFlagNames = (a: number) => flagNames(ibv_access_flags, a).join(" | ") || "none";
