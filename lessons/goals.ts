/**
 * A learner must always know what "done" looks like: every value a goal check constrains
 * (a wr_id, a log key, bytes, a PSN, a count, a status) is stated by the goal's label, in
 * both languages and in the base the step text uses. `npm run lessons:check` reports each
 * gap as "<lesson> step N "<id>" check i (<kind>): …" (lessons/course-check.ts).
 */
import { decimalIn, describeCheck, formatValue, goalContext, hexIn, prefersHex } from "./checks.js";
import {
  LANGUAGES,
  type Check,
  type ConstRef,
  type Language,
  type Lesson,
  type NumberMatch,
  type Step,
} from "./schema.js";

/** One constraint of a check, as a learner would read it, and the spellings that state it. */
export interface Constraint {
  /** How the problem report names it: `wr_id 200`, `log key "index0_is_link_local"`. */
  what: string;
  /** A field name the label must also name (`wr_id`, `sq_psn`), if any. */
  field?: string;
  value: { number: number; hexField: boolean } | { name: string } | { literal: string };
}

const HEX_FIELD = /psn|imm_data|qkey|qp_num|rkey|lkey/;

/** Words that state a small count without its digit ("no completion", "once", "一次"). */
const NUMBER_WORDS: Record<number, Record<Language, RegExp>> = {
  0: { en: /\b(no|none|zero|nothing)\b/i, zh: /没有|无|零/ },
  1: { en: /\b(one|once|single)\b/i, zh: /一/ },
  2: { en: /\b(two|twice|both)\b/i, zh: /两|二/ },
};

/** Other ways of naming a constant ("successfully", "成功" for IBV_WC_SUCCESS). */
const NAME_WORDS: Record<string, Record<Language, RegExp>> = {
  IBV_WC_SUCCESS: { en: /succe(ss|ed)/i, zh: /成功/ },
};

function numberConstraints(label: string, m: NumberMatch, field: string | undefined, hexField = false): Constraint[] {
  const out: Constraint[] = [];
  for (const [bound, sym] of [
    ["equals", "="],
    ["min", "≥"],
    ["max", "≤"],
  ] as const) {
    const v = m[bound];
    if (v === undefined) continue;
    out.push({
      what: `${label} ${sym} ${formatValue(v, hexField ? "psn" : "")}`,
      ...(field !== undefined && { field }),
      value: { number: v, hexField },
    });
  }
  return out;
}

const name = (ref: ConstRef, what: string): Constraint =>
  typeof ref === "number"
    ? { what: `${what} ${ref}`, value: { number: ref, hexField: false } }
    : { what: `${what} ${ref}`, value: { name: ref } };

/**
 * Every constraint a check applies, except which QP or MR it looks at (labels name those by
 * role, "b's RECV", and the step text says which object is which).
 */
export function constraintsOf(c: Check): Constraint[] {
  switch (c.kind) {
    case "qp_state":
      return [name(c.state, "state")];
    case "qp_attr":
      return numberConstraints(c.field, c.value, c.field, HEX_FIELD.test(c.field));
    case "wc": {
      const out: Constraint[] = [];
      if (c.status !== undefined) out.push(name(c.status, "status"));
      if (c.opcode !== undefined) out.push(name(c.opcode, "opcode"));
      if (c.wr_id !== undefined)
        out.push({ what: `wr_id ${c.wr_id}`, field: "wr_id", value: { number: c.wr_id, hexField: false } });
      if (c.byte_len !== undefined) out.push(...numberConstraints("byte_len", c.byte_len, "byte_len"));
      if (c.imm_data !== undefined)
        out.push({
          what: `imm_data ${formatValue(c.imm_data, "imm_data")}`,
          field: "imm_data",
          value: { number: c.imm_data, hexField: true },
        });
      for (const f of c.wc_flags_set ?? []) out.push(name(f, "flag"));
      for (const f of c.wc_flags_clear ?? []) out.push(name(f, "flag (clear)"));
      if (c.count !== undefined) out.push(...numberConstraints("count", c.count, undefined));
      return out;
    }
    case "error":
      return [
        { what: `verb ${c.verb}`, value: { literal: c.verb } },
        { what: `error ${c.code}`, value: { literal: c.code } },
        ...(c.attribute !== undefined ? [{ what: `attribute ${c.attribute}`, value: { literal: c.attribute } }] : []),
      ];
    case "verb_count":
      return [
        { what: `verb ${c.verb}`, value: { literal: c.verb } },
        ...numberConstraints("call count", c.count, undefined),
      ];
    case "counter":
      return [
        { what: `device ${c.device}`, value: { literal: c.device } },
        { what: `counter ${c.name}`, value: { literal: c.name } },
        ...numberConstraints(`${c.name} delta`, c.delta, undefined),
      ];
    case "mr_bytes": {
      const out: Constraint[] = [
        c.utf8 !== undefined
          ? { what: `bytes "${c.utf8}"`, value: { literal: c.utf8 } }
          : { what: `bytes 0x${c.hex}`, value: { literal: c.hex! } },
      ];
      if (c.offset)
        out.push({ what: `offset ${c.offset}`, field: "offset", value: { number: c.offset, hexField: false } });
      return out;
    }
    case "log": {
      const out: Constraint[] = [{ what: `log key "${c.key}"`, value: { literal: c.key } }];
      if (c.value !== undefined) out.push(...numberConstraints(`"${c.key}"`, c.value, undefined));
      if (c.equals !== undefined)
        out.push({ what: `"${c.key}" = ${JSON.stringify(c.equals)}`, value: { literal: JSON.stringify(c.equals) } });
      if (c.prefix !== undefined)
        out.push({ what: `"${c.key}" starting with "${c.prefix}"`, value: { literal: c.prefix } });
      return out;
    }
  }
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const squash = (s: string) => s.replace(/\s+/g, "");

/** Whether `s` states the constraint's value (not its field name). `words`: also accept "no", "once", "successfully". */
function statesValue(k: Constraint, s: string, lang: Language, words: boolean): boolean {
  const v = k.value;
  if ("number" in v)
    return decimalIn(v.number, s) || hexIn(v.number, s) || (words && !!NUMBER_WORDS[v.number]?.[lang].test(s));
  if ("literal" in v) return s.includes(v.literal) || squash(s).includes(squash(v.literal));
  if (s.includes(v.name)) return true;
  // IBV_WC_RDMA_WRITE is also "RDMA_WRITE" or "RDMA WRITE".
  const short = v.name.replace(/^IBV_[A-Z]+_/, "");
  if (new RegExp(`(?<![A-Z_])(${escape(short)}|${escape(short.replace(/_/g, " "))})(?![A-Z_])`).test(s)) return true;
  return words && !!NAME_WORDS[v.name]?.[lang].test(s);
}

/**
 * The label's problem with one constraint, if any: not stated at all, field not named, or a
 * number in decimal where the step writes it in hex. `text` is what the learner reads (the step
 * text; hints do not count), `base` the text and starter code that decide the base (`prefersHex`).
 */
export function labelProblem(
  k: Constraint,
  label: string,
  text: string,
  lang: Language,
  base = text,
): string | undefined {
  if (!statesValue(k, label, lang, true)) {
    const inText = statesValue(k, text, lang, false);
    return inText
      ? `the goal does not state ${k.what} (only the step text does; the goal list must show every constraint)`
      : `${k.what} appears neither in the step text nor in the goal`;
  }
  if (k.field !== undefined && !label.includes(k.field))
    return `the goal states the value but not the field: ${k.what}`;
  const v = k.value;
  if ("number" in v && v.number >= 10 && decimalIn(v.number, label) && !hexIn(v.number, label)) {
    if (prefersHex(v.number, v.hexField ? "psn" : "", base))
      return `the goal gives ${v.number} in decimal where the text uses hex (0x${v.number.toString(16)})`;
  }
  return undefined;
}

function checkProblems(
  where: string,
  checks: Check[],
  texts: Record<Language, string>,
  step: { text: Record<Language, string>; starter: string },
): string[] {
  const out: string[] = [];
  checks.forEach((c, i) => {
    for (const lang of LANGUAGES) {
      // The label exactly as the goal list shows it (LessonPane passes the same context).
      const base = goalContext(step, lang);
      const label = describeCheck(c, lang, base);
      for (const k of constraintsOf(c)) {
        const problem = labelProblem(k, label, texts[lang], lang, base);
        if (problem)
          out.push(
            `${where} check ${i} (${c.kind}) [${lang}${c.goal ? "" : ", generated"}]: ${problem} — goal: "${label}"`,
          );
      }
    }
  });
  return out;
}

/** Every goal of a lesson (step goals and break-it expectations) that leaves a constraint unstated. */
export function goalProblems(lesson: Lesson): string[] {
  const out: string[] = [];
  for (const step of lesson.steps) {
    const where = `${lesson.folder} step ${step.number} "${step.id}"`;
    out.push(...checkProblems(where, step.checks, step.text, step));
    for (const b of step.breakIt ?? []) {
      const texts = stepAndBreakItText(step, b.id);
      out.push(...checkProblems(`${where} break-it "${b.id}"`, b.checks, texts, step));
    }
  }
  return out;
}

/** What a learner reads while a break-it variation is loaded: the step text, its title and what to observe. */
function stepAndBreakItText(step: Step, id: string): Record<Language, string> {
  const b = step.breakIt!.find((x) => x.id === id)!;
  return {
    en: `${step.text.en}\n${b.title.en}\n${b.observe.en}`,
    zh: `${step.text.zh}\n${b.title.zh}\n${b.observe.zh}`,
  };
}
