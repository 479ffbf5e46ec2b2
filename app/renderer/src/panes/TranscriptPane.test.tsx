/** The transcript list at scale: a program of 100,000 verbs puts only a window of rows in the DOM. */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { TranscriptRow } from "../model/view.js";
import { TranscriptPane } from "./TranscriptPane.js";
import { CHUNK_PX_GUESS, chunksInView, INITIAL_CHUNKS, ROWS_PER_CHUNK } from "./TranscriptWindow.js";

const row = (seq: number): TranscriptRow => ({ seq, verb: "ibv_poll_cq", detail: `n ${seq}`, outcome: "ok" });

describe("the transcript list, virtualised", () => {
  it("renders 100,000 events as a window of rows and one spacer for the rest", () => {
    const rows = Array.from({ length: 100_000 }, (_, i) => row(i + 1));
    const s = renderToStaticMarkup(<TranscriptPane rows={rows} />);
    const seqs = [...s.matchAll(/<td class="muted">(\d+)<\/td>/g)].map((m) => Number(m[1]));
    expect(seqs).toEqual(rows.slice(0, INITIAL_CHUNKS * ROWS_PER_CHUNK).map((r) => r.seq));
    const spacer = /class="transcript-spacer" style="height:([\d.]+)px"/.exec(s);
    // The rest keeps its place in the scroll height (so the scrollbar is the whole transcript's).
    expect(Number(spacer?.[1])).toBeCloseTo(
      ((100_000 - INITIAL_CHUNKS * ROWS_PER_CHUNK) * CHUNK_PX_GUESS) / ROWS_PER_CHUNK,
      0,
    );
    expect(s.length).toBeLessThan(100_000);
  });

  it("follows the viewport: chunks on screen and one each side, never past either end", () => {
    expect(chunksInView(2000, 0, 600, 1100)).toEqual({ first: 0, end: 2 });
    // Scrolled to row ~50,000 (chunk 1000) with a 900 px viewport.
    expect(chunksInView(2000, 1000 * 1100 + 10, 1000 * 1100 + 910, 1100)).toEqual({ first: 999, end: 1002 });
    expect(chunksInView(2000, 1e9, 1e9 + 900, 1100)).toEqual({ first: 1999, end: 2000 });
    expect(chunksInView(0, 0, 600, 1100)).toEqual({ first: 0, end: 0 });
  });
});
