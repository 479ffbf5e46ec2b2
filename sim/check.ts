/**
 * Argument checks shared by every verb: wrong JavaScript types are TypeErrors (as the
 * contract says) whose `why` is the data (verbs/errors.ts `typeErr`), values a C program could
 * pass are left to the verb's own rules.
 */
import { fail, typeErr } from "../verbs/errors.js";
import { because } from "../verbs/verb-failure.js";

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

/** Every object with a lifetime carries one of these. */
export interface Lifetime {
  destroyed: boolean;
}

/** Use after destroy: EINVAL "… was already destroyed" (the contract's choice; C would touch freed memory). */
export function alive(verb: string, what: string, o: Lifetime): void {
  if (o.destroyed) fail(verb, "EINVAL", because({ kind: "destroyed", object: what }, { attribute: what }));
}
