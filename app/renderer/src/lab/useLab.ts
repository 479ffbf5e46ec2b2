/** React access to the LabStore and the view derived from it. */
import { useMemo, useRef, useSyncExternalStore } from "react";
import { createViewBuilder, type ViewBuilder } from "../model/reduce.js";
import { share } from "../model/share.js";
import type { LabView } from "../model/view.js";
import type { LabState, LabStore } from "./store.js";

export function useLabState(store: LabStore): LabState {
  return useSyncExternalStore(store.subscribe, store.get);
}

/**
 * The panes' data, recomputed only when what it depends on changes. Parts equal to the last
 * view are the last view's objects, so a pane whose data a step did not touch (memoised)
 * does not render again. The builder folds only the events new since its last build (the
 * store appends), so a step costs the same at verb 10 as at verb 1000.
 */
export function useLabView(state: LabState): LabView {
  const last = useRef<LabView | null>(null);
  const builder = useRef<ViewBuilder | null>(null);
  builder.current ??= createViewBuilder();
  // The view reads the gate for a pending verb's prediction (the session's, in the QP views) and
  // for the toolbar's "paused before". Every step changes the gate twice (released, then the next
  // verb held), so only a held verb with a prediction to draw rebuilds the view for it; any other held verb adds its
  // "paused before" to the view as it was (the builder's pausedBefore makes it exactly as a
  // build does, from the events of the build just made).
  const pending = state.gate?.pending ?? null;
  // A prediction the panes draw: a modify's target state, or an error predicted for any verb (an
  // accepted post moves nothing, so its "ok" leaves the view as it was, and costs no rebuild).
  const p = pending?.prediction;
  const predictionGate = p && (pending.method === "modify" || p.outcome !== "ok") ? state.gate : null;
  const base = useMemo(() => {
    const view = share(
      last.current,
      builder.current!.build({
        events: state.events,
        snapshot: state.snapshot,
        previousSnapshot: state.previousSnapshot,
        gate: predictionGate,
      }),
    );
    last.current = view;
    return view;
  }, [state.events, state.snapshot, state.previousSnapshot, predictionGate]);
  return useMemo(
    () => (pending && !predictionGate ? { ...base, pausedBefore: builder.current!.pausedBefore(pending) } : base),
    [base, pending, predictionGate],
  );
}
