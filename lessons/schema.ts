/**
 * The lesson format. A lesson is one folder (`lessons/06-first-message/`) holding a
 * `lesson.json` (this file's `LessonFile`) and, per step N (1-based):
 *
 *   step-N.en.md, step-N.zh.md     the explanation, English and Simplified Chinese
 *   step-N.starter.ts               what the learner edits
 *   step-N.solution.ts              the reference solution (replayed by `npm run lessons:check`)
 *   step-N.break-<id>.ts            one file per "break it" variation
 *
 * Learner programs are ES modules: `export default async function main(verbs: Verbs)`.
 * Goal checks are data (`Check`), evaluated by lessons/checks.ts over what a run recorded.
 * Nothing in a lesson is a code path of the app: the app, the CLI and the checker all read
 * the same files.
 */

/** Bump when the shape changes; the loader refuses any other version. */
export const LESSON_SCHEMA_VERSION = 2;

/** Every learner-facing string exists in both languages. */
export interface Text {
  en: string;
  zh: string;
}

export const LANGUAGES = ["en", "zh"] as const;
export type Language = (typeof LANGUAGES)[number];

/** A numeric constant, written either as its verbs.h name ("IBV_WC_SUCCESS") or as the number. */
export type ConstRef = string | number;

/** Bounds on a number: every given bound must hold. */
export interface NumberMatch {
  equals?: number;
  min?: number;
  max?: number;
  /** Exact match after masking: `(value & mask) === equals` (flags words). */
  mask?: number;
}

/**
 * Which QP a check looks at: the index in creation order within the run (0 is the first
 * QP the program created), so checks stay valid whatever QPN the device hands out.
 */
export type QpRef = number;

interface CheckBase {
  /** What the learner should achieve, shown in the goal list. Generated from the data when absent. */
  goal?: Text;
}

/** `ibv_query_qp(qp).qp_state` at the end of the run. */
export interface QpStateCheck extends CheckBase {
  kind: "qp_state";
  qp: QpRef;
  state: ConstRef;
}

/** One attribute of `ibv_query_qp` at the end of the run (`path_mtu`, `sq_psn`, `max_rd_atomic`, `cap.max_send_wr`, …). */
export interface QpAttrCheck extends CheckBase {
  kind: "qp_attr";
  qp: QpRef;
  /** A field of struct ibv_qp_attr; dotted for nested fields (`ah_attr.grh.hop_limit`). */
  field: string;
  value: NumberMatch;
}

/** A work completion the program polled. Passes when the number of matching WCs is within `count` (default: at least 1). */
export interface WcCheck extends CheckBase {
  kind: "wc";
  /** Only WCs whose qp_num is this QP's number. */
  qp?: QpRef;
  status?: ConstRef;
  opcode?: ConstRef;
  byte_len?: NumberMatch;
  /** Flags that must all be set (names from ibv_wc_flags or a number). */
  wc_flags_set?: ConstRef[];
  /** Flags that must all be clear. */
  wc_flags_clear?: ConstRef[];
  imm_data?: number;
  wr_id?: number;
  count?: NumberMatch;
}

/**
 * A verb failed with this errno (the program may have caught it). A program that ends by
 * throwing passes only if some error check matches the error it threw.
 */
export interface ErrorCheck extends CheckBase {
  kind: "error";
  /** The C function, as VerbsError.verb says it (`ibv_reg_mr`). */
  verb: string;
  code: string;
  /** The attribute the error names (`IBV_QP_DEST_QPN`), when the check cares. */
  attribute?: string;
}

/** A verb was called this many times (successful or not). */
export interface VerbCountCheck extends CheckBase {
  kind: "verb_count";
  verb: string;
  count: NumberMatch;
  /** Count only calls that succeeded. */
  ok?: boolean;
}

/** The change of one rxe hardware counter (hw_counters) over the run. */
export interface CounterCheck extends CheckBase {
  kind: "counter";
  device: string;
  name: string;
  delta: NumberMatch;
}

/**
 * Bytes in a registered MR, as the program last read them (`await mr.read()`): checks are
 * judged from the transcript alone, and MR memory lives with the backend, so a lesson
 * program reads the buffer it wants checked (which is also what a learner would look at).
 */
export interface MrBytesCheck extends CheckBase {
  kind: "mr_bytes";
  /** Index in creation order of the MRs the program registered. */
  mr: number;
  offset?: number;
  /** Expected bytes as text (UTF-8), or as hex ("6869"). Exactly one of the two. */
  utf8?: string;
  hex?: string;
}

/**
 * A value the program logged with `verbs.log(key, value)`. With several logs of one key,
 * the last one counts. Numbers are matched with `value`, anything else with `equals` (JSON).
 */
export interface LogCheck extends CheckBase {
  kind: "log";
  key: string;
  value?: NumberMatch;
  equals?: unknown;
  /** Only that the key was logged. */
  present?: boolean;
  /** The logged value is a string starting with this (`"::ffff:"`, an IPv4-mapped GID). */
  prefix?: string;
}

export type Check =
  QpStateCheck | QpAttrCheck | WcCheck | ErrorCheck | VerbCountCheck | CounterCheck | MrBytesCheck | LogCheck;

export const CHECK_KINDS = [
  "qp_state",
  "qp_attr",
  "wc",
  "error",
  "verb_count",
  "counter",
  "mr_bytes",
  "log",
] as const satisfies readonly Check["kind"][];

/** A "break it" variation: a deliberate pitfall, with what the learner should see (also checked). */
export interface BreakIt {
  /** Kebab-case; the code lives in `step-N.break-<id>.ts`. */
  id: string;
  title: Text;
  /** What happens and why, shown after the learner runs it. */
  observe: Text;
  checks: Check[];
  /**
   * The step goals this mistake fails, and what the learner reads under each (a substring of
   * its failure detail): `lessons:check` replays the variation against the step's own checks
   * and refuses it when a goal listed here passes or explains itself differently.
   */
  stepFails?: { goal: number; detail: string }[];
}

/** Where a step can run: the simulator and native rxe, or native only (needs a peer process). */
export type Backends = "any" | "native";

export interface StepFile {
  /** Kebab-case, unique within the lesson. */
  id: string;
  title: Text;
  checks: Check[];
  /** Gentle first, explicit last. At least one. */
  hints: Text[];
  breakIt?: BreakIt[];
  /** Default "any". A "native" step is skipped by the simulator replay and says why in `nativeOnly`. */
  backends?: Backends;
  nativeOnly?: Text;
  /** Wall-clock limit for one replay of this step's programs, in ms (default 20000). */
  timeoutMs?: number;
}

export interface LessonFile {
  schemaVersion: number;
  /** Kebab-case, unique in the course; the folder is `<NN>-<id>`. */
  id: string;
  title: Text;
  level: "beginner" | "intermediate" | "advanced";
  /** Lesson ids to do first. */
  prerequisites: string[];
  intro: Text;
  steps: StepFile[];
}

/** A step with its files read. */
export interface Step extends StepFile {
  /** 1-based position: the file prefix is `step-<number>`. */
  number: number;
  text: Text;
  starter: string;
  solution: string;
  /** Paths of the step's programs, relative to the lesson folder (for the replay). */
  files: { starter: string; solution: string; breakIt: Record<string, string> };
  /** Code of each break-it variation, by id. */
  breakItCode: Record<string, string>;
}

export interface Lesson extends Omit<LessonFile, "steps"> {
  /** The folder name (`06-first-message`). */
  folder: string;
  /** Position in the course (the folder's number). */
  order: number;
  steps: Step[];
}
