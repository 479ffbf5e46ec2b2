/**
 * Evaluates a step's goal checks (data, lessons/schema.ts) against what one run of a
 * learner program recorded (`RunRecord`). Pure: the replay (lessons/replay.ts) and the app
 * build the record from the session's transcript; this file only judges it.
 */
import {
  enums,
  flagNames,
  ibv_qp_state,
  ibv_wc_flags,
  ibv_wc_opcode,
  ibv_wc_status,
  nameOf,
} from "../verbs/constants.js";
import { RXE_COUNTER_NAMES, type QpAttr, type Wc } from "../verbs/types.js";
import type { Check, ConstRef, Language, NumberMatch, Text } from "./schema.js";

/** The facts about one run that checks look at. */
export interface RunRecord {
  /** Every verb call, in order. */
  calls: { verb: string; ok: boolean; error?: RunError }[];
  /** Every work completion the program polled, in order. */
  wcs: RunWc[];
  /** The QPs the program created, in creation order, with `ibv_query_qp` as of the end of the run. */
  qps: { qp_num: number; attr?: QpAttr }[];
  /** The MRs the program registered, in order, with the bytes it last read from each (`mr.read()`), by offset. */
  mrs: { reads: { offset: number; bytes: Uint8Array }[] }[];
  /** `verbs.log(key, value)` calls, in order. */
  logs: { key: string; value: unknown }[];
  /** How much each hw_counter changed over the run, per device name (a device the program opened but whose counters did not move has `{}`). */
  counters: Record<string, Record<string, number>>;
  /** The error the program ended with, if it threw. */
  thrown?: RunError;
}

/**
 * A polled completion, with the index of the QP it belongs to when known: QP numbers are
 * per device (rxe0 and rxe1 both start at 0x11), so the CQ it came from disambiguates.
 */
export interface RunWc extends Wc {
  qp_index?: number;
}

export interface RunError {
  verb?: string;
  code?: string;
  attribute?: string;
  message: string;
}

export interface CheckResult {
  check: Check;
  passed: boolean;
  /** What was seen, in English, when it failed (or to explain a pass). */
  detail: string;
}

export interface Verdict {
  passed: boolean;
  results: CheckResult[];
  /** Set when the program threw an error that no check expected. */
  unexpectedError?: RunError;
}

/** A ConstRef's numeric value: names are looked up in every verbs.h enum. */
export function constValue(ref: ConstRef): number {
  if (typeof ref === "number") return ref;
  for (const group of Object.values(enums)) {
    const v = (group as Record<string, number>)[ref];
    if (v !== undefined) return v;
  }
  throw new Error(`unknown constant ${ref}`);
}

export function matchNumber(value: number, m: NumberMatch): boolean {
  const v = m.mask !== undefined ? value & m.mask : value;
  if (m.equals !== undefined && v !== m.equals) return false;
  if (m.min !== undefined && v < m.min) return false;
  if (m.max !== undefined && v > m.max) return false;
  return true;
}

function describeNumber(m: NumberMatch): string {
  const parts: string[] = [];
  if (m.mask !== undefined) parts.push(`& 0x${m.mask.toString(16)}`);
  if (m.equals !== undefined) parts.push(`= ${m.equals}`);
  if (m.min !== undefined) parts.push(`≥ ${m.min}`);
  if (m.max !== undefined) parts.push(`≤ ${m.max}`);
  return parts.join(" ");
}

function field(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const key of path.split(".")) {
    if (typeof cur !== "object" || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

function wcMatches(c: Extract<Check, { kind: "wc" }>, wc: RunWc, run: RunRecord): boolean {
  if (c.qp !== undefined) {
    if (wc.qp_index !== undefined ? wc.qp_index !== c.qp : wc.qp_num !== run.qps[c.qp]?.qp_num) return false;
  }
  if (c.status !== undefined && wc.status !== constValue(c.status)) return false;
  if (c.opcode !== undefined && wc.opcode !== constValue(c.opcode)) return false;
  if (c.byte_len !== undefined && !matchNumber(wc.byte_len, c.byte_len)) return false;
  if (c.imm_data !== undefined && wc.imm_data !== c.imm_data) return false;
  if (c.wr_id !== undefined && wc.wr_id !== c.wr_id) return false;
  for (const f of c.wc_flags_set ?? []) if ((wc.wc_flags & constValue(f)) === 0) return false;
  for (const f of c.wc_flags_clear ?? []) if ((wc.wc_flags & constValue(f)) !== 0) return false;
  return true;
}

function describeWc(wc: Wc): string {
  const flags = flagNames(ibv_wc_flags, wc.wc_flags).join("|") || "0";
  return `{qp ${wc.qp_num} ${nameOf(ibv_wc_status, wc.status)} ${nameOf(ibv_wc_opcode, wc.opcode)} byte_len ${wc.byte_len} flags ${flags}}`;
}

function errorMatches(c: Extract<Check, { kind: "error" }>, e: RunError | undefined): boolean {
  return !!e && e.verb === c.verb && e.code === c.code && (c.attribute === undefined || e.attribute === c.attribute);
}

/** Judges one check. */
export function evaluateCheck(c: Check, run: RunRecord): CheckResult {
  const result = (passed: boolean, detail: string): CheckResult => ({ check: c, passed, detail });
  switch (c.kind) {
    case "qp_state": {
      const qp = run.qps[c.qp];
      if (!qp) return result(false, `the program created ${run.qps.length} QP(s); QP #${c.qp} does not exist`);
      const want = constValue(c.state);
      const got = qp.attr?.qp_state;
      if (got === undefined) return result(false, `QP #${c.qp} could not be queried at the end of the run`);
      return result(got === want, `QP #${c.qp} (0x${qp.qp_num.toString(16)}) is ${nameOf(ibv_qp_state, got)}`);
    }
    case "qp_attr": {
      const qp = run.qps[c.qp];
      if (!qp?.attr) return result(false, `QP #${c.qp} does not exist or could not be queried`);
      const v = field(qp.attr, c.field);
      if (typeof v !== "number") return result(false, `ibv_query_qp has no numeric field ${c.field}`);
      return result(matchNumber(v, c.value), `QP #${c.qp} ${c.field} = ${v}`);
    }
    case "wc": {
      const n = run.wcs.filter((wc) => wcMatches(c, wc, run)).length;
      const ok = matchNumber(n, c.count ?? { min: 1 });
      const seen = run.wcs.length ? run.wcs.slice(0, 6).map(describeWc).join(", ") : "no completions";
      return result(ok, `${n} matching completion(s); polled: ${seen}${run.wcs.length > 6 ? ", …" : ""}`);
    }
    case "error": {
      const hit = run.calls.find((call) => errorMatches(c, call.error)) ?? (errorMatches(c, run.thrown) && run);
      const errors = run.calls.filter((call) => call.error).map((call) => `${call.error!.verb} ${call.error!.code}`);
      return result(!!hit, errors.length ? `errors seen: ${errors.join(", ")}` : "no verb failed");
    }
    case "verb_count": {
      const n = run.calls.filter((call) => call.verb === c.verb && (!c.ok || call.ok)).length;
      return result(matchNumber(n, c.count), `${c.verb} was called ${n} time(s)${c.ok ? " successfully" : ""}`);
    }
    case "counter": {
      const dev = run.counters[c.device];
      if (!dev) return result(false, `the program never opened ${c.device}`);
      if (!(RXE_COUNTER_NAMES as readonly string[]).includes(c.name) && !(c.name in dev))
        return result(false, `${c.device} has no counter ${c.name}`);
      const delta = dev[c.name] ?? 0;
      return result(matchNumber(delta, c.delta), `${c.device} ${c.name} changed by ${delta}`);
    }
    case "mr_bytes": {
      const mr = run.mrs[c.mr];
      if (!mr) return result(false, `the program registered ${run.mrs.length} MR(s); MR #${c.mr} does not exist`);
      const want = c.hex !== undefined ? hexBytes(c.hex) : new TextEncoder().encode(c.utf8 ?? "");
      const off = c.offset ?? 0;
      // The latest read that covers the bytes the check looks at.
      const read = [...mr.reads]
        .reverse()
        .find((r) => r.offset <= off && r.offset + r.bytes.length >= off + want.length);
      if (!read) return result(false, `the program never read MR #${c.mr} (await mr.read()) over those bytes`);
      const got = read.bytes.subarray(off - read.offset, off - read.offset + want.length);
      const same = got.length === want.length && got.every((b, i) => b === want[i]);
      return result(
        same,
        `MR #${c.mr} bytes at ${off}: ${bytesHex(got)}${c.utf8 !== undefined ? ` ("${utf8(got)}")` : ""}`,
      );
    }
    case "log": {
      const entry = [...run.logs].reverse().find((l) => l.key === c.key);
      if (!entry) return result(false, `the program never logged "${c.key}"`);
      const shown = `"${c.key}" = ${safeJson(entry.value)}`;
      if (c.value !== undefined) {
        const v = typeof entry.value === "bigint" ? Number(entry.value) : entry.value;
        if (typeof v !== "number") return result(false, `${shown} is not a number`);
        if (!matchNumber(v, c.value)) return result(false, shown);
      }
      if (c.equals !== undefined && safeJson(entry.value) !== safeJson(c.equals)) return result(false, shown);
      return result(true, shown);
    }
  }
}

/** Judges a step: every check passes, and the program did not end with an error no check expected. */
export function evaluateChecks(checks: Check[], run: RunRecord): Verdict {
  const results = checks.map((c) => evaluateCheck(c, run));
  const expected = run.thrown && checks.some((c) => c.kind === "error" && errorMatches(c, run.thrown));
  const unexpectedError = run.thrown && !expected ? run.thrown : undefined;
  return {
    passed: results.every((r) => r.passed) && !unexpectedError,
    results,
    ...(unexpectedError && { unexpectedError }),
  };
}

function hexBytes(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
}
function bytesHex(b: Uint8Array): string {
  return Array.from(b.subarray(0, 32), (x) => x.toString(16).padStart(2, "0")).join("") + (b.length > 32 ? "…" : "");
}
function utf8(b: Uint8Array): string {
  return new TextDecoder().decode(b).replace(/\0/g, "\\0");
}
function safeJson(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? `${x}n` : x)) ?? String(v);
}

/** A goal's text: the author's when given, else generated from the data. */
export function describeCheck(c: Check, lang: Language): string {
  if (c.goal) return c.goal[lang];
  const t = generated(c);
  return t[lang];
}

function constName(ref: ConstRef): string {
  return typeof ref === "string" ? ref : String(ref);
}

function generated(c: Check): Text {
  switch (c.kind) {
    case "qp_state":
      return {
        en: `QP #${c.qp} ends in ${constName(c.state)}`,
        zh: `QP #${c.qp} 最终处于 ${constName(c.state)}`,
      };
    case "qp_attr":
      return {
        en: `ibv_query_qp: QP #${c.qp} ${c.field} ${describeNumber(c.value)}`,
        zh: `ibv_query_qp：QP #${c.qp} 的 ${c.field} ${describeNumber(c.value)}`,
      };
    case "wc": {
      const parts = [
        c.status !== undefined ? constName(c.status) : "",
        c.opcode !== undefined ? `opcode ${constName(c.opcode)}` : "",
        c.byte_len !== undefined ? `byte_len ${describeNumber(c.byte_len)}` : "",
        c.wc_flags_set?.length ? `flags ${c.wc_flags_set.map(constName).join("|")}` : "",
        c.qp !== undefined ? `on QP #${c.qp}` : "",
      ]
        .filter(Boolean)
        .join(", ");
      const count = c.count ? ` (count ${describeNumber(c.count)})` : "";
      return { en: `A work completion: ${parts}${count}`, zh: `一个工作完成（WC）：${parts}${count}` };
    }
    case "error":
      return {
        en: `${c.verb} fails with ${c.code}${c.attribute ? ` (${c.attribute})` : ""}`,
        zh: `${c.verb} 失败，返回 ${c.code}${c.attribute ? `（${c.attribute}）` : ""}`,
      };
    case "verb_count":
      return {
        en: `${c.verb} is called ${describeNumber(c.count)} time(s)`,
        zh: `${c.verb} 调用次数 ${describeNumber(c.count)}`,
      };
    case "counter":
      return {
        en: `${c.device} counter ${c.name} changes by ${describeNumber(c.delta)}`,
        zh: `${c.device} 的计数器 ${c.name} 变化量 ${describeNumber(c.delta)}`,
      };
    case "mr_bytes":
      return {
        en: `MR #${c.mr} holds ${c.utf8 !== undefined ? `"${c.utf8}"` : `0x${c.hex}`} at offset ${c.offset ?? 0}`,
        zh: `MR #${c.mr} 在偏移 ${c.offset ?? 0} 处的内容为 ${c.utf8 !== undefined ? `"${c.utf8}"` : `0x${c.hex}`}`,
      };
    case "log": {
      const want =
        c.value !== undefined ? describeNumber(c.value) : c.equals !== undefined ? `= ${safeJson(c.equals)}` : "";
      return {
        en: `The program logs "${c.key}" ${want}`.trim(),
        zh: `程序记录 "${c.key}" ${want}`.trim(),
      };
    }
  }
}
