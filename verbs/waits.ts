/**
 * How long one call may wait, on every backend: `sleep`, `pollWait`, `getCqEvent` and
 * `getAsyncEvent` take at most 2^31 − 1 ms (24.8 days) when finite. That is the most a Node
 * timer holds (a longer one fires after 1 ms), so the same program waits the same on the
 * simulator and on real verbs; Infinity (or no timeout, where the verb allows it) means
 * "no deadline".
 */
import { VerbsError, errnos } from "./errors.js";
import { because } from "./verb-failure.js";

export const MAX_WAIT_MS = 2 ** 31 - 1;

/** Refuses a finite wait over MAX_WAIT_MS: EINVAL naming the argument. */
export function checkWaitMs(verb: string, arg: string, ms: number | undefined): void {
  if (ms === undefined || !Number.isFinite(ms) || ms <= MAX_WAIT_MS) return;
  throw new VerbsError(
    verb,
    errnos.EINVAL,
    because({ kind: "wait-too-long", arg, ms, max: MAX_WAIT_MS }, { attribute: arg }),
  );
}
