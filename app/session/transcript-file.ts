/** Transcript files on disk (Node only): append each line as it is written, so a crash loses nothing. */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import type { TranscriptSink } from "./session-types.js";
import { importTranscript, type Transcript } from "./transcript.js";

/** A sink that appends every line to `path` at once (truncating the file first). */
export function appendFileSink(path: string): TranscriptSink {
  writeFileSync(path, "");
  return { append: (line) => appendFileSync(path, line) };
}

/** Reads and validates a transcript file (JSON lines or a JSON export). */
export function readTranscriptFile(path: string): Transcript {
  return importTranscript(readFileSync(path, "utf8"));
}
