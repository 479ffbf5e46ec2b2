/**
 * Argument checks shared by every verb: wrong JavaScript types are TypeErrors (as the
 * contract says) whose `why` is the data (verbs/errors.ts `typeErr`), values a C program could
 * pass are left to the verb's own rules. The readers live in verbs/args.ts, shared with the
 * native backend; use-after-destroy (`alive`) is the simulator's own.
 */
import { fail } from "../verbs/errors.js";
import { because } from "../verbs/verb-failure.js";

// The argument readers are shared with the native backend (verbs/args.ts): one home.
export { bigintOf, int, obj, optInt, typeErr, u32 } from "../verbs/args.js";

/** Every object with a lifetime carries one of these. */
export interface Lifetime {
  destroyed: boolean;
}

/** Use after destroy: EINVAL "… was already destroyed" (the contract's choice; C would touch freed memory). */
export function alive(verb: string, what: string, o: Lifetime): void {
  if (o.destroyed) fail(verb, "EINVAL", because({ kind: "destroyed", object: what }, { attribute: what }));
}
