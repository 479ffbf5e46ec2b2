/** The verbs contract: constants, data types, errors, the backend interfaces and the QP transition table. */
export * from "./constants.js";
export * from "./errors.js";
export * from "./types.js";
export type * from "./backend.js";
export * from "./qp-transitions.js";
export * from "./cq-events.js";
export * from "./lab.js";
export * from "./cm.js";
