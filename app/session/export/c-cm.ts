/**
 * The rdma_cm part of the C export: librdmacm calls for the transcript's CM verbs (event
 * channels, ids, address and route resolution, listen/connect/accept/reject/disconnect with
 * struct rdma_conn_param, events awaited and checked against the transcript), and the objects
 * librdmacm hands out without a creating call of their own (id->verbs, id->qp, the child id of
 * a CONNECT_REQUEST), which the C program reads off the object that holds them.
 *
 * Server and client in one program work single-threaded: the transcript's order of calls is
 * one that already worked, each side's events are awaited in that order, and the kernel's CM
 * answers REQ, REP and DREQ without the program. The one reply librdmacm sends from user space
 * (the RTU, in the client's rdma_get_cm_event of CONNECT_RESPONSE) comes before the server
 * waits for ESTABLISHED in any order that worked.
 */
import { isUnackedCmEventsRefusal, rdma_cm_event_type, rdma_port_space } from "../../../verbs/cm.js";
import { ibv_qp_state } from "../../../verbs/constants.js";
import { objectName, symbolize, type ObjectInfo, type Sym } from "../symbols.js";
import type { Transcript, VerbEvent } from "../transcript.js";
import { isRef, type HandleType, type WireBytes, type WireValue } from "../wire.js";
import {
  bytesList,
  cName,
  comment,
  cstr,
  enumExpr,
  hexOf,
  intExpr,
  numExpr,
  stopUnlessCreated,
  type Obj,
  type Writer,
} from "./c-source.js";

/** The handle types of librdmacm's objects. */
const CM_TYPES: ReadonlySet<HandleType> = new Set<HandleType>(["cm", "cmChannel", "cmId", "cmEvent"]);

/** Whether the transcript calls librdmacm (its program then includes <rdma/rdma_cma.h> and links -lrdmacm). */
export function usesCm(t: Pick<Transcript, "events">): boolean {
  return t.events.some((e) => e.kind === "verb" && CM_TYPES.has(e.target.type));
}

/** The helpers of a program that calls librdmacm (after the verbs prelude). */
export const CM_PRELUDE = `
/* Makes a struct sockaddr from IPv4 or IPv6 text and a port (host order); NULL when ip is neither. */
static UNUSED struct sockaddr *make_addr(struct sockaddr_storage *ss, const char *ip, unsigned port)
{
    struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    memset(ss, 0, sizeof *ss);
    if (inet_pton(AF_INET, ip, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons(port);
    } else if (inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
    } else
        return NULL;
    return (struct sockaddr *)ss;
}

static UNUSED void print_addr(const char *what, const struct sockaddr *sa)
{
    char text[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (sa && sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, text, sizeof text);
        port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
    } else if (sa && sa->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, text, sizeof text);
        port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
    }
    printf("  %s %s port %u\\n", what, text, port);
}

/* librdmacm's return: 0, or the errno it set (-1 and errno, as librdmacm reports failures). */
static UNUSED int cm_rc(int ret)
{
    return ret == 0 ? 0 : errno != 0 ? errno : EINVAL;
}

/*
 * Waits up to timeout_ms (-1: for ever) for the channel's next event (VerbsLab's
 * channel.getEvent): 0 and *ev, ETIMEDOUT, or the errno.
 */
static UNUSED int get_cm_event(struct rdma_event_channel *ch, int timeout_ms, struct rdma_cm_event **ev)
{
    int r;
    *ev = NULL;
    r = wait_fd(ch->fd, timeout_ms);
    if (r < 0)
        return errno;
    if (r == 0)
        return ETIMEDOUT;
    errno = 0;
    return cm_rc(rdma_get_cm_event(ch, ev));
}

/* Prints an event: its name and status, then event->param (conn, or ud for RDMA_PS_UDP). */
static UNUSED void print_cm_event(const char *step, const struct rdma_cm_event *ev)
{
    const void *data;
    unsigned len;
    printf("%s: event %s status %d\\n", step, rdma_event_str(ev->event), ev->status);
    if (ev->id->ps == RDMA_PS_UDP || ev->id->ps == RDMA_PS_IPOIB || ev->event == RDMA_CM_EVENT_MULTICAST_JOIN ||
        ev->event == RDMA_CM_EVENT_MULTICAST_ERROR) {
        const struct rdma_ud_param *u = &ev->param.ud;
        int mc = ev->event == RDMA_CM_EVENT_MULTICAST_JOIN || ev->event == RDMA_CM_EVENT_MULTICAST_ERROR;
        data = mc ? NULL : u->private_data;
        len = mc ? 0 : u->private_data_len;
        printf("  ud: private_data_len %u, qp_num 0x%x, qkey 0x%x\\n", len, u->qp_num, u->qkey);
    } else {
        const struct rdma_conn_param *c = &ev->param.conn;
        data = c->private_data;
        len = c->private_data_len;
        printf("  conn: private_data_len %u, responder_resources %u, initiator_depth %u, flow_control %u, "
               "retry_count %u, rnr_retry_count %u, srq %u, qp_num 0x%x\\n",
               len, c->responder_resources, c->initiator_depth, c->flow_control, c->retry_count, c->rnr_retry_count,
               c->srq, c->qp_num);
    }
    if (data && len)
        print_bytes("  private_data", data, len);
}
`;

/** Where the C program reads an object no call created: `from`'s field (`cmid5->verbs`). */
interface Holder {
  from: number;
  field: "verbs" | "qp" | "id" | "listen_id" | "pd";
}

/** Which fields of which objects hold other objects, as librdmacm's structs do. */
const HOLDS: Partial<Record<HandleType, readonly Holder["field"][]>> = {
  cmId: ["verbs", "qp"],
  cmEvent: ["id", "listen_id"],
  // rdma_create_qp without a PD: librdmacm's own (qp->pd).
  qp: ["pd"],
};

type AnyRef = { $handle: number; type: HandleType; props?: { [key: string]: WireValue } };

const asRef = (v: unknown): AnyRef | undefined =>
  isRef(v as WireValue) && typeof (v as AnyRef).$handle === "number" ? (v as AnyRef) : undefined;

/**
 * Every object of the transcript and, for those no call created, where each appears in
 * another object's fields: the C program's variables, and how to fill the ones librdmacm made.
 */
export class CmObjects {
  /** Every object's type, by handle (created by a call, or seen inside another's fields). */
  readonly types = new Map<number, HandleType>();
  private readonly created = new Set<number>();
  private readonly holders = new Map<number, Holder[]>();
  /** The seq of the event where each held object was first seen. */
  private readonly firstSeen = new Map<number, number>();
  private readonly assigned = new Set<number>();

  constructor(t: Pick<Transcript, "events">) {
    for (const e of t.events) {
      if (e.kind !== "verb") continue;
      for (const r of e.created ?? []) {
        this.created.add(r.$handle);
        this.types.set(r.$handle, r.type);
      }
    }
    for (const e of t.events) if (e.kind === "verb") for (const r of e.created ?? []) this.scan(r, e.seq, 0);
  }

  private scan(r: AnyRef, seq: number, depth: number): void {
    if (depth > 8) return;
    if (!this.types.has(r.$handle)) this.types.set(r.$handle, r.type);
    for (const field of HOLDS[r.type] ?? []) {
      const held = asRef(r.props?.[field]);
      if (!held) continue;
      if (!this.types.has(held.$handle)) this.types.set(held.$handle, held.type);
      if (!this.created.has(held.$handle)) {
        const list = this.holders.get(held.$handle) ?? [];
        if (!list.some((h) => h.from === r.$handle && h.field === field)) list.push({ from: r.$handle, field });
        this.holders.set(held.$handle, list);
        if (!this.firstSeen.has(held.$handle)) this.firstSeen.set(held.$handle, seq);
      }
      this.scan(held, seq, depth + 1);
    }
  }

  /** The C program has set the variable of an object (a call created it). */
  assign(handle: number): void {
    this.assigned.add(handle);
  }

  isAssigned(handle: number): boolean {
    return this.assigned.has(handle);
  }

  /**
   * Sets the variable of a held object from the first of its holders the program already has
   * (an event only right after it was got: librdmacm frees it when it is acknowledged), and
   * stops the program where librdmacm has none. False when no holder is available yet.
   */
  ensure(w: Writer, handle: number, step: string, depth = 0): boolean {
    if (this.assigned.has(handle)) return true;
    if (depth > 8) return false;
    for (const h of this.holders.get(handle) ?? []) {
      const fromType = this.types.get(h.from);
      if (fromType === "cmEvent" && !this.assigned.has(h.from)) continue;
      if (!this.ensure(w, h.from, step, depth + 1)) continue;
      const name = objectName({ $handle: handle, type: this.types.get(handle)! });
      const from = objectName({ $handle: h.from, type: fromType! });
      cName({ $handle: handle, type: this.types.get(handle) });
      cName({ $handle: h.from, type: fromType });
      w.line(`${name} = ${from}->${h.field};`);
      w.line(`if (!${name}) {`);
      w.line(
        `    printf("%s: ${from}->${h.field} is NULL here, where the transcript had ${name} (stopping)\\n", ${step});`,
      );
      w.line(`    return 1;`);
      w.line(`}`);
      this.assigned.add(handle);
      return true;
    }
    return false;
  }

  /** Before a call: the variables of the objects it names (target and arguments). */
  beforeCall(w: Writer, e: VerbEvent): void {
    const step = cstr(`${e.seq}. ${e.verb}`);
    const visit = (v: unknown, depth: number): void => {
      if (depth > 8 || !v || typeof v !== "object") return;
      const r = asRef(v);
      if (r) {
        this.ensure(w, r.$handle, step);
        return;
      }
      for (const x of Array.isArray(v) ? v : Object.values(v)) visit(x, depth + 1);
    };
    visit(e.target, 0);
    visit(e.args, 0);
  }

  /** After a call: the objects first seen in what it returned (the child id of a CONNECT_REQUEST). */
  afterCall(w: Writer, e: VerbEvent): void {
    const step = cstr(`${e.seq}. ${e.verb}`);
    for (const r of e.created ?? []) this.assign(r.$handle);
    for (const [handle, seq] of this.firstSeen) if (seq === e.seq) this.ensure(w, handle, step);
  }
}

/**
 * How many bytes a recorded byte value holds: its `$length` where a long value kept only its
 * first bytes, else its hex; 0 for anything else (a hand-edited file).
 */
function dataLength(v: unknown): number {
  if (!v || typeof v !== "object" || !("$bytes" in v)) return 0;
  const n = (v as WireBytes).$length;
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 0 ? n : hexOf(v).length / 2;
}

/** A ConnParam argument as struct rdma_conn_param `v`; undefined when it cannot be passed (private data over 255 bytes). */
function emitConnParam(w: Writer, v: string, p: Obj, objects: Map<number, ObjectInfo>): boolean {
  const data = p.private_data as WireValue | undefined;
  const len = dataLength(data);
  if (len > 255) return false;
  w.line(`struct rdma_conn_param ${v};`);
  w.line(`memset(&${v}, 0, sizeof ${v});`);
  if (len > 0) {
    const hexs = hexOf(data).slice(0, 2 * len);
    // A long value keeps only its first bytes in a transcript: the rest were sent as zeros.
    w.line(`static const unsigned char ${v}_data[${len}] = { ${bytesList(hexs) || "0"} };`);
    w.line(`${v}.private_data = ${v}_data;`);
    w.line(`${v}.private_data_len = ${len};`);
  }
  for (const k of ["responder_resources", "initiator_depth", "flow_control", "retry_count", "rnr_retry_count", "srq"])
    if (p[k] !== undefined) w.line(`${v}.${k} = ${numExpr(p[k], objects)};`);
  if (p.qp_num !== undefined) w.line(`${v}.qp_num = ${numExpr(p.qp_num, objects)};`);
  return true;
}

/** A SockAddr argument as a struct sockaddr pointer `v` (NULL when the text is no IP address). */
function emitAddr(w: Writer, v: string, a: Obj): void {
  w.line(`struct sockaddr_storage ${v}_ss;`);
  w.line(
    `struct sockaddr *${v} = make_addr(&${v}_ss, ${cstr(typeof a.addr === "string" ? a.addr : "")}, ${intExpr(a.port)});`,
  );
}

/** The C name of the RDMA_CM_EVENT_* of a recorded event, or its number. */
const eventExpr = (ev: unknown) => enumExpr(rdma_cm_event_type, typeof ev === "number" ? ev : -1);

/** The name a recorded event's type prints as (rdma_event_str). */
const eventText = (ev: unknown) => Object.entries(rdma_cm_event_type).find(([, x]) => x === ev)?.[0] ?? "UNKNOWN EVENT";

/**
 * One CM verb as C. `emitQpInit` writes a struct ibv_qp_init_attr (the verbs part's, for
 * rdma_create_qp). Returns false for a method it does not know.
 */
export function emitCmVerb(
  w: Writer,
  e: VerbEvent,
  objects: Map<number, ObjectInfo>,
  cm: CmObjects,
  emitQpInit: (v: string, init: Obj) => void,
): boolean {
  const self = e.target.type === "cm" ? "" : cName(e.target);
  const args = e.args.map((a) => symbolize(a, objects, e.seq)) as (WireValue | Sym)[];
  const step = cstr(`${e.seq}. ${e.verb}`);
  const created = e.created?.[0] ? cName(e.created[0]) : undefined;
  const n = (v: WireValue | Sym | undefined) => numExpr(v, objects);
  const refName = (v: WireValue | Sym | undefined) => (isRef(v as WireValue) ? cName(v as AnyRef) : "NULL");
  // librdmacm 44 dereferences id->verbs unchecked in these calls (a segfault on an id with no
  // device yet); the kernel would answer EINVAL, as VerbsLab's native backend does.
  const needDevice = (call: string) => `rc = !${self}->verbs ? EINVAL : cm_rc(${call});`;
  const call = (expr: string) => {
    w.line(`errno = 0;`);
    w.line(expr);
    w.line(`report(${step}, rc);`);
  };

  switch (`${e.target.type}.${e.method}`) {
    case "cm.createEventChannel":
      // As VerbsLab's native backend does: a reference to librdmacm's device list keeps its
      // per-device state (the PD rdma_create_qp uses without one) for the program's life.
      w.line(`if (!cm_devices) cm_devices = rdma_get_devices(NULL);`);
      if (!created) {
        w.line(`if (!rdma_create_event_channel()) printf("%s: failed: %s\\n", ${step}, strerror(errno));`);
        return true;
      }
      w.line(`${created} = rdma_create_event_channel();`);
      stopUnlessCreated(w, step, created);
      w.line(`printf("%s: ok\\n", ${step});`);
      return true;
    case "cm.getAddrInfo": {
      const h = w.tmp("hints");
      const res = w.tmp("ai");
      const hints = (args[2] ?? {}) as Obj;
      const text = (v: unknown) => (typeof v === "string" ? cstr(v) : "NULL");
      w.line(`struct rdma_addrinfo ${h};`);
      w.line(`struct rdma_addrinfo *${res} = NULL;`);
      w.line(`memset(&${h}, 0, sizeof ${h});`);
      for (const k of ["ai_flags", "ai_family", "ai_qp_type", "ai_port_space"])
        if (hints[k] !== undefined) w.line(`${h}.${k} = ${n(hints[k])};`);
      w.line(`errno = 0;`);
      w.line(`rc = rdma_getaddrinfo(${text(args[0])}, ${text(args[1])}, &${h}, &${res});`);
      // librdmacm 44 returns getaddrinfo's EAI_* code, or -1 with errno.
      w.line(`rc = rc == 0 ? 0 : rc == -1 && errno != 0 ? errno : EINVAL;`);
      w.line(`report(${step}, rc);`);
      w.line(`for (struct rdma_addrinfo *a = ${res}; !rc && a; a = a->ai_next) {`);
      w.line(
        `    printf("  ai_flags 0x%x, ai_family %d, ai_qp_type %d, ai_port_space 0x%x\\n", (unsigned)a->ai_flags, a->ai_family, a->ai_qp_type, (unsigned)a->ai_port_space);`,
      );
      w.line(`    if (a->ai_src_len) print_addr("ai_src_addr", a->ai_src_addr);`);
      w.line(`    if (a->ai_dst_len) print_addr("ai_dst_addr", a->ai_dst_addr);`);
      w.line(`}`);
      w.line(`if (${res}) rdma_freeaddrinfo(${res});`);
      return true;
    }
    case "cmChannel.createId": {
      const ps = typeof args[0] === "number" ? args[0] : 0;
      const psExpr = /^RDMA_/.test(enumExpr(rdma_port_space, ps))
        ? enumExpr(rdma_port_space, ps)
        : `(enum rdma_port_space)${intExpr(ps)}`;
      if (!created) {
        const v = w.tmp("id");
        w.line(`struct rdma_cm_id *${v} = NULL;`);
        call(`rc = cm_rc(rdma_create_id(${self}, &${v}, NULL, ${psExpr}));`);
        return true;
      }
      w.line(`errno = 0;`);
      w.line(`if (rdma_create_id(${self}, &${created}, NULL, ${psExpr}) != 0) ${created} = NULL;`);
      stopUnlessCreated(w, step, created);
      w.line(`printf("%s: ok\\n", ${step});`);
      return true;
    }
    case "cmChannel.getEvent":
      emitGetEvent(w, e, cm, self, step, created);
      return true;
    case "cmChannel.destroy":
      if (e.error) {
        // VerbsLab refused it (an id still uses the channel): closing its fd under them would
        // lose their events.
        w.line(`/* Not called: VerbsLab refused it (${comment(e.error.code)}: ${comment(e.error.reason ?? "")}). */`);
        w.line(`report(${step}, ${errnoExpr(e.error.code)});`);
        return true;
      }
      w.line(`rdma_destroy_event_channel(${self});`);
      w.line(`report(${step}, 0);`);
      return true;
    case "cmEvent.ack":
      // A second rdma_ack_cm_event would free the event twice: VerbsLab answers EINVAL.
      w.line(`if (!${self}) rc = EINVAL;`);
      w.line(`else {`);
      w.line(`    rc = cm_rc(rdma_ack_cm_event(${self}));`);
      w.line(`    ${self} = NULL;`);
      w.line(`}`);
      w.line(`report(${step}, rc);`);
      return true;
    case "cmId.bindAddr": {
      const a = w.tmp("addr");
      emitAddr(w, a, (args[0] ?? {}) as Obj);
      call(`rc = !${a} ? EINVAL : cm_rc(rdma_bind_addr(${self}, ${a}));`);
      return true;
    }
    case "cmId.listen":
      call(`rc = cm_rc(rdma_listen(${self}, ${n(args[0])}));`);
      return true;
    case "cmId.resolveAddr": {
      const src = args[0] && typeof args[0] === "object" ? w.tmp("src") : undefined;
      const dst = w.tmp("dst");
      if (src) emitAddr(w, src, args[0] as Obj);
      emitAddr(w, dst, (args[1] ?? {}) as Obj);
      call(
        `rc = !${dst}${src ? ` || !${src}` : ""} ? EINVAL : cm_rc(rdma_resolve_addr(${self}, ${src ?? "NULL"}, ${dst}, ${n(args[2])}));`,
      );
      return true;
    }
    case "cmId.resolveRoute":
      call(needDevice(`rdma_resolve_route(${self}, ${n(args[0])})`));
      return true;
    case "cmId.createQp": {
      const v = w.tmp("init_attr");
      emitQpInit(v, (args[1] ?? {}) as Obj);
      call(needDevice(`rdma_create_qp(${self}, ${refName(args[0])}, &${v})`));
      if (created) {
        // rdma_create_qp returns no QP: it is id->qp.
        w.line(`${created} = rc ? NULL : ${self}->qp;`);
        stopUnlessCreated(w, step, created);
        w.line(`printf("  qp_num 0x%x\\n", ${created}->qp_num);`);
      }
      return true;
    }
    case "cmId.destroyQp":
      // rdma_destroy_qp on an id without a QP would pass NULL to ibv_destroy_qp.
      w.line(`if (!${self}->qp) rc = EINVAL;`);
      w.line(`else {`);
      w.line(`    rdma_destroy_qp(${self});`);
      w.line(`    rc = 0;`);
      w.line(`}`);
      w.line(`report(${step}, rc);`);
      return true;
    case "cmId.connect":
    case "cmId.accept": {
      const connect = e.method === "connect";
      const p = args[0] && typeof args[0] === "object" ? w.tmp("conn_param") : undefined;
      if (p && !emitConnParam(w, p, args[0] as Obj, objects)) {
        w.line(`/* Not called: more than 255 bytes of private data do not fit private_data_len (a uint8_t). */`);
        w.line(`report(${step}, EINVAL);`);
        return true;
      }
      const fn = connect ? "rdma_connect" : "rdma_accept";
      // librdmacm reads conn_param->qp_num unchecked when accepting on an id with no QP.
      const guard = !connect && !p ? `!${self}->qp ? EINVAL : ` : "";
      call(`rc = !${self}->verbs ? EINVAL : ${guard}cm_rc(${fn}(${self}, ${p ? `&${p}` : "NULL"}));`);
      return true;
    }
    case "cmId.reject": {
      const data = args[0] as WireValue | undefined;
      const len = dataLength(data);
      if (len > 255) {
        w.line(`/* Not called: more than 255 bytes of private data do not fit rdma_reject's uint8_t length. */`);
        w.line(`report(${step}, EINVAL);`);
        return true;
      }
      if (len === 0) {
        call(`rc = cm_rc(rdma_reject(${self}, NULL, 0));`);
        return true;
      }
      const d = w.tmp("rej_data");
      w.line(`static const unsigned char ${d}[${len}] = { ${bytesList(hexOf(data).slice(0, 2 * len)) || "0"} };`);
      call(`rc = cm_rc(rdma_reject(${self}, ${d}, sizeof ${d}));`);
      return true;
    }
    case "cmId.disconnect":
      call(`rc = cm_rc(rdma_disconnect(${self}));`);
      return true;
    case "cmId.initQpAttr": {
      const v = w.tmp("qattr");
      const m = w.tmp("qmask");
      const state = typeof args[0] === "number" ? enumExpr(ibv_qp_state, args[0]) : "0";
      w.line(`struct ibv_qp_attr ${v};`);
      w.line(`int ${m} = 0;`);
      w.line(`memset(&${v}, 0, sizeof ${v});`);
      w.line(`${v}.qp_state = ${state};`);
      call(`rc = cm_rc(rdma_init_qp_attr(${self}, &${v}, &${m}));`);
      w.line(
        `if (!rc) printf("  attr_mask 0x%x, qp_state %s, qp_access_flags 0x%x, path_mtu %d, dest_qp_num 0x%x, rq_psn 0x%x, sq_psn 0x%x\\n", ${m}, qp_state_str(${v}.qp_state), ${v}.qp_access_flags, ${v}.path_mtu, ${v}.dest_qp_num, ${v}.rq_psn, ${v}.sq_psn);`,
      );
      return true;
    }
    case "cmId.joinMulticast": {
      const a = w.tmp("mcaddr");
      emitAddr(w, a, (args[0] ?? {}) as Obj);
      call(`rc = !${a} ? EINVAL : cm_rc(rdma_join_multicast(${self}, ${a}, NULL));`);
      return true;
    }
    case "cmId.leaveMulticast": {
      if (isUnackedCmEventsRefusal(e.error)) {
        // librdmacm's leave waits for ever for the join event's acknowledgement.
        w.line(`/* Not called: VerbsLab refused it (${comment(e.error?.reason ?? "")}). */`);
        w.line(`report(${step}, EBUSY);`);
        return true;
      }
      const a = w.tmp("mcaddr");
      emitAddr(w, a, (args[0] ?? {}) as Obj);
      call(`rc = !${a} ? EINVAL : cm_rc(rdma_leave_multicast(${self}, ${a}));`);
      return true;
    }
    case "cmId.getLocalAddr":
    case "cmId.getPeerAddr": {
      const local = e.method === "getLocalAddr";
      w.line(`printf("%s: ok\\n", ${step});`);
      w.line(`print_addr(${cstr(local ? "local" : "peer")}, rdma_get_${local ? "local" : "peer"}_addr(${self}));`);
      return true;
    }
    case "cmId.destroy":
      if (isUnackedCmEventsRefusal(e.error)) {
        // The real call would wait for ever for the acknowledgements.
        w.line(`/* Not called: VerbsLab refused it (${comment(e.error?.reason ?? "")}). */`);
        w.line(`report(${step}, EBUSY);`);
        return true;
      }
      call(`rc = cm_rc(rdma_destroy_id(${self}));`);
      return true;
    default:
      return false;
  }
}

/** The errno a recorded error names, as C (EINVAL for a name that is none). */
const errnoExpr = (code: unknown) => (typeof code === "string" && /^E[A-Z0-9]{1,15}$/.test(code) ? code : "EINVAL");

/**
 * rdma_get_cm_event, awaited with the recorded timeout: the program goes on only with the
 * event the transcript recorded (type, and the id it is on), and otherwise stops, saying
 * which event it got.
 */
function emitGetEvent(
  w: Writer,
  e: VerbEvent,
  cm: CmObjects,
  self: string,
  step: string,
  created: string | undefined,
): void {
  const timeout = e.args[0] === undefined || e.args[0] === null ? "-1" : intExpr(e.args[0], -1);
  const props = (e.created?.[0]?.props ?? {}) as { [key: string]: WireValue };
  if (!created) {
    const v = w.tmp("ev");
    w.line(`struct rdma_cm_event *${v} = NULL;`);
    w.line(`rc = get_cm_event(${self}, ${timeout}, &${v});`);
    if (e.error) {
      w.line(`report(${step}, rc);`);
      w.line(`if (!rc) rdma_ack_cm_event(${v});`);
      return;
    }
    w.line(`if (!rc) {`);
    w.line(`    print_cm_event(${step}, ${v});`);
    w.line(
      `    printf("%s: got %s, where the transcript got no event within ${timeout} ms (stopping)\\n", ${step}, rdma_event_str(${v}->event));`,
    );
    w.line(`    return 1;`);
    w.line(`}`);
    w.line(`if (rc != ETIMEDOUT) report(${step}, rc);`);
    w.line(`else printf("%s: no event\\n", ${step});`);
    return;
  }
  const want = eventText(props.event);
  w.line(`rc = get_cm_event(${self}, ${timeout}, &${created});`);
  w.line(`if (rc) {`);
  w.line(
    `    printf("%s: no event (%s), where the transcript got ${comment(want)} (stopping)\\n", ${step}, rc == ETIMEDOUT ? "none within ${timeout} ms" : strerror(rc));`,
  );
  w.line(`    return 1;`);
  w.line(`}`);
  w.line(`print_cm_event(${step}, ${created});`);
  w.line(`if (${created}->event != ${eventExpr(props.event)}) {`);
  w.line(
    `    printf("%s: got %s, where the transcript got %s (stopping)\\n", ${step}, rdma_event_str(${created}->event), ${cstr(want)});`,
  );
  w.line(`    return 1;`);
  w.line(`}`);
  // The id it is on: one the program has must be the same (a new one, the child id of a
  // CONNECT_REQUEST, is read off the event after this).
  for (const field of ["id", "listen_id"] as const) {
    const r = asRef(props[field]);
    if (!r || !cm.isAssigned(r.$handle)) continue;
    const id = cName({ $handle: r.$handle, type: r.type });
    w.line(`if (${created}->${field} != ${id}) {`);
    w.line(`    printf("%s: the event's ${field} is not ${id}, as in the transcript (stopping)\\n", ${step});`);
    w.line(`    return 1;`);
    w.line(`}`);
  }
}
