import { describe, expect, it } from "vitest";
import { PANE_CHROME, PANE_MIN, defaultPaneSizes, fitPaneSizes, loadPaneSizes, savePaneSizes } from "./pane-sizes.js";

const editor = (width: number, s: { lesson: number; inspector: number }) =>
  width - PANE_CHROME - s.lesson - s.inspector;

describe("pane sizes", () => {
  it("opens with room for the editor at 1280, 1366 and 1920 px", () => {
    for (const w of [1280, 1366, 1920]) {
      const s = defaultPaneSizes(w);
      expect(editor(w, s)).toBeGreaterThanOrEqual(480);
      expect(s.lesson).toBeGreaterThanOrEqual(260);
      expect(s.inspector).toBeGreaterThanOrEqual(380);
    }
  });
  it("fits dragged sizes to the window: minimums kept, the editor never squeezed out", () => {
    expect(fitPaneSizes({ lesson: 100, inspector: 100 }, 1920)).toEqual({
      lesson: PANE_MIN.lesson,
      inspector: PANE_MIN.inspector,
    });
    const s = fitPaneSizes({ lesson: 900, inspector: 500 }, 1280);
    expect(editor(1280, s)).toBe(PANE_MIN.editor);
    expect(s.lesson).toBeGreaterThan(s.inspector - 200); // the wider spare gives way most
    expect(fitPaneSizes({ lesson: 900, inspector: 900 }, 800)).toEqual({
      lesson: PANE_MIN.lesson,
      inspector: PANE_MIN.inspector,
    });
  });
  it("remembers sizes, and ignores what it cannot read", () => {
    const m = new Map<string, string>();
    const storage = { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v) };
    expect(loadPaneSizes(storage)).toBeUndefined();
    savePaneSizes(storage, { lesson: 300, inspector: 450 });
    expect(loadPaneSizes(storage)).toEqual({ lesson: 300, inspector: 450 });
    m.set("verbslab.paneSizes", "{not json");
    expect(loadPaneSizes(storage)).toBeUndefined();
    m.set("verbslab.paneSizes", '{"lesson":"wide"}');
    expect(loadPaneSizes(storage)).toBeUndefined();
  });
});
