/** React access to the LabStore and the view derived from it. */
import { useMemo, useSyncExternalStore } from "react";
import { buildView } from "../model/reduce.js";
import type { LabView } from "../model/view.js";
import type { LabState, LabStore } from "./store.js";

export function useLabState(store: LabStore): LabState {
  return useSyncExternalStore(store.subscribe, store.get);
}

/** The panes' data, recomputed only when what it depends on changes. */
export function useLabView(state: LabState): LabView {
  return useMemo(
    () =>
      buildView({
        events: state.events,
        snapshot: state.snapshot,
        previousSnapshot: state.previousSnapshot,
        gate: state.gate,
      }),
    [state.events, state.snapshot, state.previousSnapshot, state.gate],
  );
}
