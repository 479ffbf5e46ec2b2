/** Run, Step, Continue, Stop, Reset, with what the program is paused before. */
import { useStrings } from "../i18n.js";
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
  const t = useStrings();
  return (
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
      <button onClick={p.onStep} disabled={!p.ready || (p.running && !p.paused)} data-action="step" title={t.stepTitle}>
        {t.step}
        <kbd>F10</kbd>
      </button>
      <button onClick={p.onContinue} disabled={!p.running} data-action="continue" title={t.continueTitle}>
        {t.continue}
        <kbd>F8</kbd>
      </button>
      <button onClick={p.onStop} disabled={!p.running} data-action="stop" title={t.stopTitle}>
        {t.stop}
      </button>
      <button onClick={p.onReset} disabled={p.running} data-action="reset" title={t.resetTitle}>
        {t.reset}
      </button>
      {p.paused && p.pausedBefore && (
        <span className="paused" data-testid="paused-before" title={`${t.pausedBefore} ${p.pausedBefore}`}>
          {t.pausedBefore} {p.pausedBefore}
        </span>
      )}
    </div>
  );
});
