/**
 * The learner API as Monaco sees it: the contract's sources (with their TSDoc, for hover
 * docs) laid out in Monaco's virtual file system as they are in the repo, plus a `verbslab`
 * package whose entry re-exports the constants, the errors and the facade types.
 */
import constants from "../../../../verbs/constants.ts?raw";
import types from "../../../../verbs/types.ts?raw";
import errors from "../../../../verbs/errors.ts?raw";
import backend from "../../../../verbs/backend.ts?raw";
import lab from "../../../../verbs/lab.ts?raw";
import cm from "../../../../verbs/cm.ts?raw";
import verbsApi from "../../../session/verbs-api.ts?raw";

/** The `verbslab` module learner code imports from; runtime values match what the worker provides. */
export const VERBSLAB_ENTRY = `export * from "../../verbslab/verbs/constants.js";
export { VerbsError, errnos, errnoName } from "../../verbslab/verbs/errors.js";
export type * from "../../verbslab/verbs/types.js";
export { RXE_COUNTER_NAMES, DRIVER_COUNTER_NAMES, counterName, readCounter } from "../../verbslab/verbs/types.js";
export type * from "../../verbslab/app/session/verbs-api.js";
export type { LinkFaults, LinkState, LabMtu } from "../../verbslab/verbs/lab.js";
export * from "../../verbslab/verbs/cm.js";
`;

export const EXTRA_LIBS: { path: string; content: string }[] = [
  { path: "file:///verbslab/verbs/constants.ts", content: constants },
  { path: "file:///verbslab/verbs/types.ts", content: types },
  { path: "file:///verbslab/verbs/errors.ts", content: errors },
  { path: "file:///verbslab/verbs/backend.ts", content: backend },
  { path: "file:///verbslab/verbs/lab.ts", content: lab },
  { path: "file:///verbslab/verbs/cm.ts", content: cm },
  { path: "file:///verbslab/app/session/verbs-api.ts", content: verbsApi },
  { path: "file:///node_modules/verbslab/index.ts", content: VERBSLAB_ENTRY },
];
