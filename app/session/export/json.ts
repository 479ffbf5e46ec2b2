/** The transcript as one JSON document ({ header, events }); `importTranscript` reads it back, validated. */
import type { Transcript } from "../transcript.js";

export function toJson(t: Transcript): string {
  return JSON.stringify({ header: t.header, events: t.events }, null, 2) + "\n";
}
