/**
 * The transcript as a standalone C program over libibverbs: the same verbs with the same
 * attributes, in the same order, printing the QP states and completions as it goes, each
 * step preceded by a comment with what the transcript recorded. Keys, addresses, QPNs and
 * GIDs are taken from the program's own objects (symbols.ts), since they differ per run.
 * A transcript that calls librdmacm becomes a program over it too (c-cm.ts).
 * Build: cc prog.c -libverbs -o prog (with rdma_cm: cc prog.c -lrdmacm -libverbs -o prog)
 */
import { isUnackedEventsRefusal } from "../../../verbs/cq-events.js";
import {
  ibv_access_flags,
  ibv_mtu,
  ibv_qp_attr_mask,
  ibv_qp_state,
  ibv_qp_type,
  ibv_send_flags,
  ibv_wr_opcode,
} from "../../../verbs/constants.js";
import { formatOutcome, formatWc, stateLabel } from "../describe.js";
import { isSym, objectsOf, symbolize, type ObjectInfo, type Sym } from "../symbols.js";
import type { Transcript, VerbEvent } from "../transcript.js";
import { isRef, wireBytesLength, type WireBytes, type WireValue } from "../wire.js";
import { CM_PRELUDE, CmObjects, emitCmVerb, usesCm } from "./c-cm.js";
import {
  bytesList,
  cName,
  comment,
  cstr,
  enumExpr,
  flagExpr,
  hexOf,
  ident,
  intExpr,
  numExpr,
  objs,
  stopUnlessCreated,
  Writer,
  type Obj,
} from "./c-source.js";

const PRELUDE = `#include <infiniband/verbs.h>
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UNUSED __attribute__((unused))

static UNUSED const char *qp_state_str(int s)
{
    static const char *names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR", "UNKNOWN" };
    return s >= 0 && s <= 7 ? names[s] : "?";
}

static UNUSED double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Prints a verb's outcome: "ok", or the errno name the way VerbsLab shows it. */
static UNUSED void report(const char *step, int rc)
{
    if (rc == 0)
        printf("%s: ok\\n", step);
    else
        printf("%s: error %d (%s)\\n", step, rc, strerror(rc));
}

static UNUSED void print_qp_state(const char *name, struct ibv_qp *qp)
{
    struct ibv_qp_attr attr;
    struct ibv_qp_init_attr init;
    if (!qp)
        return;
    if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) == 0)
        printf("  %s state %s\\n", name, qp_state_str(attr.qp_state));
}

static UNUSED void print_wc(const char *cq, const struct ibv_wc *wc)
{
    printf("  %s: wr_id %" PRIu64 ", status %s (%d), opcode %d, byte_len %u, qp_num 0x%x\\n", cq, wc->wr_id,
           ibv_wc_status_str(wc->status), wc->status, wc->opcode, wc->byte_len, wc->qp_num);
}

/* Polls until count completions arrived or timeout_ms passed (VerbsLab's cq.pollWait). */
static UNUSED int poll_wait(struct ibv_cq *cq, int count, int timeout_ms, struct ibv_wc *wcs)
{
    int got = 0;
    double end = now_ms() + timeout_ms;
    while (got < count) {
        int n = ibv_poll_cq(cq, count - got, wcs + got);
        if (n < 0)
            return n;
        got += n;
        if (got >= count || now_ms() >= end)
            break;
        usleep(100);
    }
    return got;
}

/* Waits up to timeout_ms for fd to become readable (-1: forever). */
static UNUSED int wait_fd(int fd, int timeout_ms)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    return poll(&p, 1, timeout_ms);
}

static UNUSED void print_bytes(const char *what, const unsigned char *p, size_t n)
{
    printf("%s:", what);
    for (size_t i = 0; i < n; i++)
        printf(" %02x", p[i]);
    printf("\\n");
}
`;

/** Options of the C export. */
export interface CExportOptions {
  /**
   * The name the program is saved under (e.g. "run.c"): the build line in its header names
   * it and the binary. Default: none (printed to stdout); the line then says to save it as prog.c.
   */
  fileName?: string;
}

/**
 * How to compile exported C saved at `path`: the shell command (quoted where needed; `-x c`
 * where the name does not end in .c) and how to run the binary it makes (the name without
 * its extension). `cm`: the program calls librdmacm too (`usesCm`), so it links -lrdmacm.
 */
export function cBuild(path: string, { cm = false }: { cm?: boolean } = {}): { command: string; run: string } {
  // A leading "-" would read as an option even quoted: ./ makes it a path.
  const quote = (s: string) => {
    const p = s.startsWith("-") ? `./${s}` : s;
    return /^[\w./+-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`;
  };
  const stem = path.replace(/\.[^./]*$/, "");
  const binary = stem === path || stem.endsWith("/") ? `${path}.out` : stem;
  const q = quote(binary);
  const run = q.includes("/") ? q : `./${q}`;
  return {
    command: `cc ${path.endsWith(".c") ? "" : "-x c "}${quote(path)}${cm ? " -lrdmacm" : ""} -libverbs -o ${quote(binary)}`,
    run,
  };
}

export function toC(t: Transcript, options: CExportOptions = {}): string {
  const withCm = usesCm(t);
  const build = cBuild(options.fileName ?? "prog.c", { cm: withCm });
  const buildLine = options.fileName
    ? comment(`Build: ${build.command}     Run: ${build.run}`)
    : `Build (save this output as prog.c first): ${build.command}     Run: ${build.run}`;
  const objects = objectsOf(t);
  const cm = new CmObjects(t);
  const w = new Writer();
  const decls: string[] = ["struct ibv_device **dev_list = NULL;", "int num_devices = 0;", "int rc = 0;"];
  if (withCm) decls.push("struct ibv_context **cm_devices = NULL;");
  for (const [handle, type] of cm.types) {
    const ctype = {
      context: "struct ibv_context",
      pd: "struct ibv_pd",
      mr: "struct ibv_mr",
      cq: "struct ibv_cq",
      channel: "struct ibv_comp_channel",
      qp: "struct ibv_qp",
      ah: "struct ibv_ah",
      cm: "",
      cmChannel: "struct rdma_event_channel",
      cmId: "struct rdma_cm_id",
      cmEvent: "struct rdma_cm_event",
      verbs: "",
    }[type];
    if (!ctype) continue;
    const name = cName({ $handle: handle, type });
    decls.push(`${ctype} *${name} = NULL;`);
    if (type === "mr") decls.push(`unsigned char *buf_${name} = NULL;`);
  }
  for (const e of t.events) {
    if (e.kind === "log") {
      w.line(`printf("log: %s\\n", ${cstr(e.message)});`);
      continue;
    }
    if (e.kind === "end") {
      w.line(`/* The program ended: ${e.outcome}${e.error ? ` (${comment(e.error.message)})` : ""} */`);
      continue;
    }
    w.line();
    w.line(`/* ${comment(e.seq)}. ${comment(e.verb)}: transcript says ${comment(formatOutcome(e))} */`);
    cm.beforeCall(w, e);
    emitVerb(w, e, objects, cm);
    cm.afterCall(w, e);
    printCmTransitions(w, e, cm);
    for (const q of e.qps) {
      if (q.after && q.before && q.before.qp_state !== q.after.qp_state)
        w.line(
          `/* expected: qp${comment(q.qp)} ${comment(stateLabel(q.before.qp_state))} -> ${comment(stateLabel(q.after.qp_state))} */`,
        );
    }
    for (const c of e.completions ?? []) w.line(`/* expected: cq${comment(c.cq)}: ${comment(formatWc(c.wc))} */`);
  }
  return `/*
 * Generated by VerbsLab from a transcript recorded on the ${comment(t.header.backend)} backend
 * (${comment(t.header.created)}${t.header.program ? `, ${comment(t.header.program)}` : ""}).
 * It performs the same verbs with the same attributes and prints the states and
 * completions; the comments say what the transcript recorded at each step.
 *
 * ${buildLine} (needs an RDMA device, e.g. rxe0)
 */
${withCm ? PRELUDE.replace("#include <infiniband/verbs.h>\n", "#include <infiniband/verbs.h>\n#include <rdma/rdma_cma.h>\n") + CM_PRELUDE : PRELUDE}
int main(void)
{
${decls.map((d) => "    " + d).join("\n")}

    setvbuf(stdout, NULL, _IOLBF, 0);
${w.lines.join("\n")}

    (void)rc;
    (void)num_devices;
    if (dev_list)
        ibv_free_device_list(dev_list);${withCm ? "\n    if (cm_devices)\n        rdma_free_devices(cm_devices);" : ""}
    return 0;
}
`;
}

/**
 * After a CM call or event: the state of each QP librdmacm moved in it, so the output shows
 * what it did behind the program's back.
 */
function printCmTransitions(w: Writer, e: VerbEvent, cm: CmObjects): void {
  const step = cstr(`${e.seq}. ${e.verb}`);
  const qps = new Map<number, string>();
  for (const m of e.librdmacm ?? []) {
    if (typeof m.qp !== "number") continue;
    const name = cName({ $handle: m.qp, type: "qp" });
    w.line(
      `/* made by librdmacm: ${name} ${comment(stateLabel(m.from))} -> ${comment(stateLabel(m.to))} (${comment(m.by)} in ${comment(m.during)}) */`,
    );
    qps.set(m.qp, name);
  }
  for (const [handle, name] of qps) if (cm.ensure(w, handle, step)) w.line(`print_qp_state(${cstr(name)}, ${name});`);
}

function emitVerb(w: Writer, e: VerbEvent, objects: Map<number, ObjectInfo>, cm: CmObjects): void {
  if (emitCmVerb(w, e, objects, cm, (v, init) => emitQpInit(w, v, init, objects))) return;
  const self = e.target.type === "verbs" ? "" : cName(e.target);
  const args = e.args.map((a) => symbolize(a, objects, e.seq)) as (WireValue | Sym)[];
  const step = cstr(`${e.seq}. ${e.verb}`);
  const created = e.created?.[0] ? cName(e.created[0]) : undefined;
  const n = (v: WireValue | Sym | undefined) => numExpr(v, objects);
  const refName = (v: WireValue | Sym | undefined) => (isRef(v) ? cName(v) : "NULL");
  const ifCreated = (expr: string, what: string) => {
    if (created) {
      w.line(`${created} = ${expr};`);
      stopUnlessCreated(w, step, created);
      w.line(`printf("%s: ${what}\\n", ${step}${what.includes("%") ? `, ${createdArgs(e, created)}` : ""});`);
    } else {
      w.line(`if (!(${expr})) printf("%s: failed: %s\\n", ${step}, strerror(errno));`);
    }
  };

  switch (`${e.target.type}.${e.method}`) {
    case "verbs.getDeviceList":
      w.line(`if (!dev_list) dev_list = ibv_get_device_list(&num_devices);`);
      w.line(`printf("%s: %d device(s)\\n", ${step}, num_devices);`);
      return;
    case "verbs.openDevice": {
      const name = typeof args[0] === "string" ? args[0] : "rxe0";
      w.line(`if (!dev_list) dev_list = ibv_get_device_list(&num_devices);`);
      w.line(`for (int i = 0; dev_list && i < num_devices; i++)`);
      w.line(`    if (strcmp(ibv_get_device_name(dev_list[i]), ${cstr(name)}) == 0)`);
      if (created) w.line(`        ${created} = ibv_open_device(dev_list[i]);`);
      else w.line(`        (void)ibv_open_device(dev_list[i]);`);
      if (created) {
        w.line(`if (!${created}) {`);
        w.line(`    printf("%s: no such device: %s (stopping)\\n", ${step}, ${cstr(name)});`);
        w.line(`    return 1;`);
        w.line(`}`);
        w.line(`printf("%s: opened %s\\n", ${step}, ${cstr(name)});`);
      }
      return;
    }
    case "verbs.sleep":
      w.line(`usleep(${intExpr(Math.round(Number(args[0] ?? 0) * 1000))});`);
      return;
    case "verbs.now":
      return;
    case "verbs.setLink":
    case "verbs.clearLink":
      // Faults are made outside verbs: say what the lab VM ran (native/lab-link.ts).
      w.line(
        `/* ${comment(e.verb)}(${comment(JSON.stringify(args[0] ?? {}))}): outside C, as root on the lab's veth pair: tc qdisc … netem (loss, delay, reorder), ip link set veth0|veth1 mtu N, nft (UDP 4791 dropped; dropPsn: the first packet with that BTH PSN, once) */`,
      );
      return;
    case "verbs.getLink":
      return;
    case "context.queryDevice": {
      const v = w.tmp("dattr");
      w.line(`struct ibv_device_attr ${v};`);
      w.line(`rc = ibv_query_device(${self}, &${v});`);
      w.line(`report(${step}, rc);`);
      w.line(
        `if (!rc) printf("  max_qp %d, max_qp_wr %d, max_cqe %d, max_mr_size 0x%" PRIx64 "\\n", ${v}.max_qp, ${v}.max_qp_wr, ${v}.max_cqe, ${v}.max_mr_size);`,
      );
      return;
    }
    case "context.queryPort": {
      const v = w.tmp("pattr");
      w.line(`struct ibv_port_attr ${v};`);
      w.line(`rc = ibv_query_port(${self}, ${n(args[0])}, &${v});`);
      w.line(`report(${step}, rc);`);
      w.line(
        `if (!rc) printf("  state %d, active_mtu %d, max_mtu %d, link_layer %d, gid_tbl_len %d\\n", ${v}.state, ${v}.active_mtu, ${v}.max_mtu, ${v}.link_layer, ${v}.gid_tbl_len);`,
      );
      return;
    }
    case "context.queryGid": {
      const v = w.tmp("gid");
      const s = w.tmp("gidstr");
      w.line(`union ibv_gid ${v};`);
      w.line(`char ${s}[INET6_ADDRSTRLEN];`);
      w.line(`rc = ibv_query_gid(${self}, ${n(args[0])}, ${n(args[1])}, &${v});`);
      w.line(`report(${step}, rc);`);
      w.line(`if (!rc) printf("  gid %s\\n", inet_ntop(AF_INET6, ${v}.raw, ${s}, sizeof ${s}));`);
      return;
    }
    case "context.queryGidEx": {
      const v = w.tmp("gide");
      const s = w.tmp("gidstr");
      w.line(`struct ibv_gid_entry ${v};`);
      w.line(`char ${s}[INET6_ADDRSTRLEN];`);
      w.line(`rc = ibv_query_gid_ex(${self}, ${n(args[0])}, ${n(args[1])}, &${v}, 0);`);
      w.line(`report(${step}, rc);`);
      w.line(
        `if (!rc) printf("  gid %s, type %u\\n", inet_ntop(AF_INET6, ${v}.gid.raw, ${s}, sizeof ${s}), ${v}.gid_type);`,
      );
      return;
    }
    case "context.queryGidTable": {
      const v = w.tmp("gidt");
      const s = w.tmp("gidstr");
      const c = w.tmp("ngid");
      w.line(`struct ibv_gid_entry ${v}[64];`);
      w.line(`char ${s}[INET6_ADDRSTRLEN];`);
      w.line(`ssize_t ${c} = ibv_query_gid_table(${self}, ${v}, 64, 0);`);
      w.line(`printf("%s: %zd entries\\n", ${step}, ${c});`);
      w.line(`for (ssize_t i = 0; i < ${c}; i++)`);
      w.line(
        `    printf("  [%u] %s type %u\\n", ${v}[i].gid_index, inet_ntop(AF_INET6, ${v}[i].gid.raw, ${s}, sizeof ${s}), ${v}[i].gid_type);`,
      );
      return;
    }
    case "context.queryPkey": {
      const v = w.tmp("pkey");
      w.line(`uint16_t ${v} = 0;`);
      w.line(`rc = ibv_query_pkey(${self}, ${n(args[0])}, ${n(args[1])}, &${v});`);
      w.line(`report(${step}, rc);`);
      w.line(`if (!rc) printf("  pkey 0x%x\\n", ntohs(${v}));`);
      return;
    }
    case "context.allocPd":
      ifCreated(`ibv_alloc_pd(${self})`, "ok");
      return;
    case "context.createCq": {
      const opts = (args[1] ?? {}) as Obj;
      ifCreated(
        `ibv_create_cq(${self}, ${n(args[0])}, NULL, ${refName(opts.channel as WireValue)}, ${n(opts.comp_vector as WireValue)})`,
        "cqe %d",
      );
      return;
    }
    case "context.createCompChannel":
      ifCreated(`ibv_create_comp_channel(${self})`, "ok");
      return;
    case "context.getAsyncEvent": {
      const v = w.tmp("aev");
      const timeout = args[0] === undefined || args[0] === null ? -1 : n(args[0]);
      w.line(`struct ibv_async_event ${v};`);
      w.line(`if (wait_fd(${self}->async_fd, ${timeout}) > 0 && ibv_get_async_event(${self}, &${v}) == 0) {`);
      w.line(`    printf("%s: event %s\\n", ${step}, ibv_event_type_str(${v}.event_type));`);
      w.line(`    ibv_ack_async_event(&${v});`);
      w.line(`} else printf("%s: no event\\n", ${step});`);
      return;
    }
    case "context.queryCounters":
      w.line(
        `/* Counters: see /sys/class/infiniband/${comment(String((objects.get(e.target.$handle)?.props.device as Obj | undefined)?.name ?? "rxe0"))}/ports/1/hw_counters */`,
      );
      return;
    case "context.close":
      w.line(`report(${step}, ibv_close_device(${self}));`);
      return;
    case "pd.regMr": {
      const mem = args[0];
      const len =
        typeof mem === "number"
          ? mem
          : mem && typeof mem === "object" && "$bytes" in mem
            ? wireBytesLength(mem as WireBytes)
            : 0;
      if (created) {
        w.line(`buf_${created} = calloc(1, ${intExpr(Math.max(len, 1), 1)});`);
        if (/[^0]/.test(hexOf(mem))) {
          const d = w.tmp("init");
          w.line(`static const unsigned char ${d}[] = { ${bytesList(hexOf(mem))} };`);
          w.line(`memcpy(buf_${created}, ${d}, sizeof ${d});`);
        }
        ifCreated(
          `ibv_reg_mr(${self}, buf_${created}, ${intExpr(len)}, ${flagExpr(ibv_access_flags, Number(args[1] ?? 0))})`,
          "lkey 0x%x rkey 0x%x",
        );
      } else {
        const b = w.tmp("buf");
        w.line(`void *${b} = calloc(1, ${intExpr(Math.max(len, 1), 1)});`);
        w.line(
          `if (!ibv_reg_mr(${self}, ${b}, ${intExpr(len)}, ${flagExpr(ibv_access_flags, Number(args[1] ?? 0))})) printf("%s: failed: %s\\n", ${step}, strerror(errno));`,
        );
      }
      return;
    }
    case "pd.createQp": {
      const v = w.tmp("init_attr");
      emitQpInit(w, v, (args[0] ?? {}) as Obj, objects);
      ifCreated(`ibv_create_qp(${self}, &${v})`, "qp_num 0x%x");
      return;
    }
    case "pd.createAh": {
      const v = w.tmp("ah_attr");
      w.line(`struct ibv_ah_attr ${v};`);
      w.line(`memset(&${v}, 0, sizeof ${v});`);
      emitAhAttr(w, `${v}`, (args[0] ?? {}) as Obj, objects);
      ifCreated(`ibv_create_ah(${self}, &${v})`, "ok");
      return;
    }
    case "pd.dealloc":
      w.line(`report(${step}, ibv_dealloc_pd(${self}));`);
      return;
    case "mr.write": {
      const data = args[1];
      const hexs = hexOf(data);
      const d = w.tmp("data");
      w.line(`static const unsigned char ${d}[] = { ${bytesList(hexs) || "0"} };`);
      w.line(`memcpy(buf_${self} + ${n(args[0])}, ${d}, ${hexs.length / 2});`);
      return;
    }
    case "mr.read": {
      const mr = objects.get(e.target.$handle);
      const off = Number(args[0] ?? 0);
      const len = args[1] === undefined || args[1] === null ? Number(mr?.props.length ?? 0) - off : Number(args[1]);
      w.line(`print_bytes(${step}, buf_${self} + ${intExpr(off)}, ${intExpr(len)});`);
      return;
    }
    case "mr.dereg":
      w.line(`report(${step}, ibv_dereg_mr(${self}));`);
      return;
    case "cq.poll":
    case "cq.pollWait": {
      const v = w.tmp("wc");
      const c = w.tmp("ne");
      const count = Math.min(Math.max(Number(intExpr(args[0] ?? 1, 1)), 1), 4096);
      w.line(`struct ibv_wc ${v}[${count}];`);
      if (e.method === "poll") w.line(`int ${c} = ibv_poll_cq(${self}, ${count}, ${v});`);
      else w.line(`int ${c} = poll_wait(${self}, ${count}, ${n(args[1])}, ${v});`);
      w.line(`printf("%s: %d completion(s)\\n", ${step}, ${c});`);
      w.line(`for (int i = 0; i < ${c}; i++)`);
      w.line(`    print_wc(${cstr(self)}, &${v}[i]);`);
      return;
    }
    case "cq.reqNotify":
      w.line(`report(${step}, ibv_req_notify_cq(${self}, ${args[0] ? 1 : 0}));`);
      return;
    case "cq.ackEvents":
      w.line(`ibv_ack_cq_events(${self}, ${n(args[0])});`);
      return;
    case "cq.destroy":
      if (isUnackedEventsRefusal(e.error)) {
        // The real call would destroy the CQ and then wait for ever for the acknowledgements.
        w.line(`/* Not called: VerbsLab refused it (${comment(e.error?.reason ?? "")}). */`);
        w.line(`report(${step}, EBUSY);`);
        return;
      }
      w.line(`report(${step}, ibv_destroy_cq(${self}));`);
      return;
    case "channel.getCqEvent": {
      const c = w.tmp("ev_cq");
      const x = w.tmp("ev_ctx");
      const timeout = args[0] === undefined || args[0] === null ? -1 : n(args[0]);
      w.line(`struct ibv_cq *${c} = NULL;`);
      w.line(`void *${x} = NULL;`);
      w.line(`if (wait_fd(${self}->fd, ${timeout}) > 0 && ibv_get_cq_event(${self}, &${c}, &${x}) == 0)`);
      w.line(`    printf("%s: event on a CQ\\n", ${step});`);
      w.line(`else printf("%s: no event\\n", ${step});`);
      return;
    }
    case "channel.destroy":
      w.line(`report(${step}, ibv_destroy_comp_channel(${self}));`);
      return;
    case "qp.modify": {
      const attr = { ...((args[0] ?? {}) as Obj) };
      if (attr.dest_qp_num !== undefined) attr.dest_qp_num = otherQp(attr.dest_qp_num, e, objects)!;
      const v = w.tmp("attr");
      w.line(`struct ibv_qp_attr ${v};`);
      w.line(`memset(&${v}, 0, sizeof ${v});`);
      emitQpAttr(w, v, attr, objects);
      w.line(`rc = ibv_modify_qp(${self}, &${v}, ${flagExpr(ibv_qp_attr_mask, Number(args[1] ?? 0))});`);
      w.line(`report(${step}, rc);`);
      w.line(`print_qp_state(${cstr(self)}, ${self});`);
      return;
    }
    case "qp.query": {
      const v = w.tmp("qattr");
      const i = w.tmp("qinit");
      const mask = args[0] === undefined || args[0] === null ? (1 << 21) - 1 : Number(args[0]);
      w.line(`struct ibv_qp_attr ${v};`);
      w.line(`struct ibv_qp_init_attr ${i};`);
      w.line(
        `rc = ibv_query_qp(${self}, &${v}, ${mask === (1 << 21) - 1 ? "(1 << 21) - 1" : flagExpr(ibv_qp_attr_mask, mask)}, &${i});`,
      );
      w.line(`report(${step}, rc);`);
      w.line(
        `if (!rc) printf("  qp_state %s, dest_qp_num 0x%x, rq_psn 0x%x, sq_psn 0x%x, path_mtu %d\\n", qp_state_str(${v}.qp_state), ${v}.dest_qp_num, ${v}.rq_psn, ${v}.sq_psn, ${v}.path_mtu);`,
      );
      return;
    }
    case "qp.postSend":
    case "qp.postRecv": {
      const send = e.method === "postSend";
      const list = objs(Array.isArray(args[0]) ? args[0] : [args[0]]);
      const wr = w.tmp(send ? "swr" : "rwr");
      const bad = w.tmp("bad");
      const sges = list.map((x) => objs(x.sg_list).length);
      w.line(`struct ibv_${send ? "send" : "recv"}_wr ${wr}[${list.length}];`);
      w.line(`struct ibv_${send ? "send" : "recv"}_wr *${bad} = NULL;`);
      w.line(`memset(${wr}, 0, sizeof ${wr});`);
      list.forEach((x, i) => {
        const sg = objs(x.sg_list);
        if (sg.length) {
          w.line(`struct ibv_sge ${wr}_sge${i}[${sg.length}] = {`);
          for (const s of sg) w.line(`    { .addr = ${n(s.addr)}, .length = ${n(s.length)}, .lkey = ${n(s.lkey)} },`);
          w.line(`};`);
          w.line(`${wr}[${i}].sg_list = ${wr}_sge${i};`);
          w.line(`${wr}[${i}].num_sge = ${sges[i]};`);
        }
        if (x?.wr_id !== undefined) w.line(`${wr}[${i}].wr_id = ${n(x.wr_id)};`);
        if (i + 1 < list.length) w.line(`${wr}[${i}].next = &${wr}[${i + 1}];`);
        if (!send) return;
        w.line(`${wr}[${i}].opcode = ${enumExpr(ibv_wr_opcode, Number(x?.opcode ?? 0))};`);
        if (x?.send_flags) w.line(`${wr}[${i}].send_flags = ${flagExpr(ibv_send_flags, Number(x.send_flags))};`);
        if (x?.imm_data !== undefined) w.line(`${wr}[${i}].imm_data = htonl(${n(x.imm_data)});`);
        const rdma = x?.rdma as Obj | undefined;
        if (rdma) {
          w.line(`${wr}[${i}].wr.rdma.remote_addr = ${n(rdma.remote_addr)};`);
          w.line(`${wr}[${i}].wr.rdma.rkey = ${n(rdma.rkey)};`);
        }
        const at = x?.atomic as Obj | undefined;
        if (at) {
          w.line(`${wr}[${i}].wr.atomic.remote_addr = ${n(at.remote_addr)};`);
          w.line(`${wr}[${i}].wr.atomic.rkey = ${n(at.rkey)};`);
          w.line(`${wr}[${i}].wr.atomic.compare_add = ${n(at.compare_add)};`);
          if (at.swap !== undefined) w.line(`${wr}[${i}].wr.atomic.swap = ${n(at.swap)};`);
        }
        const ud = x?.ud as Obj | undefined;
        if (ud) {
          w.line(`${wr}[${i}].wr.ud.ah = ${refName(ud.ah as WireValue)};`);
          w.line(`${wr}[${i}].wr.ud.remote_qpn = ${n(otherQp(ud.remote_qpn, e, objects))};`);
          w.line(`${wr}[${i}].wr.ud.remote_qkey = ${n(ud.remote_qkey)};`);
        }
      });
      w.line(`rc = ibv_post_${send ? "send" : "recv"}(${self}, ${wr}, &${bad});`);
      w.line(`report(${step}, rc);`);
      w.line(`if (rc && ${bad}) printf("  bad_wr is wr[%d]\\n", (int)(${bad} - ${wr}));`);
      return;
    }
    case "qp.destroy":
      w.line(`report(${step}, ibv_destroy_qp(${self}));`);
      return;
    case "ah.destroy":
      w.line(`report(${step}, ibv_destroy_ah(${self}));`);
      return;
    default:
      w.line(`/* ${comment(e.target.type)}.${comment(e.method)}: no C equivalent */`);
  }
}

/**
 * The QP a QP sends to or connects with, named by its number. QPNs are unique per device only:
 * two QPs of one transcript can share one (rxe and the simulator number each device's QPs from
 * 0x11, so lesson 17's client and server are both 0x11), and the number then names the first of
 * them. The peer is not the QP itself: where the number names the caller, it names the other QP
 * that has it.
 */
function otherQp(
  v: WireValue | Sym | undefined,
  e: VerbEvent,
  objects: Map<number, ObjectInfo>,
): WireValue | Sym | undefined {
  if (!isSym(v) || v.$sym !== "qp_num" || v.handle !== e.target.$handle) return v;
  const num = objects.get(v.handle)?.props.qp_num;
  for (const o of objects.values())
    if (o.type === "qp" && o.handle !== v.handle && o.createdAt < e.seq && o.props.qp_num === num)
      return { $sym: "qp_num", handle: o.handle };
  return v;
}

/** struct ibv_qp_init_attr `v` from a QpInitAttr argument (ibv_create_qp, rdma_create_qp). */
function emitQpInit(w: Writer, v: string, init: Obj, objects: Map<number, ObjectInfo>): void {
  const cap = (init.cap ?? {}) as Obj;
  const n = (x: WireValue | Sym | undefined) => numExpr(x, objects);
  const refName = (x: unknown) => (isRef(x as WireValue) ? cName(x as { $handle: number; type: string }) : "NULL");
  w.line(`struct ibv_qp_init_attr ${v};`);
  w.line(`memset(&${v}, 0, sizeof ${v});`);
  w.line(`${v}.send_cq = ${refName(init.send_cq)};`);
  w.line(`${v}.recv_cq = ${refName(init.recv_cq)};`);
  for (const k of ["max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline_data"])
    if (cap[k] !== undefined) w.line(`${v}.cap.${k} = ${n(cap[k])};`);
  w.line(`${v}.qp_type = ${enumExpr(ibv_qp_type, Number(init.qp_type ?? 0))};`);
  if (init.sq_sig_all !== undefined) w.line(`${v}.sq_sig_all = ${n(init.sq_sig_all)};`);
}

function createdArgs(e: VerbEvent, name: string): string {
  switch (e.method) {
    case "createCq":
      return `${name}->cqe`;
    case "regMr":
      return `${name}->lkey, ${name}->rkey`;
    case "createQp":
      return `${name}->qp_num`;
    default:
      return "";
  }
}

function emitAhAttr(w: Writer, v: string, ah: Obj, objects: Map<number, ObjectInfo>): void {
  for (const k of ["dlid", "sl", "src_path_bits", "static_rate", "is_global", "port_num"])
    if (ah[k] !== undefined) w.line(`${v}.${k} = ${numExpr(ah[k], objects)};`);
  const grh = ah.grh as Obj | undefined;
  if (!grh || typeof grh !== "object") return;
  for (const k of ["flow_label", "sgid_index", "hop_limit", "traffic_class"])
    if (grh[k] !== undefined) w.line(`${v}.grh.${k} = ${numExpr(grh[k], objects)};`);
  const dgid = grh.dgid;
  if (isSym(dgid) && dgid.$sym === "gid") {
    // The peer's GID differs per boot on rxe: ask its device, as a real program exchanges it.
    const ctx = objects.get(dgid.handle)!.name;
    w.line(
      `ibv_query_gid(${ctx}, ${numExpr(ah.port_num, objects) === "0" ? 1 : numExpr(ah.port_num, objects)}, ${intExpr(dgid.index)}, &${v}.grh.dgid);`,
    );
  } else if (typeof dgid === "string") {
    w.line(`inet_pton(AF_INET6, ${cstr(dgid)}, ${v}.grh.dgid.raw);`);
  }
}

function emitQpAttr(w: Writer, v: string, attr: Obj, objects: Map<number, ObjectInfo>): void {
  for (const [key, x] of Object.entries(attr)) {
    // A learner may pass any key; only those that can be C fields are written.
    const k = ident(key);
    if (!k) {
      w.line(`/* an attribute that is not a C field is left out: ${comment(key)} */`);
      continue;
    }
    if (k === "ah_attr" || k === "alt_ah_attr") {
      if (x && typeof x === "object") emitAhAttr(w, `${v}.${k}`, x as Obj, objects);
      continue;
    }
    if (k === "cap") {
      for (const [ck, cx] of Object.entries((x ?? {}) as Obj)) {
        const c = ident(ck);
        if (c) w.line(`${v}.cap.${c} = ${numExpr(cx, objects)};`);
      }
      continue;
    }
    let expr = numExpr(x, objects);
    if ((k === "qp_state" || k === "cur_qp_state") && typeof x === "number") expr = enumExpr(ibv_qp_state, x);
    if (k === "path_mtu" && typeof x === "number") expr = enumExpr(ibv_mtu, x);
    if (k === "qp_access_flags" && typeof x === "number") expr = flagExpr(ibv_access_flags, x);
    w.line(`${v}.${k} = ${expr};`);
  }
}
