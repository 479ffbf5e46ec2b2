/** Run, Step, Continue, Stop, Reset, with what the program is paused before and on which line. */
import { useStrings } from "../i18n.js";
import { memo } from "react";
import type { TypeProblem } from "../runner/protocol.js";
import type { SourceSite } from "../../../session/transcript.js";

/** TypeScript errors shown in the prompt itself (the rest are counted, and all are in the editor's margin). */
const SHOWN_TYPE_ERRORS = 3;
export interface ToolbarProps {
  running: boolean;
  paused: boolean;
  /** "a (QP 0x11).modify(→ RTR, mask …)" while paused. */
  pausedBefore?: string;
  /** The line of main.ts the paused verb is on; clicking it shows the line. */
  pausedLine?: number;
  onPausedLine?: () => void;
  /** The program has type errors: ask before running it. */
  typeErrors?: { errors: TypeProblem[]; go: () => void; cancel: () => void } | null;
  /** Shows a line of main.ts in the editor (a type error's). */
  onSource?: (s: SourceSite) => void;
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
        <div className="type-errors" role="alertdialog" data-testid="type-errors">
          <div className="type-errors-ask">
            {t.typeErrors(p.typeErrors.errors.length)}
            <button onClick={p.typeErrors.go} data-action="run-anyway">
              {t.runAnyway}
            </button>
            <button onClick={p.typeErrors.cancel} data-action="cancel-run">
              {t.cancel}
            </button>
          </div>
          <ul>
            {p.typeErrors.errors.slice(0, SHOWN_TYPE_ERRORS).map((e, i) => (
              <li key={i} title={e.message}>
                <button
                  className="link"
                  data-testid="type-error-line"
                  onClick={() => p.onSource?.({ line: e.line, column: e.column })}
                >
                  {t.line(e.line)}
                </button>{" "}
                {e.message}
              </li>
            ))}
            {p.typeErrors.errors.length > SHOWN_TYPE_ERRORS && (
              <li className="muted">{t.moreTypeErrors(p.typeErrors.errors.length - SHOWN_TYPE_ERRORS)}</li>
            )}
          </ul>
        </div>
      )}
    </>
  );
});
