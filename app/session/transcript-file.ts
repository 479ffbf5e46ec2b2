/** Transcript files on disk (Node only): append each line as it is written, so a crash loses nothing. */
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import type { TranscriptSink } from "./session-types.js";
import { importTranscript, type Transcript } from "./transcript.js";

/**
 * A sink that appends every line to `path` at once (truncating the file first): one write(2)
 * per line on a descriptor kept open, so a crash loses nothing and a long run is not one
 * open/close per verb. It reads the file back for a session that let its old events go.
 */
export function appendFileSink(path: string): TranscriptSink {
  let fd: number | null = openSync(path, "w");
  return {
    append: (line) => {
      fd ??= openSync(path, "a");
      writeSync(fd, line);
    },
    read: () => readFileSync(path, "utf8"),
    close: () => {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}

/** Reads and validates a transcript file (JSON lines or a JSON export). */
export function readTranscriptFile(path: string): Transcript {
  return importTranscript(readFileSync(path, "utf8"));
}
