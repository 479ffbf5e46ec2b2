import { seen, verbFailureText, type ArgExpected, type VerbFailure } from "./verb-failure.js";

/** Linux errno values that verbs calls return, by name. */
export const errnos = {
  EPERM: 1,
  ENOENT: 2,
  EINTR: 4,
  EIO: 5,
  ENXIO: 6,
  EBADF: 9,
  EAGAIN: 11,
  ENOMEM: 12,
  EACCES: 13,
  EFAULT: 14,
  EBUSY: 16,
  EEXIST: 17,
  ENODEV: 19,
  EINVAL: 22,
  ENOSPC: 28,
  ENOSYS: 38,
  ENODATA: 61,
  EPROTO: 71,
  EOPNOTSUPP: 95,
  EAFNOSUPPORT: 97,
  EADDRINUSE: 98,
  EADDRNOTAVAIL: 99,
  ENETUNREACH: 101,
  ETIMEDOUT: 110,
  ECONNREFUSED: 111,
  EHOSTUNREACH: 113,
} as const;

export type ErrnoName = keyof typeof errnos;

/** The errno name for a number (22 → "EINVAL"); unknown numbers come back as "E<n>". */
export function errnoName(errno: number): string {
  for (const [name, n] of Object.entries(errnos)) if (n === errno) return name;
  return `E${errno}`;
}

export interface VerbsErrorDetails {
  /** What was wrong, in words a learner can act on ("RTR needs IBV_QP_DEST_QPN"). */
  reason?: string;
  /** The attribute, mask bit or argument at fault, spelled as in verbs.h (`IBV_QP_DEST_QPN`, `sg_list[1].lkey`). */
  attribute?: string;
  /** For ibv_post_send/ibv_post_recv: the index of the first work request not posted (C's bad_wr). */
  badWrIndex?: number;
  /** Why, as data (verbs/verb-failure.ts): `reason` is its English wording; the UI words it in the learner's language. */
  why?: VerbFailure;
}

/**
 * A verbs call failed the way a C program would see a non-zero return or NULL.
 * `code` is the errno name (`EINVAL`), `errno` its number, `verb` the C function
 * (`ibv_modify_qp`). Wrong JavaScript argument types are TypeErrors instead.
 */
export class VerbsError extends Error {
  readonly verb: string;
  readonly code: string;
  readonly errno: number;
  readonly reason?: string;
  readonly attribute?: string;
  readonly badWrIndex?: number;
  readonly why?: VerbFailure;

  constructor(verb: string, errno: number, details: VerbsErrorDetails = {}) {
    const code = errnoName(errno);
    super(`${verb}: ${code} (${errno})${details.reason ? `: ${details.reason}` : ""}`);
    this.name = "VerbsError";
    this.verb = verb;
    this.code = code;
    this.errno = errno;
    if (details.reason !== undefined) this.reason = details.reason;
    if (details.attribute !== undefined) this.attribute = details.attribute;
    if (details.badWrIndex !== undefined) this.badWrIndex = details.badWrIndex;
    if (details.why !== undefined) this.why = details.why;
  }

  /** A plain object that survives structured clone and JSON (for the bridge and transcripts). */
  toJSON(): ErrorData {
    return errorToData(this);
  }
}

/**
 * Throws a VerbsError for `errno` by name, with why as data (verbs/verb-failure.ts `because`):
 * `fail("ibv_reg_mr", "EINVAL", because({ kind: "length-zero" }, { attribute: "length" }))`.
 */
export function fail(verb: string, code: ErrnoName, details?: VerbsErrorDetails): never {
  throw new VerbsError(verb, errnos[code], details);
}

/**
 * A JavaScript argument error with why as data (verbs/verb-failure.ts): a TypeError (a wrong type)
 * or RangeError (a value out of range) as the contract says, whose message is the verb and the
 * English wording and whose `why` (and `verb`) ride along to the UI, which words it in the
 * learner's language: `throw argError(TypeError, "ibv_post_send", { kind: "arg-type", ... })`.
 */
export function argError(
  cls: TypeErrorConstructor | RangeErrorConstructor,
  verb: string | undefined,
  why: VerbFailure,
): Error & { why: VerbFailure; verb?: string } {
  const e = new cls(`${verb ? `${verb}: ` : ""}${verbFailureText(why)}`);
  return Object.assign(e, { why }, verb ? { verb } : {});
}

/**
 * A TypeError for `verb`'s `field`, which must be `expected` and was `v` when given (`arg-type`):
 * `throw typeErr("ibv_post_send", "wr[0].wr_id", "number", wr.wr_id)`.
 */
export function typeErr(verb: string | undefined, field: string, expected: ArgExpected, ...v: [unknown?]): Error {
  return argError(TypeError, verb, { kind: "arg-type", field, expected, ...(v.length > 0 && { got: seen(v[0]) }) });
}

/**
 * Any error as plain data: what the bridge carries in an error envelope and what a
 * transcript records (`error` of a verb or end event). A VerbsError keeps its fields;
 * a BridgeValidationError its `path`; anything else its name and message.
 */
export interface ErrorData extends VerbsErrorDetails {
  /** "VerbsError", "TypeError", "RangeError", "BridgeValidationError", "SessionStoppedError", "Error", … */
  name: string;
  message: string;
  /** The errno name (`EINVAL`) for a VerbsError; Node-style codes for other errors. */
  code?: string;
  errno?: number;
  /** The C function that failed (`ibv_modify_qp`). */
  verb?: string;
  /** For BridgeValidationError: where in the request the value was wrong. */
  path?: string;
  /** The line and column of main.ts a learner program's error came from (the verb's call, or the throw), when known. */
  line?: number;
  column?: number;
  /** The error is a verb's that the program called without `await` (nothing caught it). */
  unawaited?: boolean;
}

// In the order VerbsError.toJSON always wrote them (transcripts on disk read the same).
const FIELDS = [
  ["verb", "string"],
  ["code", "string"],
  ["errno", "number"],
  ["message", "string"],
  ["reason", "string"],
  ["attribute", "string"],
  ["badWrIndex", "number"],
  ["path", "string"],
  ["line", "number"],
  ["column", "number"],
  ["unawaited", "boolean"],
  ["why", "object"],
] as const;

/** Anything thrown as ErrorData. An object that already is ErrorData (a recorded or relayed error) is copied. */
export function errorToData(err: unknown): ErrorData {
  if (err === null || typeof err !== "object") return { name: "Error", message: String(err) };
  const e = err as Record<string, unknown>;
  const out: Record<string, unknown> = { name: typeof e.name === "string" ? e.name : "Error" };
  for (const [k, type] of FIELDS) {
    if (typeof e[k] === type && e[k] !== null) out[k] = e[k];
    else if (k === "message") out[k] = String(err);
  }
  return out as unknown as ErrorData;
}

/**
 * The error ErrorData describes: a real VerbsError for a failed verb (so `err.code` and
 * `instanceof VerbsError` work in learner code), a TypeError or RangeError as such, and
 * otherwise an Error with the same name; each keeps the message and the other fields.
 */
export function errorFromData(data: ErrorData): Error {
  let e: Error;
  if (data.name === "VerbsError" && typeof data.verb === "string" && typeof data.errno === "number") {
    e = new VerbsError(data.verb, data.errno, {
      ...(data.reason !== undefined && { reason: data.reason }),
      ...(data.attribute !== undefined && { attribute: data.attribute }),
      ...(data.badWrIndex !== undefined && { badWrIndex: data.badWrIndex }),
      ...(data.why !== undefined && { why: data.why }),
    });
  } else if (data.name === "TypeError") e = new TypeError(data.message);
  else if (data.name === "RangeError") e = new RangeError(data.message);
  else {
    e = new Error(data.message);
    e.name = data.name;
  }
  // Every other field the data carries is kept (a field added to FIELDS survives the trip).
  const fields = e as unknown as Record<string, unknown>;
  for (const [k, type] of FIELDS) if (!(k in e) && typeof data[k] === type) fields[k] = data[k];
  return e;
}
