/** The session layer (Node side): sessions, transcripts, replay and exports. */
export { createSession, diffFields } from "./session.js";
export { createVerbsFacade, refOf } from "./facade.js";
export { VERBS, verbSpec, methodsOf, type VerbSpec, type VerbTable } from "./verb-table.js";
export * from "./session-types.js";
export * from "./transcript.js";
export * from "./wire.js";
export type * from "./verbs-api.js";
export { appendFileSink, readTranscriptFile } from "./transcript-file.js";
export { replayTranscript, type ReplayOptions, type ReplayResult, type Divergence } from "./replay.js";
export {
  exportTranscript,
  EXPORT_FORMATS,
  toC,
  toHtml,
  toJson,
  toMarkdown,
  type ExportFormat,
} from "./export/index.js";
export { summarize, formatCall, formatOutcome, formatWc } from "./describe.js";
export { objectsOf, symbolize, resolveSymbols, type ObjectInfo, type Sym } from "./symbols.js";
