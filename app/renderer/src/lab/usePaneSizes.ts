/** The three columns' widths: the learner's (remembered), fitted to the window as it resizes. */
import { useCallback, useEffect, useState } from "react";
import { defaultPaneSizes, fitPaneSizes, loadPaneSizes, savePaneSizes, type PaneSizes } from "./pane-sizes.js";

const storage = (): Storage | undefined => {
  try {
    return window.localStorage;
  } catch {
    return undefined; // storage disabled (e.g. a sandboxed frame)
  }
};

export function usePaneSizes() {
  const [width, setWidth] = useState(() => window.innerWidth);
  const [chosen, setChosen] = useState<PaneSizes>(
    () => loadPaneSizes(storage()) ?? defaultPaneSizes(window.innerWidth),
  );
  useEffect(() => {
    const onResize = () => setWidth(window.innerWidth);
    window.addEventListener("resize", onResize);
    return () => window.removeEventListener("resize", onResize);
  }, []);
  // What is laid out is fitted to this window; what is kept is what the learner chose, so that
  // narrowing the window and widening it again gives the chosen widths back.
  const sizes = fitPaneSizes(chosen, width);
  /** Moves one column's edge by `dx` px from `from` (its sizes when the drag began); `done` saves. */
  const resize = useCallback((pane: keyof PaneSizes, from: PaneSizes, dx: number, done: boolean) => {
    const next = fitPaneSizes({ ...from, [pane]: from[pane] + dx }, window.innerWidth);
    setChosen(next);
    if (done) savePaneSizes(storage(), next);
  }, []);
  return { sizes, resize };
}
