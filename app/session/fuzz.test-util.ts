/** What the fuzz tests accept as a well-formed error. */
import { expect } from "vitest";
import { VerbsError } from "../../verbs/errors.js";

/** Messages that mean a bug (a value the code did not expect), not a learner's mistake. */
export const INTERNAL =
  /Cannot read propert|Cannot set propert|is not a function|is not iterable|Maximum call stack|Cannot convert|Cannot mix BigInt|undefined is not|null is not|Invalid typed array length|Do not know how to serialize/;

export function checkError(e: unknown, what: string): void {
  expect(e, what).toBeInstanceOf(Error);
  const err = e as Error;
  expect(
    ["VerbsError", "TypeError", "RangeError", "SessionStoppedError"],
    `${what}: ${err.name} ${err.message}`,
  ).toContain(err.name);
  expect(err.message, what).not.toMatch(INTERNAL);
  expect(err.message.length, what).toBeGreaterThan(0);
  if (err instanceof VerbsError) {
    expect(typeof err.code, what).toBe("string");
    expect(err.errno, what).toBeGreaterThan(0);
  }
}
