/** Run, Step, Continue, Stop, Reset, with what the program is paused before and on which line. */
import { useStrings } from "../i18n.js";
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
  const t = useStrings();
  return (
    <>
      <div className="toolbar" role="toolbar" aria-label="program">
        <button
          className="primary"
          onClick={p.onRun}
          disabled={!p.ready || p.running}
          data-action="run"
          title={t.runTitle}
        >
          {t.run}
          <kbd>Ctrl+↵</kbd>
        </button>
        <button
          onClick={p.onStep}
          disabled={!p.ready || (p.running && !p.paused)}
          data-action="step"
          title={t.stepTitle}
        >
          {t.step}
          <kbd>F10</kbd>
        </button>
        {/* Continue releases a paused program: while one runs there is nothing to continue. */}
        <button onClick={p.onContinue} disabled={!p.paused} data-action="continue" title={t.continueTitle}>
          {t.continue}
          <kbd>F8</kbd>
        </button>
        <button onClick={p.onStop} disabled={!p.running} data-action="stop" title={t.stopTitle}>
          {t.stop}
        </button>
        <button onClick={p.onReset} disabled={p.running} data-action="reset" title={t.resetTitle}>
          {t.reset}
        </button>
        {/* A row of its own, always there: the paused verb gets the toolbar's whole width, and the
            editor does not move when stepping starts or ends. */}
        <span className="status-row">
          {p.paused && p.pausedBefore && (
            <span
              className="paused"
              data-testid="paused-before"
              title={`${t.pausedBefore} ${p.pausedBefore}${p.pausedLine ? ` (${t.line(p.pausedLine)})` : ""}`}
            >
              {p.pausedLine !== undefined && (
                <button className="link" data-testid="paused-line" onClick={p.onPausedLine}>
                  {t.line(p.pausedLine)}
                </button>
              )}
              {t.pausedBefore} {p.pausedBefore}
            </span>
          )}
        </span>
      </div>
      {p.typeErrors && (
        <div
          className="type-errors"
          role="alertdialog"
          data-testid="type-errors"
          title={p.typeErrors.errors.join("\n")}
        >
          {t.typeErrors(p.typeErrors.errors.length)}
          <button onClick={p.typeErrors.go} data-action="run-anyway">
            {t.runAnyway}
          </button>
          <button onClick={p.typeErrors.cancel} data-action="cancel-run">
            {t.cancel}
          </button>
        </div>
      )}
    </>
  );
});
