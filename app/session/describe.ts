/**
 * Words for transcript events, shared by the Markdown and HTML exports (and the UI, if it
 * wants them): the call as a learner would write it, with constants by name.
 */
import {
  IBV_WC_SUCCESS,
  flagNames,
  ibv_access_flags,
  ibv_mtu,
  ibv_qp_attr_mask,
  ibv_qp_state,
  ibv_qp_type,
  ibv_send_flags,
  ibv_wc_flags,
  ibv_wc_opcode,
  ibv_wc_status,
  ibv_wr_opcode,
  nameOf,
} from "../../verbs/constants.js";
import { objectName } from "./symbols.js";
import type { TranscriptEvent, VerbEvent } from "./transcript.js";
import { isRef, type WireValue } from "./wire.js";

const flags = (g: Readonly<Record<string, number>>, v: number) => (v === 0 ? "0" : flagNames(g, v).join(" | "));

/** Names for the fields whose numbers are constants. */
const FIELD_NAMES: Record<string, (v: number) => string> = {
  qp_state: (v) => nameOf(ibv_qp_state, v),
  cur_qp_state: (v) => nameOf(ibv_qp_state, v),
  qp_type: (v) => nameOf(ibv_qp_type, v),
  qp_access_flags: (v) => flags(ibv_access_flags, v),
  path_mtu: (v) => nameOf(ibv_mtu, v),
  opcode: (v) => nameOf(ibv_wr_opcode, v),
  send_flags: (v) => flags(ibv_send_flags, v),
};

/** Milliseconds for people: at most 3 decimals (native clocks carry float noise). */
export function ms(n: number): string {
  return String(Math.round(n * 1000) / 1000);
}

export function hex(n: number): string {
  return "0x" + n.toString(16);
}

const HEX_FIELDS = new Set([
  "lkey",
  "rkey",
  "addr",
  "remote_addr",
  "qp_num",
  "dest_qp_num",
  "remote_qpn",
  "rq_psn",
  "sq_psn",
  "qkey",
]);

/** A wire value as learner-readable source text. */
export function formatValue(v: WireValue | undefined, key = ""): string {
  if (v === undefined) return "undefined";
  if (v === null) return "null";
  if (typeof v === "number") {
    const named = FIELD_NAMES[key];
    if (named) return named(v);
    return HEX_FIELDS.has(key) ? hex(v) : String(v);
  }
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map((x) => formatValue(x, key)).join(", ")}]`;
  if (isRef(v)) return objectName(v);
  if ("$bigint" in v && typeof v.$bigint === "string") return `${v.$bigint}n`;
  if ("$num" in v && typeof v.$num === "string") return v.$num;
  if ("$undefined" in v && v.$undefined === true) return "undefined";
  if ("$bytes" in v && typeof v.$bytes === "string") {
    const b = v.$bytes;
    return `<${b.length / 2} bytes${b.length ? ": " + b.slice(0, 32).replace(/(..)/g, "$1 ").trim() + (b.length > 32 ? " …" : "") : ""}>`;
  }
  const entries = Object.entries(v).map(([k, x]) => `${k}: ${formatValue(x as WireValue, k)}`);
  return `{ ${entries.join(", ")} }`;
}

/** `qp5.modify({ qp_state: IBV_QPS_INIT, … }, IBV_QP_STATE | …)` */
export function formatCall(e: VerbEvent): string {
  const target = e.target.type === "verbs" ? "verbs" : objectName(e.target);
  const args = e.args.map((a, i) => {
    if (e.method === "modify" && i === 1 && typeof a === "number") return flags(ibv_qp_attr_mask, a);
    if (e.method === "regMr" && i === 1 && typeof a === "number") return flags(ibv_access_flags, a);
    if (e.method === "query" && i === 0 && typeof a === "number") return flags(ibv_qp_attr_mask, a);
    return formatValue(a);
  });
  return `${target}.${e.method}(${args.join(", ")})`;
}

export function formatWc(wc: {
  wr_id: number;
  status: number;
  opcode: number;
  byte_len: number;
  qp_num: number;
  wc_flags: number;
  imm_data?: number;
  src_qp?: number;
}): string {
  const parts = [
    `wr_id ${wc.wr_id}`,
    `status ${nameOf(ibv_wc_status, wc.status)}`,
    // rxe fills only wr_id, status and qp_num of an error completion: its opcode (0) means nothing.
    wc.status === IBV_WC_SUCCESS
      ? `opcode ${nameOf(ibv_wc_opcode, wc.opcode)}`
      : `opcode ${wc.opcode} (not set on an error completion)`,
    `byte_len ${wc.byte_len}`,
    `qp_num ${hex(wc.qp_num)}`,
  ];
  if (wc.wc_flags) parts.push(`wc_flags ${flags(ibv_wc_flags, wc.wc_flags)}`);
  if (wc.imm_data) parts.push(`imm_data ${hex(wc.imm_data)}`);
  if (wc.src_qp) parts.push(`src_qp ${hex(wc.src_qp)}`);
  return parts.join(", ");
}

export const stateLabel = (s: number) => nameOf(ibv_qp_state, s).replace("IBV_QPS_", "");

/** The outcome in a few words: "→ qp5", "EINVAL: …", "3 completions". */
export function formatOutcome(e: VerbEvent): string {
  if (e.error)
    return `${e.error.code ?? e.error.name}${e.error.reason ? `: ${e.error.reason}` : `: ${e.error.message}`}`;
  if (e.created?.length) return `→ ${e.created.map(objectName).join(", ")}`;
  if (e.method === "poll" || e.method === "pollWait")
    return `${(e.result as unknown[] | undefined)?.length ?? 0} completion(s)`;
  if (e.result === null || e.result === undefined) return "ok";
  if (e.method === "query" && e.result && typeof e.result === "object" && "attr" in e.result) {
    const attr = (e.result as { attr: { qp_state: number } }).attr;
    return `qp_state ${stateLabel(attr.qp_state)}`;
  }
  const s = formatValue(e.result);
  return s.length > 160 ? s.slice(0, 157) + "…" : s;
}

/** One line per event, for logs and the CLI. */
export function summarize(e: TranscriptEvent): string {
  if (e.kind === "log") return `#${e.seq} log: ${e.message}`;
  if (e.kind === "end")
    return `#${e.seq} end: ${e.outcome}${e.error ? ` (${e.error.code ?? e.error.name}: ${e.error.message})` : ""}`;
  const moves = e.qps
    .filter((q) => q.before && q.after && q.before.qp_state !== q.after.qp_state)
    .map((q) => `qp${q.qp} ${stateLabel(q.before!.qp_state)} → ${stateLabel(q.after!.qp_state)}`);
  const check = e.check && !e.check.agree ? ` [model disagrees: expected ${e.check.expected}]` : "";
  return `#${e.seq} ${formatCall(e)} ${formatOutcome(e)}${moves.length ? ` (${moves.join("; ")})` : ""}${check}`;
}
