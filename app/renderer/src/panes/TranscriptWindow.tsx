/**
 * Which chunks of a long transcript are on screen: the transcript list renders only those (and
 * a margin), with one spacer above and one below standing in for the rest, so a program of
 * 100,000 verbs costs the DOM a few hundred rows, not 100,000.
 */
import { useLayoutEffect, useRef, useState, type RefObject } from "react";

/** Chunks rendered before the list has been laid out (and in static markup): the first ones. */
export const INITIAL_CHUNKS = 4;
/** Chunks rendered beyond each edge of the viewport, so a scroll does not show blank space. */
const MARGIN = 1;
/**
 * Rows per chunk. Small, because every row of a chunk near the screen is painted, and each
 * painted row costs every frame's layerizing: at 16 rows instead of 50 a step's paint, layerize
 * and layout took about 6 ms less of the main thread (bench:ui's program, step 20-80).
 */
export const ROWS_PER_CHUNK = 16;
/** A chunk's height before one has been measured (rows of one line, ~22 px each). */
export const CHUNK_PX_GUESS = ROWS_PER_CHUNK * 22;

/** A half-open range of chunk indexes. */
export interface ChunkWindow {
  first: number;
  end: number;
}

/**
 * The chunks that intersect the viewport, plus MARGIN each side. `top`/`bottom`: the viewport's
 * edges measured from the top of the list, in px; `chunkPx`: one chunk's height.
 */
export function chunksInView(chunks: number, top: number, bottom: number, chunkPx: number): ChunkWindow {
  if (chunks === 0) return { first: 0, end: 0 };
  const px = Math.max(1, chunkPx);
  const first = Math.min(chunks - 1, Math.max(0, Math.floor(top / px) - MARGIN));
  const end = Math.min(chunks, Math.max(first + 1, Math.ceil(bottom / px) + MARGIN));
  return { first, end };
}

/** The nearest ancestor that scrolls (the pane's body), or the document's scroller. */
function scrollerOf(el: HTMLElement): HTMLElement {
  for (let p = el.parentElement; p; p = p.parentElement) {
    const o = getComputedStyle(p).overflowY;
    if (o === "auto" || o === "scroll") return p;
  }
  return document.scrollingElement as HTMLElement;
}

/**
 * The window of chunks to render for the list at `list`, following its scroller's scroll and
 * size; `chunkPx` is measured from a rendered chunk (all chunks but the last are the same height:
 * CHUNK single-line rows).
 *
 * Geometry is read when the browser has just laid out (a ResizeObserver on the list and on its
 * scroller) or on a scroll, never in the commit that adds a chunk: reading it there forced a
 * style and layout pass of the whole window inside that step's render (every 16th step of
 * bench:ui's program cost ~10 ms more than the others). A new chunk grows the list, so its
 * observer sees it in the same frame, before paint.
 */
export function useChunkWindow(list: RefObject<HTMLElement | null>, chunks: number): ChunkWindow & { chunkPx: number } {
  const [state, setState] = useState({ first: 0, end: Math.min(chunks, INITIAL_CHUNKS), chunkPx: CHUNK_PX_GUESS });
  const count = useRef(chunks);
  count.current = chunks;
  useLayoutEffect(() => {
    const el = list.current;
    if (!el) return;
    const scroller = scrollerOf(el);
    const update = () => {
      const chunk = el.querySelector<HTMLElement>(".transcript-chunk");
      const chunkPx = chunk?.offsetHeight || CHUNK_PX_GUESS;
      const l = el.getBoundingClientRect();
      const s = scroller.getBoundingClientRect();
      const top = Math.max(s.top, 0) - l.top;
      const bottom = Math.min(s.bottom, window.innerHeight) - l.top;
      const w = chunksInView(count.current, top, bottom, chunkPx);
      setState((old) =>
        old.first === w.first && old.end === w.end && old.chunkPx === chunkPx ? old : { ...w, chunkPx },
      );
    };
    scroller.addEventListener("scroll", update, { passive: true });
    // Both are observed at once (their first callbacks come after the first layout): the list
    // grows with each new chunk, the scroller when the pane is resized.
    const ro = new ResizeObserver(update);
    ro.observe(scroller);
    ro.observe(el);
    return () => {
      scroller.removeEventListener("scroll", update);
      ro.disconnect();
    };
  }, [list]);
  const end = Math.min(chunks, state.end);
  return { first: Math.min(state.first, Math.max(0, end - 1)), end, chunkPx: state.chunkPx };
}
