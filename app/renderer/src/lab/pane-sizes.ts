/**
 * The widths of the lesson pane and the inspector (the editor takes what is left), as the learner
 * dragged them: kept in the browser's localStorage (a preference of this screen, not progress),
 * and always fitted to the window so that no pane is pushed out of it.
 */
export interface PaneSizes {
  lesson: number;
  inspector: number;
}

/** The narrowest each column may get: below these, their controls no longer fit. */
export const PANE_MIN = { lesson: 240, editor: 320, inspector: 340 } as const;
/** The window's padding (10 px each side) and the two drag handles between the columns (8 px each). */
export const PANE_CHROME = 2 * 10 + 2 * 8;

const STORAGE_KEY = "verbslab.paneSizes";
const clamp = (v: number, lo: number, hi: number) => Math.min(Math.max(v, lo), hi);

/** The widths a window of `width` px opens with before the learner drags anything. */
export function defaultPaneSizes(width: number): PaneSizes {
  return fitPaneSizes(
    { lesson: clamp(Math.round(width * 0.23), 260, 400), inspector: clamp(Math.round(width * 0.34), 380, 620) },
    width,
  );
}

/**
 * `s` fitted to a window of `width` px: each column at least its minimum, and the two side
 * columns together leave the editor its minimum (each gives way in proportion to its width above
 * its own minimum).
 */
export function fitPaneSizes(s: PaneSizes, width: number): PaneSizes {
  const lesson = Math.max(PANE_MIN.lesson, Math.round(s.lesson));
  const inspector = Math.max(PANE_MIN.inspector, Math.round(s.inspector));
  const over = lesson + inspector - (width - PANE_CHROME - PANE_MIN.editor);
  if (over <= 0) return { lesson, inspector };
  const spareLesson = lesson - PANE_MIN.lesson;
  const spare = spareLesson + inspector - PANE_MIN.inspector;
  if (over >= spare) return { lesson: PANE_MIN.lesson, inspector: PANE_MIN.inspector };
  const fromLesson = Math.round((over * spareLesson) / spare);
  return { lesson: lesson - fromLesson, inspector: inspector - (over - fromLesson) };
}

/** The sizes saved by `savePaneSizes`, or undefined when there are none (or they are unreadable). */
export function loadPaneSizes(storage: Pick<Storage, "getItem"> | undefined): PaneSizes | undefined {
  try {
    const v = JSON.parse(storage?.getItem(STORAGE_KEY) ?? "null") as Partial<PaneSizes> | null;
    if (v && Number.isFinite(v.lesson) && Number.isFinite(v.inspector))
      return { lesson: v.lesson as number, inspector: v.inspector as number };
  } catch {
    // A corrupt entry: the defaults.
  }
  return undefined;
}

export function savePaneSizes(storage: Pick<Storage, "setItem"> | undefined, s: PaneSizes): void {
  try {
    storage?.setItem(STORAGE_KEY, JSON.stringify(s));
  } catch {
    // Storage full or disabled: the sizes last until the page reloads.
  }
}
