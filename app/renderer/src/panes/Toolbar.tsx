/** Run, Step, Continue, Stop, Reset, with what the program is paused before. */
import { memo } from "react";
export interface ToolbarProps {
  running: boolean;
  paused: boolean;
  /** "ibv_modify_qp qp0.modify(→ RTR, mask …)" while paused. */
  pausedBefore?: string;
  ready: boolean;
  onRun: () => void;
  onStep: () => void;
  onContinue: () => void;
  onStop: () => void;
  onReset: () => void;
}

export const Toolbar = memo(function Toolbar(p: ToolbarProps) {
  return (
    <div className="toolbar" role="toolbar" aria-label="program">
      <button
        className="primary"
        onClick={p.onRun}
        disabled={!p.ready || p.running}
        data-action="run"
        title="Run (Ctrl+Enter)"
      >
        ▶ Run<kbd>Ctrl+↵</kbd>
      </button>
      <button onClick={p.onStep} disabled={!p.ready || (p.running && !p.paused)} data-action="step" title="Step (F10)">
        ⤼ Step<kbd>F10</kbd>
      </button>
      <button onClick={p.onContinue} disabled={!p.running} data-action="continue" title="Continue (F8)">
        ⇥ Continue<kbd>F8</kbd>
      </button>
      <button onClick={p.onStop} disabled={!p.running} data-action="stop" title="Stop (Shift+F5)">
        ■ Stop
      </button>
      <button onClick={p.onReset} disabled={p.running} data-action="reset" title="A fresh session: every object goes">
        ↺ Reset
      </button>
      {p.paused && p.pausedBefore && (
        <span className="paused" data-testid="paused-before" title={`paused before ${p.pausedBefore}`}>
          paused before {p.pausedBefore}
        </span>
      )}
    </div>
  );
});
