/**
 * Structural validation of lesson.json and of a lesson folder's file list, with problems
 * reported as "where: what" strings a lesson author can act on (rustlings-style: refuse a
 * missing hint, a duplicate id, a stray file).
 */
import { enums } from "../verbs/constants.js";
import { RXE_COUNTER_NAMES } from "../verbs/types.js";
import { CHECK_KINDS, LANGUAGES, LESSON_SCHEMA_VERSION, type LessonFile } from "./schema.js";

const KEBAB = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const LEVELS = ["beginner", "intermediate", "advanced"];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every constant name verbs.h defines, for checking ConstRefs. */
const CONST_NAMES = new Set(Object.values(enums).flatMap((group) => Object.keys(group)));

class Problems {
  readonly list: string[] = [];
  add(where: string, what: string): void {
    this.list.push(`${where}: ${what}`);
  }
  text(where: string, v: unknown, opts: { optional?: boolean } = {}): void {
    if (v === undefined && opts.optional) return;
    if (!isObj(v)) return this.add(where, "must be { en, zh }");
    for (const lang of LANGUAGES) {
      const s = v[lang];
      if (typeof s !== "string" || s.trim() === "") this.add(`${where}.${lang}`, "missing or empty");
    }
    // Chinese text that contains no CJK character is almost surely an untranslated copy.
    if (typeof v.zh === "string" && v.zh.trim() !== "" && !/[\u4e00-\u9fff]/.test(v.zh)) {
      this.add(`${where}.zh`, "has no Chinese characters");
    }
    for (const key of Object.keys(v))
      if (!LANGUAGES.includes(key as never)) this.add(where, `unknown language "${key}"`);
  }
  number(where: string, v: unknown): void {
    if (!isObj(v)) return this.add(where, "must be { equals?, min?, max?, mask? }");
    const keys = Object.keys(v);
    if (keys.length === 0) this.add(where, "names no bound");
    for (const k of keys) {
      if (!["equals", "min", "max", "mask"].includes(k)) this.add(where, `unknown bound "${k}"`);
      else if (typeof v[k] !== "number" || !Number.isFinite(v[k])) this.add(`${where}.${k}`, "must be a number");
    }
  }
  constRef(where: string, v: unknown): void {
    if (typeof v === "number" && Number.isInteger(v)) return;
    if (typeof v === "string" && CONST_NAMES.has(v)) return;
    this.add(where, `must be a verbs.h constant name or an integer (got ${JSON.stringify(v)})`);
  }
}

function checkChecks(p: Problems, where: string, checks: unknown): void {
  if (!Array.isArray(checks) || checks.length === 0) return p.add(where, "needs at least one check");
  checks.forEach((c, i) => {
    const at = `${where}[${i}]`;
    if (!isObj(c)) return p.add(at, "must be an object");
    if (!CHECK_KINDS.includes(c.kind as never)) return p.add(at, `unknown kind ${JSON.stringify(c.kind)}`);
    p.text(`${at}.goal`, c.goal, { optional: true });
    p.text(`${at}.rxeOnly`, c.rxeOnly, { optional: true });
    const qpIndex = (key: string, optional = false) => {
      if (c[key] === undefined && optional) return;
      if (typeof c[key] !== "number" || !Number.isInteger(c[key]) || (c[key] as number) < 0)
        p.add(`${at}.${key}`, "must be a QP index (0 = the first QP created)");
    };
    const known = (keys: string[]) => {
      for (const k of Object.keys(c))
        if (![...keys, "kind", "goal", "rxeOnly"].includes(k)) p.add(at, `unknown field "${k}"`);
    };
    switch (c.kind) {
      case "qp_state":
        known(["qp", "state"]);
        qpIndex("qp");
        p.constRef(`${at}.state`, c.state);
        break;
      case "qp_attr":
        known(["qp", "field", "value"]);
        qpIndex("qp");
        if (typeof c.field !== "string" || !/^[a-z_]+(\.[a-z_]+)*$/.test(c.field)) p.add(`${at}.field`, "bad field");
        p.number(`${at}.value`, c.value);
        break;
      case "wc":
        known(["qp", "status", "opcode", "byte_len", "wc_flags_set", "wc_flags_clear", "imm_data", "wr_id", "count"]);
        qpIndex("qp", true);
        if (c.status !== undefined) p.constRef(`${at}.status`, c.status);
        if (c.opcode !== undefined) p.constRef(`${at}.opcode`, c.opcode);
        if (c.byte_len !== undefined) p.number(`${at}.byte_len`, c.byte_len);
        if (c.count !== undefined) p.number(`${at}.count`, c.count);
        for (const key of ["wc_flags_set", "wc_flags_clear"]) {
          if (c[key] === undefined) continue;
          if (!Array.isArray(c[key])) p.add(`${at}.${key}`, "must be a list");
          else (c[key] as unknown[]).forEach((f, j) => p.constRef(`${at}.${key}[${j}]`, f));
        }
        break;
      case "error":
        known(["verb", "code", "attribute"]);
        // rdma_*: librdmacm's verbs (verbs/cm.ts).
        if (typeof c.verb !== "string" || !/^(ibv|rdma)_/.test(c.verb))
          p.add(`${at}.verb`, "must be an ibv_* (or rdma_*) name");
        if (typeof c.code !== "string" || !/^E[A-Z]+$/.test(c.code)) p.add(`${at}.code`, "must be an errno name");
        break;
      case "verb_count":
        known(["verb", "count", "ok"]);
        if (typeof c.verb !== "string" || !/^(ibv|rdma|verbslab)_[a-z_]+$/.test(c.verb))
          p.add(`${at}.verb`, "must be an ibv_*, rdma_* or verbslab_* name");
        p.number(`${at}.count`, c.count);
        break;
      case "counter":
        known(["device", "name", "delta"]);
        if (typeof c.device !== "string") p.add(`${at}.device`, "must be a device name");
        if (typeof c.name !== "string" || !(RXE_COUNTER_NAMES as readonly string[]).includes(c.name))
          p.add(`${at}.name`, `must be one of rxe's counter names (${RXE_COUNTER_NAMES.join(", ")})`);
        p.number(`${at}.delta`, c.delta);
        break;
      case "mr_bytes":
        known(["mr", "offset", "utf8", "hex"]);
        if (typeof c.mr !== "number" || c.mr < 0) p.add(`${at}.mr`, "must be an MR index");
        if ((c.utf8 === undefined) === (c.hex === undefined)) p.add(at, "needs exactly one of utf8 and hex");
        if (c.hex !== undefined && (typeof c.hex !== "string" || !/^([0-9a-f]{2})+$/.test(c.hex)))
          p.add(`${at}.hex`, "must be lower-case hex bytes");
        break;
      case "log":
        known(["key", "value", "equals", "present", "prefix", "qpAttr", "verbResult"]);
        if (
          c.verbResult !== undefined &&
          !(
            isObj(c.verbResult) &&
            typeof c.verbResult.verb === "string" &&
            c.verbResult.verb.startsWith("ibv_query_") &&
            typeof c.verbResult.field === "string" &&
            /^[a-z_]+(\.[a-z_]+)*$/.test(c.verbResult.field)
          )
        )
          p.add(`${at}.verbResult`, "must be { verb: an ibv_query_* verb, field: a field of its answer }");
        if (
          c.qpAttr !== undefined &&
          !(
            isObj(c.qpAttr) &&
            Number.isInteger(c.qpAttr.qp) &&
            (c.qpAttr.qp as number) >= 0 &&
            typeof c.qpAttr.field === "string" &&
            /^[a-z_]+(\.[a-z_]+)*$/.test(c.qpAttr.field)
          )
        )
          p.add(`${at}.qpAttr`, "must be { qp: a QP index, field: an ibv_query_qp field }");
        if (typeof c.key !== "string" || c.key === "") p.add(`${at}.key`, "must be a string");
        if (c.value !== undefined) p.number(`${at}.value`, c.value);
        if (c.prefix !== undefined && (typeof c.prefix !== "string" || c.prefix === ""))
          p.add(`${at}.prefix`, "must be a non-empty string");
        if (
          c.value === undefined &&
          c.equals === undefined &&
          c.prefix === undefined &&
          c.qpAttr === undefined &&
          c.verbResult === undefined &&
          c.present !== true
        )
          p.add(at, "needs value, equals, prefix, qpAttr, verbResult or present: true");
        break;
    }
  });
}

/** Problems with a parsed lesson.json (empty when it is valid). */
export function validateLessonFile(json: unknown, where = "lesson.json"): string[] {
  const p = new Problems();
  if (!isObj(json)) {
    p.add(where, "must be an object");
    return p.list;
  }
  const known = ["schemaVersion", "id", "title", "level", "prerequisites", "intro", "steps"];
  for (const k of Object.keys(json)) if (!known.includes(k)) p.add(where, `unknown field "${k}"`);
  if (json.schemaVersion !== LESSON_SCHEMA_VERSION)
    p.add(`${where}.schemaVersion`, `must be ${LESSON_SCHEMA_VERSION} (got ${JSON.stringify(json.schemaVersion)})`);
  if (typeof json.id !== "string" || !KEBAB.test(json.id)) p.add(`${where}.id`, "must be kebab-case");
  p.text(`${where}.title`, json.title);
  p.text(`${where}.intro`, json.intro);
  if (!LEVELS.includes(json.level as string)) p.add(`${where}.level`, `must be one of ${LEVELS.join(", ")}`);
  if (!Array.isArray(json.prerequisites) || json.prerequisites.some((x) => typeof x !== "string"))
    p.add(`${where}.prerequisites`, "must be a list of lesson ids");
  if (!Array.isArray(json.steps) || json.steps.length === 0) {
    p.add(`${where}.steps`, "needs at least one step");
    return p.list;
  }
  const stepIds = new Set<string>();
  json.steps.forEach((s, i) => {
    const at = `${where}.steps[${i}]`;
    if (!isObj(s)) return p.add(at, "must be an object");
    const stepKnown = ["id", "title", "checks", "hints", "breakIt", "backends", "nativeOnly", "timeoutMs"];
    for (const k of Object.keys(s)) if (!stepKnown.includes(k)) p.add(at, `unknown field "${k}"`);
    if (typeof s.id !== "string" || !KEBAB.test(s.id)) p.add(`${at}.id`, "must be kebab-case");
    else if (stepIds.has(s.id)) p.add(`${at}.id`, `duplicate step id "${s.id}"`);
    else stepIds.add(s.id);
    p.text(`${at}.title`, s.title);
    checkChecks(p, `${at}.checks`, s.checks);
    if (!Array.isArray(s.hints) || s.hints.length === 0) p.add(`${at}.hints`, "needs at least one hint");
    else s.hints.forEach((h, j) => p.text(`${at}.hints[${j}]`, h));
    if (s.backends !== undefined && s.backends !== "any" && s.backends !== "native")
      p.add(`${at}.backends`, 'must be "any" or "native"');
    if (s.backends === "native") p.text(`${at}.nativeOnly`, s.nativeOnly);
    if (s.timeoutMs !== undefined && (typeof s.timeoutMs !== "number" || s.timeoutMs <= 0))
      p.add(`${at}.timeoutMs`, "must be a positive number");
    if (s.breakIt !== undefined) {
      if (!Array.isArray(s.breakIt)) p.add(`${at}.breakIt`, "must be a list");
      else {
        const ids = new Set<string>();
        s.breakIt.forEach((b, j) => {
          const bat = `${at}.breakIt[${j}]`;
          if (!isObj(b)) return p.add(bat, "must be an object");
          for (const k of Object.keys(b))
            if (!["id", "title", "observe", "checks", "stepFails", "rxeOnly"].includes(k))
              p.add(bat, `unknown field "${k}"`);
          p.text(`${bat}.rxeOnly`, b.rxeOnly, { optional: true });
          if (typeof b.id !== "string" || !KEBAB.test(b.id)) p.add(`${bat}.id`, "must be kebab-case");
          else if (ids.has(b.id)) p.add(`${bat}.id`, `duplicate break-it id "${b.id}"`);
          else ids.add(b.id);
          p.text(`${bat}.title`, b.title);
          p.text(`${bat}.observe`, b.observe);
          checkChecks(p, `${bat}.checks`, b.checks);
          if (b.stepFails !== undefined) {
            const goals = Array.isArray(s.checks) ? s.checks.length : 0;
            if (!Array.isArray(b.stepFails) || b.stepFails.length === 0)
              p.add(`${bat}.stepFails`, "must be a non-empty list of { goal, detail }");
            else
              b.stepFails.forEach((f, k) => {
                const fat = `${bat}.stepFails[${k}]`;
                if (!isObj(f)) return p.add(fat, "must be { goal, detail }");
                for (const key of Object.keys(f))
                  if (key !== "goal" && key !== "detail") p.add(fat, `unknown field "${key}"`);
                if (typeof f.goal !== "number" || !Number.isInteger(f.goal) || f.goal < 0 || f.goal >= goals)
                  p.add(`${fat}.goal`, `must be the index of one of the step's ${goals} checks`);
                if (typeof f.detail !== "string" || f.detail === "")
                  p.add(`${fat}.detail`, "must be a non-empty string");
              });
          }
        });
      }
    }
  });
  return p.list;
}

/** The files a lesson folder must hold, exactly (anything else is stray). */
export function expectedFiles(lesson: LessonFile): string[] {
  const files = ["lesson.json"];
  lesson.steps.forEach((s, i) => {
    const n = i + 1;
    for (const lang of LANGUAGES) files.push(`step-${n}.${lang}.md`);
    files.push(`step-${n}.starter.ts`, `step-${n}.solution.ts`);
    for (const b of s.breakIt ?? []) files.push(`step-${n}.break-${b.id}.ts`);
  });
  return files;
}

/** Problems with a lesson's set of files: missing ones and stray ones. */
export function validateFileList(folder: string, lesson: LessonFile, present: string[]): string[] {
  const expected = new Set(expectedFiles(lesson));
  const have = new Set(present);
  const out: string[] = [];
  for (const f of expected) if (!have.has(f)) out.push(`${folder}/${f}: missing`);
  for (const f of have) if (!expected.has(f)) out.push(`${folder}/${f}: stray file (not named by lesson.json)`);
  return out;
}

/** Problems with a learner program's text that the type checker would not catch. */
export function validateProgram(where: string, code: string): string[] {
  const out: string[] = [];
  if (!/export default async function main\(verbs: Verbs\)/.test(code))
    out.push(`${where}: must declare \`export default async function main(verbs: Verbs)\``);
  if (!/from "verbslab"/.test(code)) out.push(`${where}: must import from "verbslab"`);
  // Every verb is awaited: a bare `qp.postSend(` with no `await` in front is a fire-and-forget call.
  const lines = code.split("\n");
  lines.forEach((line, i) => {
    const m =
      /(?<![\w.])(?:await\s+)?[\w.\]\[]+\.(postSend|postRecv|modify|regMr|createQp|createCq|allocPd|pollWait|poll|openDevice|query\w*|sleep|dereg|destroy|dealloc|createAh|reqNotify|getCqEvent)\(/.exec(
        line,
      );
    if (m && !/await\s/.test(line.slice(0, m.index + m[0].length)) && !/^\s*(\/\/|\*)/.test(line))
      out.push(`${where}:${i + 1}: \`${m[1]}\` is not awaited`);
  });
  return out;
}
