/** React access to the LabStore and the view derived from it. */
import { useMemo, useRef, useSyncExternalStore } from "react";
import { buildView } from "../model/reduce.js";
import { share } from "../model/share.js";
import type { LabView } from "../model/view.js";
import type { LabState, LabStore } from "./store.js";

export function useLabState(store: LabStore): LabState {
  return useSyncExternalStore(store.subscribe, store.get);
}

/**
 * The panes' data, recomputed only when what it depends on changes. Parts equal to the last
 * view are the last view's objects, so a pane whose data a step did not touch (memoised)
 * does not render again: a step sends three or four events, each of which rebuilds the view.
 */
export function useLabView(state: LabState): LabView {
  const last = useRef<LabView | null>(null);
  return useMemo(() => {
    const view = share(
      last.current,
      buildView({
        events: state.events,
        snapshot: state.snapshot,
        previousSnapshot: state.previousSnapshot,
        gate: state.gate,
      }),
    );
    last.current = view;
    return view;
  }, [state.events, state.snapshot, state.previousSnapshot, state.gate]);
}
