/** Run, Step, Continue, Stop, Reset, with what the program is paused before and on which line. */
import { memo } from "react";
export interface ToolbarProps {
  running: boolean;
  paused: boolean;
  /** "a (QP 0x11).modify(→ RTR, mask …)" while paused. */
  pausedBefore?: string;
  /** The line of main.ts the paused verb is on; clicking it shows the line. */
  pausedLine?: number;
  onPausedLine?: () => void;
  /** The program has type errors: ask before running it. */
  typeErrors?: { errors: string[]; go: () => void; cancel: () => void } | null;
  ready: boolean;
  onRun: () => void;
  onStep: () => void;
  onContinue: () => void;
  onStop: () => void;
  onReset: () => void;
}

export const Toolbar = memo(function Toolbar(p: ToolbarProps) {
  return (
    <>
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
        <button
          onClick={p.onStep}
          disabled={!p.ready || (p.running && !p.paused)}
          data-action="step"
          title="Step (F10)"
        >
          ⤼ Step<kbd>F10</kbd>
        </button>
        <button onClick={p.onContinue} disabled={!p.paused} data-action="continue" title="Continue (F8)">
          ⇥ Continue<kbd>F8</kbd>
        </button>
        <button onClick={p.onStop} disabled={!p.running} data-action="stop" title="Stop (Shift+F5)">
          ■ Stop
        </button>
        <button onClick={p.onReset} disabled={p.running} data-action="reset" title="A fresh session: every object goes">
          ↺ Reset
        </button>
        {p.paused && p.pausedBefore && (
          <span
            className="paused"
            data-testid="paused-before"
            title={`paused before ${p.pausedBefore}${p.pausedLine ? ` (line ${p.pausedLine})` : ""}`}
          >
            {p.pausedLine !== undefined && (
              <button className="link" data-testid="paused-line" onClick={p.onPausedLine}>
                line {p.pausedLine}
              </button>
            )}
            paused before {p.pausedBefore}
          </span>
        )}
      </div>
      {p.typeErrors && (
        <div
          className="type-errors"
          role="alertdialog"
          data-testid="type-errors"
          title={p.typeErrors.errors.join("\n")}
        >
          {p.typeErrors.errors.length} type error{p.typeErrors.errors.length === 1 ? "" : "s"}: run anyway?
          <button onClick={p.typeErrors.go} data-action="run-anyway">
            Run anyway
          </button>
          <button onClick={p.typeErrors.cancel} data-action="cancel-run">
            Cancel
          </button>
        </div>
      )}
    </>
  );
});
