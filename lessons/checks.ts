/**
 * Evaluates a step's goal checks (data, lessons/schema.ts) against what one run of a
 * learner program recorded (`RunRecord`). Pure: the replay (lessons/replay.ts) and the app
 * build the record from the session's transcript; this file only judges it.
 */
import {
  IBV_WC_SUCCESS,
  enums,
  flagNames,
  ibv_qp_state,
  ibv_wc_flags,
  ibv_wc_opcode,
  ibv_wc_status,
  nameOf,
} from "../verbs/constants.js";
import { counterName, type QpAttr, type RxeCounterName, type Wc } from "../verbs/types.js";
import type { VerbFailure } from "../verbs/verb-failure.js";
import type { Check, ConstRef, Language, MrBytesCheck, NumberMatch, Text } from "./schema.js";
import { qpName } from "../app/renderer/src/model/names.js";

/** The facts about one run that checks look at. */
export interface RunRecord {
  /** Every verb call, in order; the queries (`ibv_query_*`) with what the device answered. */
  calls: { verb: string; ok: boolean; error?: RunError; result?: unknown }[];
  /** Every work completion the program polled, in order. */
  wcs: RunWc[];
  /**
   * The QPs the program created, in creation order, with `ibv_query_qp` as of the end of the run
   * and the variable the program assigned each to, where its line says.
   */
  qps: { qp_num: number; attr?: QpAttr; variable?: string; device?: string }[];
  /**
   * The MRs the program registered, in order, with the bytes it last read from each
   * (`mr.read()`), by offset, and the variable the program assigned each to, where its line says.
   */
  mrs: { reads: { offset: number; bytes: Uint8Array }[]; variable?: string }[];
  /** `verbs.log(key, value)` calls, in order. */
  logs: { key: string; value: unknown }[];
  /** How much each hw_counter changed over the run, per device name (a device the program opened but whose counters did not move has `{}`). */
  counters: Record<string, Record<string, number>>;
  /**
   * The driver of each device the program opened, by device name (DeviceInfo.driver: "rxe",
   * "mlx5", …), where the device said. Decides how rxe-only checks and counters are judged.
   */
  drivers?: Record<string, string>;
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
  /** The error's class where it has no errno (TypeError, RangeError): what the lesson note names. */
  name?: string;
  attribute?: string;
  message: string;
  /** A verb's refusal as data (verbs/verb-failure.ts), for the UI's wording in the learner's language. */
  why?: VerbFailure;
}

export interface CheckResult {
  check: Check;
  passed: boolean;
  /** What was seen, in English, when it failed (or to explain a pass): reports and the CLI. */
  detail: string;
  /** The same in both languages, for the goal list (always set by evaluateCheck). */
  details?: Text;
  /**
   * Passed without being judged, and `details` says why: an rxe-only fact (Check.rxeOnly) on
   * another device, or a counter the device does not have.
   */
  explained?: boolean;
}

export interface Verdict {
  passed: boolean;
  results: CheckResult[];
  /** Set when the program threw an error that no check expected. */
  unexpectedError?: RunError;
  /**
   * What the judged run called QP #i, as every pane names it ("a (QP 0x11)"; "QP #1 (0x11)"
   * where the learner's name is not one QP's): goal labels then say which of the learner's QPs
   * a goal looks at, instead of a creation-order number alone.
   */
  qpNames?: string[];
  /** The same for MR #i: the learner's variable ("dst"), else "MR #i". */
  mrNames?: string[];
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

/**
 * Fields whose values lessons write in hex (PSNs, immediate data, keys, QP numbers): a goal
 * states them the way the text does.
 */
const HEX_FIELDS = /psn|imm_data|qkey|qp_num|rkey|lkey|mask/;

/** `s` spells `v` in decimal, as a number of its own. */
export const decimalIn = (v: number, s: string) => new RegExp(`(?<![\\w.])${v}(?![\\w])`).test(s);
/** `s` spells `v` in hex (`0x124`, any case, leading zeros allowed). */
export const hexIn = (v: number, s: string) => new RegExp(`\\b0x0*${v.toString(16)}\\b`, "i").test(s);

/**
 * Whether a goal writes `v` in hex: as the step's text (and starter code) spell it when they
 * spell it one way only (`0x124`, or `rq_psn: 200`); otherwise hex for the fields lessons write
 * in hex (PSNs, imm_data, keys, QP numbers), decimal for the rest.
 */
export function prefersHex(v: number, fieldName = "", text = ""): boolean {
  if (!Number.isInteger(v) || v < 0) return false;
  const hex = hexIn(v, text);
  const dec = decimalIn(v, text);
  if (hex !== dec) return hex;
  return HEX_FIELDS.test(fieldName);
}

/** How a number is written in a goal (`prefersHex`). */
export function formatValue(v: number, fieldName = "", text = ""): string {
  return prefersHex(v, fieldName, text) ? `0x${v.toString(16)}` : String(v);
}

/** What a learner reads next to a step's goals: its text and starter code (the base numbers are written in). */
export function goalContext(step: { text: Text; starter: string }, lang: Language): string {
  return `${step.text[lang]}\n${step.starter}`;
}

/** A NumberMatch as text ("= 0x124", "≥ 4 ≤ 8", "& 0x1 = 1"). */
export function describeNumber(m: NumberMatch, fieldName = "", text = ""): string {
  const f = (v: number) => formatValue(v, fieldName, text);
  const parts: string[] = [];
  if (m.mask !== undefined) parts.push(`& 0x${m.mask.toString(16)}`);
  if (m.equals !== undefined) parts.push(`= ${f(m.equals)}`);
  if (m.min !== undefined) parts.push(`≥ ${f(m.min)}`);
  if (m.max !== undefined) parts.push(`≤ ${f(m.max)}`);
  return parts.join(" ");
}

/** A language-neutral fragment (numbers, constant names, code) in both languages. */
const same = (s: string): Text => ({ en: s, zh: s });
/** "seen, expected want" in both languages. */
const expected = (seen: Text | string, want: string): Text => {
  const t = typeof seen === "string" ? same(seen) : seen;
  return { en: `${t.en}, expected ${want}`, zh: `${t.zh}，期望 ${want}` };
};
const joined = (parts: Text[]): Text => ({
  en: parts.map((p) => p.en).join("; "),
  zh: parts.map((p) => p.zh).join("；"),
});

/** `got` against a bound, for a failure: null when it matches, else "sq_psn 0x123, expected = 0x124". */
function mismatch(label: string, got: number, m: NumberMatch, fieldName = label): Text | null {
  if (matchNumber(got, m)) return null;
  const v = formatValue(m.mask !== undefined ? got & m.mask : got, fieldName);
  const seen =
    m.mask !== undefined
      ? {
          en: `${label} ${v} (after & 0x${m.mask.toString(16)})`,
          zh: `${label} ${v}（& 0x${m.mask.toString(16)} 之后）`,
        }
      : same(`${label} ${v}`);
  return expected(seen, describeNumber(m, fieldName));
}

function field(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const key of path.split(".")) {
    if (typeof cur !== "object" || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

type WcCheck = Extract<Check, { kind: "wc" }>;

function onQp(c: WcCheck, wc: RunWc, run: RunRecord): boolean {
  if (c.qp === undefined) return true;
  return wc.qp_index !== undefined ? wc.qp_index === c.qp : wc.qp_num === run.qps[c.qp]?.qp_num;
}

/** The constraints of a wc check (besides its QP) that this completion breaks, as "wr_id 0, expected 100". */
function wcMismatches(c: WcCheck, wc: RunWc): Text[] {
  const out: Text[] = [];
  const named = (name: string, group: Record<string, number>, got: number, want: ConstRef) => {
    if (got !== constValue(want)) out.push(expected(`${name} ${nameOf(group, got)}`, constName(want)));
  };
  if (c.status !== undefined) named("status", ibv_wc_status, wc.status, c.status);
  if (c.wr_id !== undefined && wc.wr_id !== c.wr_id) out.push(expected(`wr_id ${String(wc.wr_id)}`, String(c.wr_id)));
  // A failed completion carries only its status and wr_id (rxe zeroes opcode and byte_len): the rest would be noise.
  if (out.length > 0 && wc.status !== IBV_WC_SUCCESS) return out;
  if (c.opcode !== undefined) named("opcode", ibv_wc_opcode, wc.opcode, c.opcode);
  if (c.byte_len !== undefined) {
    const m = mismatch("byte_len", wc.byte_len, c.byte_len);
    if (m) out.push(m);
  }
  if (c.imm_data !== undefined && wc.imm_data !== c.imm_data)
    out.push(expected(`imm_data ${formatValue(wc.imm_data, "imm_data")}`, formatValue(c.imm_data, "imm_data")));
  for (const f of c.wc_flags_set ?? [])
    if ((wc.wc_flags & constValue(f)) === 0)
      out.push({
        en: `${constName(f)} not set in wc_flags (${flagList(wc.wc_flags)})`,
        zh: `wc_flags（${flagList(wc.wc_flags)}）中没有 ${constName(f)}`,
      });
  for (const f of c.wc_flags_clear ?? [])
    if ((wc.wc_flags & constValue(f)) !== 0)
      out.push({
        en: `${constName(f)} set in wc_flags, expected clear`,
        zh: `wc_flags 中设置了 ${constName(f)}，期望不设置`,
      });
  return out;
}

function wcMatches(c: WcCheck, wc: RunWc, run: RunRecord): boolean {
  return onQp(c, wc, run) && wcMismatches(c, wc).length === 0;
}

function flagList(flags: number): string {
  return flagNames(ibv_wc_flags, flags).join("|") || "0";
}

function describeWc(wc: Wc): string {
  return `{qp 0x${wc.qp_num.toString(16)} ${nameOf(ibv_wc_status, wc.status)} ${nameOf(ibv_wc_opcode, wc.opcode)} wr_id ${String(wc.wr_id)} byte_len ${wc.byte_len} flags ${flagList(wc.wc_flags)}}`;
}

/**
 * A QP in a failure: its number in creation order, which the lesson's break-its name whether
 * or not the run knows the learner's variables (a replay does not), then the learner's own name
 * for it, as every pane shows it ("QP #0: a (QP 0x11)"), where that names one QP only; else
 * by creation order alone ("QP #1 (0x11)": rxe0 and rxe1 both start at 0x11, and a helper
 * function names both QPs "qp").
 */
function qpLabel(run: RunRecord, i: number): string {
  const named = learnerQpName(run, i);
  return named ? `QP #${i}: ${named}` : qpRunName(run, i);
}

/** QP #i by the learner's variable, as the panes name it, where that names one QP only. */
function learnerQpName(run: RunRecord, i: number): string | undefined {
  const qp = run.qps[i];
  if (qp?.variable === undefined) return undefined;
  // As the panes name it: with its device where a QP on another device has its number.
  const shared = run.qps.some((o) => o.qp_num === qp.qp_num && o.device !== qp.device);
  const device = shared ? qp.device : undefined;
  const unique =
    run.qps.filter((o) => o.variable === qp.variable && o.qp_num === qp.qp_num && (!device || o.device === device))
      .length === 1;
  return unique ? qpName(qp.qp_num, qp.variable, device) : undefined;
}

/** An MR in a failure: "MR #1: dst" where the learner's name is one MR's, else "MR #1" (as qpLabel, for the break-its). */
function mrLabel(run: RunRecord, i: number): string {
  const named = mrRunName(run, i);
  return named === `MR #${i}` ? named : `MR #${i}: ${named}`;
}

/** MR #i by the learner's variable where that names one MR only, else by creation order. */
function mrRunName(run: RunRecord, i: number): string {
  const v = run.mrs[i]?.variable;
  return v !== undefined && run.mrs.filter((m) => m.variable === v).length === 1 ? v : `MR #${i}`;
}

/** What a goal label calls QP #i after `run`: the learner's name, else its number in creation order and its QPN. */
function qpRunName(run: RunRecord, i: number): string {
  const qp = run.qps[i];
  if (!qp) return `QP #${i}`;
  return learnerQpName(run, i) ?? `QP #${i} (0x${qp.qp_num.toString(16)})`;
}

/** Why a wc check failed: too many matches, or the closest completion and what about it differs. */
function wcFailure(c: WcCheck, run: RunRecord, n: number, count: NumberMatch): Text {
  const list = `${run.wcs.slice(0, 4).map(describeWc).join(", ")}${run.wcs.length > 4 ? ", …" : ""}`;
  const polled = { en: ` (polled ${run.wcs.length}: ${list})`, zh: `（共轮询到 ${run.wcs.length} 个：${list}）` };
  const want = `count ${describeNumber(count)}`;
  const tooMany = !(count.min !== undefined && n < count.min) && !(count.equals !== undefined && n < count.equals);
  if ((n > 0 || count.max !== undefined || count.equals === 0) && tooMany) {
    const seen = expected({ en: `${n} matching completion(s)`, zh: `${n} 个匹配的完成` }, want);
    return { en: seen.en + polled.en, zh: seen.zh + polled.zh };
  }
  if (run.wcs.length === 0) {
    const polls = run.calls.filter((call) => call.verb === "ibv_poll_cq" || call.verb === "verbslab_poll_wait").length;
    // The program did poll: telling it to poll would send the learner after the wrong mistake.
    if (polls > 0 && !run.thrown)
      return {
        en: `no completion arrived: the program polled ${polls} time(s) and got none`,
        zh: `没有任何完成到达：程序轮询了 ${polls} 次，一个也没有得到`,
      };
    return never(run, { en: "no completions were polled", zh: "没有轮询到任何完成" }, "await cq.poll / cq.pollWait");
  }
  const candidates = run.wcs.filter((wc) => onQp(c, wc, run));
  if (candidates.length === 0) {
    const seen = expected(
      { en: `no completion on ${qpLabel(run, c.qp!)}`, zh: `${qpLabel(run, c.qp!)} 上没有完成` },
      want,
    );
    return { en: seen.en + polled.en, zh: seen.zh + polled.zh };
  }
  // The closest completion: the one that breaks the fewest constraints.
  const best = candidates
    .map((wc) => ({ wc, diffs: wcMismatches(c, wc) }))
    .sort((a, b) => a.diffs.length - b.diffs.length)[0]!;
  const where = {
    en: c.qp !== undefined ? ` on ${qpLabel(run, c.qp)}` : "",
    zh: c.qp !== undefined ? `${qpLabel(run, c.qp)} 上` : "",
  };
  if (best.diffs.length === 0)
    return expected({ en: `${n} matching completion(s)${where.en}`, zh: `${where.zh}${n} 个匹配的完成` }, want);
  // Which completion is meant is clear from the goal; what differs comes first.
  const diffs = joined(best.diffs);
  return { en: `closest completion${where.en}: ${diffs.en}`, zh: `${where.zh}最接近的完成：${diffs.zh}` };
}

function errorMatches(c: Extract<Check, { kind: "error" }>, e: RunError | undefined): boolean {
  return !!e && e.verb === c.verb && e.code === c.code && (c.attribute === undefined || e.attribute === c.attribute);
}

/**
 * Something a check looks for never happened: what to write for it, unless the program ended on
 * an error first (then "await cq.poll" would send a learner whose program does poll, after the
 * failed verb, looking for the wrong mistake).
 */
function never(run: RunRecord, what: Text, howTo: string): Text {
  const e = run.thrown;
  if (!e) return { en: `${what.en} (${howTo})`, zh: `${what.zh}（${howTo}）` };
  if (!e.verb)
    return {
      en: `${what.en}: the program stopped first (${e.message})`,
      zh: `${what.zh}：程序先停止了（${e.message}）`,
    };
  const at = describeError(e);
  return { en: `${what.en}: the program stopped first, at ${at.en}`, zh: `${what.zh}：程序先在 ${at.zh} 处停止了` };
}

function describeError(e: RunError): Text {
  const attr = e.attribute ? ` (${e.attribute})` : "";
  return {
    en: `${e.verb ?? "the program"} ${e.code ?? "threw"}${attr}`,
    zh: e.verb ? `${e.verb} ${e.code ?? "出错"}${attr}` : `程序 ${e.code ?? "抛出错误"}${attr}`,
  };
}

/**
 * The driver the run's devices have when it is not rxe ("mlx5"), else undefined: a run on
 * devices that did not name their driver counts as rxe's (the simulator's default, older
 * transcripts).
 */
export function nonRxeDriver(run: Pick<RunRecord, "drivers">): string | undefined {
  return Object.values(run.drivers ?? {}).find((d) => d !== "rxe");
}

/**
 * Judges one check. A failure's detail names the constraint that failed and the value seen,
 * in both languages. An rxe-only check (Check.rxeOnly) on another device that does not hold
 * there passes as an explanation: what rxe does, what the device may do instead, and what it did.
 */
export function evaluateCheck(c: Check, run: RunRecord): CheckResult {
  const judged = judgeCheck(c, run);
  const driver = nonRxeDriver(run);
  if (!c.rxeOnly || judged.passed || driver === undefined) return judged;
  const seen = judged.details ?? same(judged.detail);
  const details = {
    en: `not judged on ${driver} (a fact about rxe): ${c.rxeOnly.en} Here: ${seen.en}`,
    zh: `在 ${driver} 上不判定（这是 rxe 的行为）：${c.rxeOnly.zh} 本设备：${seen.zh}`,
  };
  return { check: c, passed: true, explained: true, detail: details.en, details };
}

function judgeCheck(c: Check, run: RunRecord): CheckResult {
  const result = (passed: boolean, details: Text): CheckResult => ({ check: c, passed, detail: details.en, details });
  switch (c.kind) {
    case "qp_state": {
      const qp = run.qps[c.qp];
      if (!qp)
        return result(false, {
          en: `the program created ${run.qps.length} QP(s); QP #${c.qp} does not exist`,
          zh: `程序创建了 ${run.qps.length} 个 QP；QP #${c.qp} 不存在`,
        });
      const got = qp.attr?.qp_state;
      if (got === undefined)
        return result(false, {
          en: `QP #${c.qp} could not be queried at the end of the run`,
          zh: `运行结束时无法查询 QP #${c.qp}`,
        });
      const seen = {
        en: `${qpLabel(run, c.qp)} is ${nameOf(ibv_qp_state, got)}`,
        zh: `${qpLabel(run, c.qp)} 处于 ${nameOf(ibv_qp_state, got)}`,
      };
      return got === constValue(c.state) ? result(true, seen) : result(false, expected(seen, constName(c.state)));
    }
    case "qp_attr": {
      const qp = run.qps[c.qp];
      if (!qp?.attr)
        return result(false, {
          en: `QP #${c.qp} does not exist or could not be queried`,
          zh: `QP #${c.qp} 不存在或无法查询`,
        });
      const v = field(qp.attr, c.field);
      if (typeof v !== "number")
        return result(false, {
          en: `ibv_query_qp has no numeric field ${c.field}`,
          zh: `ibv_query_qp 没有数值字段 ${c.field}`,
        });
      const bad = mismatch(c.field, v, c.value);
      const qpText = same(`${qpLabel(run, c.qp)} `);
      return bad
        ? result(false, { en: qpText.en + bad.en, zh: qpText.zh + bad.zh })
        : result(true, same(`${qpLabel(run, c.qp)} ${c.field} ${formatValue(v, c.field)}`));
    }
    case "wc": {
      const n = run.wcs.filter((wc) => wcMatches(c, wc, run)).length;
      const count = c.count ?? { min: 1 };
      if (matchNumber(n, count)) return result(true, { en: `${n} matching completion(s)`, zh: `${n} 个匹配的完成` });
      return result(false, wcFailure(c, run, n, count));
    }
    case "error": {
      const hit = run.calls.find((call) => errorMatches(c, call.error)) ?? (errorMatches(c, run.thrown) && run);
      if (hit) return result(true, { en: `${c.verb} failed with ${c.code}`, zh: `${c.verb} 失败，返回 ${c.code}` });
      const attr = c.attribute ? ` (${c.attribute})` : "";
      const want = {
        en: `expected ${c.verb} to fail with ${c.code}${attr}`,
        zh: `期望 ${c.verb} 失败并返回 ${c.code}${attr}`,
      };
      const errors = run.calls.flatMap((call) => (call.error ? [call.error] : []));
      if (errors.length === 0)
        return result(false, { en: `no verb failed, ${want.en}`, zh: `没有任何 verb 失败，${want.zh}` });
      const sameVerb = errors.find((e) => e.verb === c.verb);
      if (sameVerb) {
        const e = describeError(sameVerb);
        return result(false, { en: `${e.en}, ${want.en}`, zh: `${e.zh}，${want.zh}` });
      }
      const seen = errors.map(describeError);
      return result(false, {
        en: `${c.verb} did not fail (errors seen: ${seen.map((e) => e.en).join(", ")}), ${want.en}`,
        zh: `${c.verb} 没有失败（出现的错误：${seen.map((e) => e.zh).join("、")}），${want.zh}`,
      });
    }
    case "verb_count": {
      const n = run.calls.filter((call) => call.verb === c.verb && (!c.ok || call.ok)).length;
      const seen = {
        en: `${c.verb} was called ${n} time(s)${c.ok ? " successfully" : ""}`,
        zh: `${c.verb} ${c.ok ? "成功" : ""}调用了 ${n} 次`,
      };
      return matchNumber(n, c.count) ? result(true, seen) : result(false, expected(seen, describeNumber(c.count)));
    }
    case "counter": {
      const dev = run.counters[c.device];
      if (!dev) return result(false, { en: `the program never opened ${c.device}`, zh: `程序从未打开 ${c.device}` });
      const driver = run.drivers?.[c.device];
      // The device's own name for rxe's counter (mlx5: sent_pkts is port_xmit_packets).
      const own = counterName(driver, c.name as RxeCounterName);
      if (own === undefined) {
        const details = {
          en: `${c.name}: not available on this device (${c.device}, driver ${driver}), so not judged`,
          zh: `${c.name}：本设备（${c.device}，驱动 ${driver}）没有这个计数器，不判定`,
        };
        return { check: c, passed: true, explained: true, detail: details.en, details };
      }
      const label = own === c.name ? c.name : `${own} (rxe's ${c.name})`;
      const delta = dev[own] ?? 0;
      const seen = { en: `${c.device} ${label} changed by ${delta}`, zh: `${c.device} 的 ${label} 变化了 ${delta}` };
      return matchNumber(delta, c.delta) ? result(true, seen) : result(false, expected(seen, describeNumber(c.delta)));
    }
    case "mr_bytes": {
      const mr = run.mrs[c.mr];
      if (!mr)
        return result(false, {
          en: `the program registered ${run.mrs.length} MR(s); MR #${c.mr} does not exist`,
          zh: `程序注册了 ${run.mrs.length} 个 MR；MR #${c.mr} 不存在`,
        });
      const want = expectedBytes(c);
      const off = c.offset ?? 0;
      // The latest read that covers the bytes the check looks at.
      const read = [...mr.reads]
        .reverse()
        .find((r) => r.offset <= off && r.offset + r.bytes.length >= off + want.length);
      if (!read)
        return result(
          false,
          never(
            run,
            {
              en: `the program never read ${mrLabel(run, c.mr)} over those bytes`,
              zh: `程序从未读取 ${mrLabel(run, c.mr)} 的这些字节`,
            },
            "await mr.read()",
          ),
        );
      const got = read.bytes.subarray(off - read.offset, off - read.offset + want.length);
      const equal = got.length === want.length && got.every((b, i) => b === want[i]);
      const shown = (b: Uint8Array) => (c.utf8 !== undefined ? `"${utf8(b)}"` : `0x${bytesHex(b)}`);
      const seen = {
        en: `${mrLabel(run, c.mr)} holds ${shown(got)} at offset ${off}`,
        zh: `${mrLabel(run, c.mr)} 在偏移 ${off} 处为 ${shown(got)}`,
      };
      return equal ? result(true, seen) : result(false, expected(seen, shown(want)));
    }
    case "log": {
      const entry = [...run.logs].reverse().find((l) => l.key === c.key);
      if (!entry)
        return result(
          false,
          never(
            run,
            { en: `the program never logged "${c.key}"`, zh: `程序从未记录 "${c.key}"` },
            `await verbs.log("${c.key}", …)`,
          ),
        );
      const shown = `"${c.key}" = ${safeJson(entry.value)}`;
      if (c.value !== undefined) {
        const v = typeof entry.value === "bigint" ? Number(entry.value) : entry.value;
        if (typeof v !== "number")
          return result(false, {
            en: `${shown} is not a number, expected ${describeNumber(c.value)}`,
            zh: `${shown} 不是数字，期望 ${describeNumber(c.value)}`,
          });
        const bad = mismatch(`"${c.key}" =`, v, c.value, c.key);
        if (bad) return result(false, bad);
      }
      if (c.equals !== undefined && safeJson(entry.value) !== safeJson(c.equals))
        return result(false, expected(shown, safeJson(c.equals)));
      if (c.verbResult !== undefined) {
        const { verb, field: f } = c.verbResult;
        const call = [...run.calls].reverse().find((x) => x.verb === verb && x.ok && x.result !== undefined);
        const reported = call ? field(call.result, f) : undefined;
        if (typeof reported !== "number")
          return result(false, {
            en: `${shown}, but the program never called ${verb} successfully, so the device's ${f} is not known`,
            zh: `${shown}，但程序从未成功调用 ${verb}，无法得知设备的 ${f}`,
          });
        const v = typeof entry.value === "bigint" ? Number(entry.value) : entry.value;
        if (v !== reported)
          return result(false, {
            en: `${shown}, expected = ${reported} (the ${f} ${verb} reported)`,
            zh: `${shown}，期望 = ${reported}（${verb} 报告的 ${f}）`,
          });
      }
      if (c.qpAttr !== undefined) {
        const { qp, field: f } = c.qpAttr;
        const reported = field(run.qps[qp]?.attr, f);
        if (typeof reported !== "number")
          return result(false, {
            en: `${shown}, but QP #${qp}'s ibv_query_qp ${f} is not known (the QP does not exist or could not be queried)`,
            zh: `${shown}，但无法得知 QP #${qp} 的 ibv_query_qp ${f}（QP 不存在或无法查询）`,
          });
        const v = typeof entry.value === "bigint" ? Number(entry.value) : entry.value;
        if (v !== reported)
          return result(false, {
            en: `${shown}, expected = ${reported} (what ibv_query_qp reports for QP #${qp} ${f})`,
            zh: `${shown}，期望 = ${reported}（ibv_query_qp 对 QP #${qp} 报告的 ${f}）`,
          });
      }
      if (c.prefix !== undefined && !(typeof entry.value === "string" && entry.value.startsWith(c.prefix)))
        return result(false, {
          en: `${shown}, expected a string starting with "${c.prefix}"`,
          zh: `${shown}，期望以 "${c.prefix}" 开头的字符串`,
        });
      return result(true, same(shown));
    }
  }
}

/**
 * The one rule for "this run passed the step": every goal on the list passed and the program
 * did not end with an error no goal expected. The checker's verdict and the goal list's
 * "✓ Step passed" (state-machines/lesson.ts stepPassedShown) both use it.
 */
export function verdictPassed(v: Pick<Verdict, "results" | "unexpectedError">): boolean {
  return v.results.every((r) => r.passed) && !v.unexpectedError;
}

/** Judges a step: every check passes, and the program did not end with an error no check expected. */
export function evaluateChecks(checks: Check[], run: RunRecord): Verdict {
  const results = checks.map((c) => evaluateCheck(c, run));
  const expected = run.thrown && checks.some((c) => c.kind === "error" && errorMatches(c, run.thrown));
  const unexpectedError = run.thrown && !expected ? run.thrown : undefined;
  return {
    passed: verdictPassed({ results, ...(unexpectedError && { unexpectedError }) }),
    results,
    ...(unexpectedError && { unexpectedError }),
    qpNames: run.qps.map((_, i) => qpRunName(run, i)),
    mrNames: run.mrs.map((_, i) => mrRunName(run, i)),
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

/**
 * A goal's text: the author's when given, else generated from the whole check. `text` is the
 * step's text in that language, so numbers are written in the base it uses (hex for 0x124).
 * `names` (a Verdict's) name the QPs and MRs a generated label counts by creation order.
 */
/** The bytes an mr_bytes check wants (its UTF-8 text or hex): the goal list and the Memory tab show them. */
export function expectedBytes(c: MrBytesCheck): Uint8Array {
  return c.hex !== undefined ? hexBytes(c.hex) : new TextEncoder().encode(c.utf8 ?? "");
}

export function describeCheck(c: Check, lang: Language, text = "", names?: RunNames): string {
  const label = c.goal ? c.goal[lang] : generated(c, text, names)[lang];
  return c.rxeOnly ? `${RXE_ONLY_PREFIX[lang]}${label}` : label;
}

/** What a judged run called its QPs and MRs (a Verdict carries them). */
export type RunNames = Pick<Verdict, "qpNames" | "mrNames">;

/** How the goal list marks an rxe-only check (Check.rxeOnly). */
export const RXE_ONLY_PREFIX: Text = { en: "on rxe: ", zh: "在 rxe 上：" };

function constName(ref: ConstRef): string {
  return typeof ref === "string" ? ref : String(ref);
}

function generated(c: Check, text: string, names?: RunNames): Text {
  const num = (m: NumberMatch, fieldName = "") => describeNumber(m, fieldName, text);
  const qp = (i: number) => names?.qpNames?.[i] ?? `QP #${i}`;
  const mr = (i: number) => names?.mrNames?.[i] ?? `MR #${i}`;
  switch (c.kind) {
    case "qp_state":
      return {
        en: `${qp(c.qp)} ends in ${constName(c.state)}`,
        zh: `${qp(c.qp)} 最终处于 ${constName(c.state)}`,
      };
    case "qp_attr":
      return {
        en: `ibv_query_qp: ${qp(c.qp)} ${c.field} ${num(c.value, c.field)}`,
        zh: `ibv_query_qp：${qp(c.qp)} 的 ${c.field} ${num(c.value, c.field)}`,
      };
    case "wc": {
      const parts = [
        c.status !== undefined ? constName(c.status) : "",
        c.opcode !== undefined ? `opcode ${constName(c.opcode)}` : "",
        c.wr_id !== undefined ? `wr_id ${formatValue(c.wr_id, "wr_id", text)}` : "",
        c.byte_len !== undefined ? `byte_len ${num(c.byte_len, "byte_len")}` : "",
        c.imm_data !== undefined ? `imm_data ${formatValue(c.imm_data, "imm_data", text)}` : "",
        c.wc_flags_set?.length ? `wc_flags ${c.wc_flags_set.map(constName).join("|")}` : "",
      ].filter(Boolean);
      const clear = c.wc_flags_clear?.length ? c.wc_flags_clear.map(constName).join("|") : "";
      const on = { en: c.qp !== undefined ? ` on ${qp(c.qp)}` : "", zh: c.qp !== undefined ? `${qp(c.qp)} 上` : "" };
      const what = {
        en: parts.join(", ") + (clear ? `${parts.length ? ", " : ""}without ${clear}` : ""),
        zh: parts.join("，") + (clear ? `${parts.length ? "，" : ""}不带 ${clear}` : ""),
      };
      const count = c.count ?? { min: 1 };
      if (count.equals === 0)
        return {
          en: `No work completion${on.en}${what.en ? `: ${what.en}` : ""}`,
          zh: `${on.zh}没有工作完成（WC）${what.zh ? `：${what.zh}` : ""}`,
        };
      return {
        en: `A work completion${on.en}${what.en ? `: ${what.en}` : ""}${c.count ? ` (count ${num(c.count)})` : ""}`,
        zh: `${on.zh}的工作完成（WC）${what.zh ? `：${what.zh}` : ""}${c.count ? `（count ${num(c.count)}）` : ""}`,
      };
    }
    case "error":
      return {
        en: `${c.verb} fails with ${c.code}${c.attribute ? ` (${c.attribute})` : ""}`,
        zh: `${c.verb} 失败，返回 ${c.code}${c.attribute ? `（${c.attribute}）` : ""}`,
      };
    case "verb_count":
      return {
        en: `${c.verb} ${c.ok ? "succeeds" : "is called"} ${num(c.count).replace(/^= /, "")} time(s)`,
        zh: `${c.verb} ${c.ok ? "成功" : ""}调用次数 ${num(c.count)}`,
      };
    case "counter":
      return {
        en: `${c.device} counter ${c.name} changes by ${num(c.delta)}`,
        zh: `${c.device} 的计数器 ${c.name} 变化量 ${num(c.delta)}`,
      };
    case "mr_bytes": {
      const bytes = c.utf8 !== undefined ? `"${c.utf8}"` : `0x${c.hex}`;
      return {
        en: `${mr(c.mr)} holds ${bytes} at offset ${c.offset ?? 0}`,
        zh: `${mr(c.mr)} 在偏移（offset）${c.offset ?? 0} 处的内容为 ${bytes}`,
      };
    }
    case "log": {
      const want = [
        c.value !== undefined ? num(c.value, c.key) : "",
        c.equals !== undefined ? `= ${safeJson(c.equals)}` : "",
        c.prefix !== undefined ? `starting with "${c.prefix}"` : "",
        c.qpAttr !== undefined ? `= ${qp(c.qpAttr.qp)}'s ${c.qpAttr.field} from ibv_query_qp` : "",
        c.verbResult !== undefined ? `= the ${c.verbResult.field} ${c.verbResult.verb} returned` : "",
      ]
        .filter(Boolean)
        .join(" ");
      const zhWant = want
        .replace(/starting with "(.*)"/, '（以 "$1" 开头）')
        .replace(/= (.+)'s (\S+) from ibv_query_qp/, "= ibv_query_qp 报告的 $1 的 $2")
        .replace(/= the (\S+) (\S+) returned/, "= $2 返回的 $1");
      return {
        en: `The program logs "${c.key}" ${want}`.trim(),
        zh: `程序记录 "${c.key}" ${zhWant}`.trim(),
      };
    }
  }
}
