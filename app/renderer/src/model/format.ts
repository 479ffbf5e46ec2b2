/**
 * Values as a learner reads them, in one place for every pane: constants by their verbs.h
 * names, flags as names, keys, PSNs and immediate data in hex, 64-bit values as numbers.
 */
import {
  RNR_TIMER_USEC,
  flagNames,
  ibv_access_flags,
  ibv_event_type,
  ibv_mig_state,
  ibv_mtu,
  ibv_port_state,
  ibv_qp_state,
  ibv_qp_type,
  ibv_wc_flags,
  ibv_wc_opcode,
  ibv_wc_status,
  ibv_wr_opcode,
  mtuBytes,
  nameOf,
} from "../../../../verbs/constants.js";
import {
  RDMA_CM_EVENT_REJECTED,
  RDMA_CM_EVENT_UNREACHABLE,
  RDMA_PS_UDP,
  ib_cm_rej_reason,
  ib_cm_sidr_status,
} from "../../../../verbs/cm.js";
import { errnoName } from "../../../../verbs/errors.js";

export const stateName = (s: number): string => nameOf(ibv_qp_state, s).replace("IBV_QPS_", "");
export const qpTypeName = (t: number): string => nameOf(ibv_qp_type, t).replace("IBV_QPT_", "");
export const wcStatusName = (s: number): string => nameOf(ibv_wc_status, s);
export const wcOpcodeName = (o: number): string => nameOf(ibv_wc_opcode, o);
/** An async event's type by name: IBV_EVENT_CQ_ERR is 0, and 0 means nothing to a learner. */
export const asyncEventName = (t: number): string => nameOf(ibv_event_type, t);
export const hex = (n: number): string => `0x${(n >>> 0).toString(16)}`;
export const accessNames = (flags: number): string =>
  flags === 0
    ? "0"
    : flagNames(ibv_access_flags, flags)
        .map((n) => n.replace("IBV_ACCESS_", ""))
        .join(" | ");
/** An MTU enum with its bytes: "IBV_MTU_1024 (1024)". */
export const mtuName = (m: number): string => (m >= 1 && m <= 5 ? `${nameOf(ibv_mtu, m)} (${mtuBytes(m)})` : String(m));

/** A PSN as decimal and hex: "292 (0x124)" ("0" alone). */
export const psn = (n: number): string => (n === 0 ? "0" : `${n} (${hex(n)})`);

/**
 * A 64-bit value (a bigint, or the transcript's `{ $bigint: "…" }`): a plain number while a
 * JavaScript number holds it exactly, else hex (max_mr_size 0xffffffffffffffff).
 */
export function big(v: bigint | string): string {
  const b = typeof v === "bigint" ? v : BigInt(v);
  const abs = b < 0n ? -b : b;
  return abs <= BigInt(Number.MAX_SAFE_INTEGER) ? b.toString() : `${b < 0n ? "-" : ""}0x${abs.toString(16)}`;
}

/**
 * How a number is shown, by the field it is (the last part of its path or log label): the one
 * table the query table, the Log and the completions read. Undefined: a plain number.
 */
function byField(field: string, value: number): string | undefined {
  switch (field) {
    case "qp_state":
    case "cur_qp_state":
    case "state":
      return nameOf(ibv_qp_state, value);
    case "port_state":
      return nameOf(ibv_port_state, value);
    case "path_mtu":
    case "active_mtu":
    case "max_mtu":
      return mtuName(value);
    case "path_mig_state":
      return nameOf(ibv_mig_state, value);
    case "qp_type":
      return nameOf(ibv_qp_type, value);
    case "qp_access_flags":
      return accessNames(value);
    case "async_event":
    case "event_type":
      return asyncEventName(value);
    case "status":
      return wcStatusName(value);
    case "wc_flags":
      return value === 0 ? "0" : flagNames(ibv_wc_flags, value).join(" | ");
    case "qkey":
    case "lkey":
    case "rkey":
    case "imm_data":
      return hex(value);
    case "sq_psn":
    case "rq_psn":
    case "psn":
      // Lessons and rxe's logs give PSNs in hex (0x124); the decimal stays for the arithmetic.
      return psn(value);
    case "qp_num":
    case "dest_qp_num":
    case "src_qp":
      // Every pane names a QP in hex ("a (QP 0x11)"); the decimal stays for what the program printed.
      return psn(value);
    default:
      return undefined;
  }
}

/** The field a path or label names: its last part, past dots and a "state_after_…" suffix. */
function fieldOf(path: string): string {
  const leaf = path.slice(path.lastIndexOf(".") + 1);
  return /^(.+?)_after_\w+$/.exec(leaf)?.[1] ?? leaf;
}

/** One `ibv_query_qp` field (dotted path below `attr.` or `init_attr.`) as text. */
export function formatField(path: string, value: unknown): string {
  if (value === undefined) return "—";
  if (typeof value !== "number") return String(value);
  return byField(fieldOf(path), value) ?? String(value);
}

/**
 * A value a program logged, as the Log shows it: numbers named by their field (`key`), 64-bit
 * values as numbers, objects (a work completion, a port's attributes) field by field.
 */
export function formatLogged(key: string, v: unknown): string {
  if (typeof v === "number") return byField(fieldOf(key), v) ?? String(v);
  if (typeof v === "bigint") return big(v);
  if (typeof v === "string") return v;
  if (v === null || typeof v !== "object") return String(v);
  if (Array.isArray(v)) return `[${v.map((x) => formatLogged(key, x)).join(", ")}]`;
  const o = v as Record<string, unknown>;
  if (typeof o.$bigint === "string" && Object.keys(o).length === 1) return big(o.$bigint);
  if (typeof o.$bytes === "string") return `<${o.$bytes.length / 2} bytes>`;
  // Inside an object its own keys name the fields (wc.status, port.active_mtu); an opcode is a
  // completion's (IBV_WC_*) in a work completion, a work request's (IBV_WR_*) elsewhere.
  const isWc = "status" in o && "byte_len" in o;
  const show = (k: string, x: unknown) =>
    k === "opcode" && typeof x === "number" ? (isWc ? wcOpcodeName(x) : nameOf(ibv_wr_opcode, x)) : formatLogged(k, x);
  return `{ ${Object.entries(o)
    .map(([k, x]) => `${k}: ${show(k, x)}`)
    .join(", ")} }`;
}

/**
 * One `verbs.log(label, value)` line as the Log shows it. The session records the value as JSON
 * after the label (what the lesson checks read); here it is named by the label:
 * "async_event 0" → "async_event IBV_EVENT_CQ_ERR", `{"$bigint":"…"}` → the number.
 */
export function formatLogLine(message: string): string {
  const m = /^(\S+) (.+)$/s.exec(message);
  if (!m) return message;
  let value: unknown;
  try {
    value = JSON.parse(m[2]);
  } catch {
    // Several values, or text: still no `{"$bigint": …}` on screen.
    return message.replace(/\{"\$bigint":"(-?\d+)"\}/g, (_, d: string) => big(d));
  }
  return typeof value === "string" ? message : `${m[1]} ${formatLogged(m[1], value)}`;
}

/** rxe's jiffy at HZ=250, the kernel Debian ships (sim/modify.ts JIFFY_MS). */
export const RXE_JIFFY_MS = 4;

/**
 * What an RNR NAK's timer asks for, and the shortest wait rxe gives any RNR NAK: it turns the
 * timer into jiffies rounded up, at least one, and the kernel's timer fires on a tick after
 * that jiffy has passed, so timer 1 asks for 0.01 ms and waits 4 to 8 ms (sim/RXE-FACTS.md §5.1).
 * The Packets pane says so next to the wait.
 */
export function rnrWait(timer: number): { askedMs: number; floorMs: number } {
  return { askedMs: RNR_TIMER_USEC[timer & 0x1f] / 1000, floorMs: RXE_JIFFY_MS };
}

/**
 * A CM event's status by name, as <rdma/rdma_cma.h> and <rdma/ib_cm.h> spell it: a negative
 * errno ("-ETIMEDOUT"), a REJECTED event's REJ reason ("IB_CM_REJ_CONSUMER_DEFINED"), an
 * RDMA_PS_UDP UNREACHABLE's SIDR status ("IB_SIDR_REJECT"). Undefined for 0 and for a number
 * that has no name there.
 */
export function cmStatusName(event: number, status: number, ps: number): string | undefined {
  if (status < 0) return `-${errnoName(-status)}`;
  const group =
    event === RDMA_CM_EVENT_REJECTED
      ? ib_cm_rej_reason
      : event === RDMA_CM_EVENT_UNREACHABLE && ps === RDMA_PS_UDP
        ? ib_cm_sidr_status
        : undefined;
  if (!group || status === 0) return undefined;
  const name = nameOf(group, status);
  return name === String(status) ? undefined : name;
}

/**
 * A long run of one escape in text shown to the learner ("\u0000" × 133, lesson 18's padding
 * decoded as text) as its first two and a count: `\u0000\u0000…(133 × \u0000)`. The
 * goal's detail stays a few lines long instead of twenty, and still says exactly what is there.
 */
export function collapseEscapeRuns(text: string, min = 8): string {
  return text.replace(/(\\u[0-9a-fA-F]{4})\1+/g, (run: string, one: string) => {
    const n = run.length / one.length;
    return n < min ? run : `${one}${one}…(${n} × ${one})`;
  });
}
