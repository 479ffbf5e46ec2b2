/**
 * Argument rules both backends share, in one home: the simulator (sim/check.ts re-exports the
 * readers) and the native backend's TypeScript checks before the addon (native/index.ts) call
 * these, so the same bad call gives the same error on both: wrong JavaScript types are
 * TypeErrors whose `why` is the data (verbs/errors.ts `typeErr`); values a C program could pass
 * (a negative length, cqe 0, num_entries -1) are the VerbsErrors the verb gives, with their why.
 */
import { VerbsError, argError, errnos, fail, typeErr } from "./errors.js";
import { because } from "./verb-failure.js";

export { typeErr };

/** A finite integer (any sign); TypeError otherwise. */
export function int(verb: string, name: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isInteger(v)) {
    throw typeErr(verb, name, "integer", v);
  }
  return v;
}

/** An optional integer with a default. */
export function optInt(verb: string, name: string, v: unknown, dflt: number): number {
  return v === undefined || v === null ? dflt : int(verb, name, v);
}

/** A C unsigned field: integers wrap modulo 2^32 like a C assignment would, but must be integers. */
export function u32(verb: string, name: string, v: unknown): number {
  return int(verb, name, v) >>> 0;
}

export function obj(verb: string, name: string, v: unknown): Record<string, unknown> {
  if (typeof v !== "object" || v === null) throw typeErr(verb, name, "object", v);
  return v as Record<string, unknown>;
}

export function bigintOf(verb: string, name: string, v: unknown): bigint {
  if (typeof v === "bigint") return BigInt.asUintN(64, v);
  if (typeof v === "number" && Number.isInteger(v)) return BigInt.asUintN(64, BigInt(v));
  throw typeErr(verb, name, "bigint", v);
}

/** The most bytes regMr(length) registers: more cannot be pinned (ENOMEM), as rxe fails when it cannot pin. */
export const MAX_MR_LENGTH = 2 ** 31;

/**
 * The new zeroed buffer regMr(length) registers, `length` already an integer: not positive is
 * EINVAL, more than MAX_MR_LENGTH or more than this process can allocate is ENOMEM.
 */
export function mrBytesOfLength(verb: string, length: number): Uint8Array {
  if (length <= 0) fail(verb, "EINVAL", because({ kind: "length-not-positive", length }, { attribute: "length" }));
  if (length > MAX_MR_LENGTH)
    fail(verb, "ENOMEM", because({ kind: "cannot-pin", length, allocate: false }, { attribute: "length" }));
  try {
    return new Uint8Array(length);
  } catch {
    // This process cannot have that much memory: rxe fails the same way when it cannot pin it.
    fail(verb, "ENOMEM", because({ kind: "cannot-pin", length, allocate: true }, { attribute: "length" }));
  }
}

/** ibv_create_cq's cqe (an integer) must be 1..max (the device's max_cqe): EINVAL otherwise. */
export function checkCqe(verb: string, cqe: number, max: number): void {
  if (cqe < 1 || cqe > max) fail(verb, "EINVAL", because({ kind: "cqe-range", cqe, max }, { attribute: "cqe" }));
}

/** ibv_poll_cq with a negative num_entries: EINVAL. */
export function negativeNumEntries(n: number): VerbsError {
  return new VerbsError(
    "ibv_poll_cq",
    errnos.EINVAL,
    because({ kind: "negative-num-entries", n }, { attribute: "num_entries" }),
  );
}

/** ibv_ack_cq_events' nevents: an integer (TypeError), not negative (RangeError). */
export function ackCount(n: unknown): number {
  const verb = "ibv_ack_cq_events";
  const k = int(verb, "nevents", n);
  if (k < 0) throw argError(RangeError, verb, { kind: "arg-negative", field: "nevents", value: k });
  return k;
}
