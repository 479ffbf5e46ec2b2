/**
 * The package entry point for learner programs: `import { IBV_QP_STATE, type Verbs } from "verbslab"`.
 * Constants, data types and errors come from the verbs contract; `Verbs` and its objects are the
 * session's async facade. Browser-safe (the renderer's worker and Monaco's typings use it too).
 */
export * from "../../verbs/constants.js";
export * from "../../verbs/errors.js";
export * from "../../verbs/types.js";
export * from "../../verbs/qp-transitions.js";
export * from "../../verbs/cm.js";
export type * from "./verbs-api.js";
