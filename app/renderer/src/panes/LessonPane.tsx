/** The lesson: title, steps with progress, the step's text (English or 中文), its goal checks turning green, hints. */
import { memo } from "react";
import type { Language, Lesson } from "../../../../lessons/schema.js";
import { describeCheck, goalContext, type Verdict } from "../../../../lessons/checks.js";
import { stepPassedShown } from "../../../../state-machines/lesson.js";
import { Markdown } from "./Markdown.js";
import { useStrings } from "../i18n.js";
import { collapseEscapeRuns } from "../model/format.js";

/** Where the learner is, as the lesson flow machine (state-machines/lesson.ts) says. */
export interface LessonFlowView {
  /** The step on screen, 0-based. */
  step: number;
  passed: boolean[];
  hintsShown: number[];
  solutionRevealed: boolean[];
  completed: boolean;
}

export interface LessonPaneProps {
  lesson?: Lesson;
  flow: LessonFlowView;
  lang: Language;
  /** The verdict on the last run of the current step; undefined before any run. */
  verdict?: Verdict;
  /** A check is being evaluated or a program is running. */
  busy?: boolean;
  onStep: (index: number) => void;
  onLang: (lang: Language) => void;
  onHint: () => void;
  onSolution: () => void;
  onNext: () => void;
  /** The next lesson's title, offered once this lesson's last step passed; absent after the last lesson. */
  nextLesson?: string;
  onNextLesson?: () => void;
  /** Load a "break it" variation into the editor (its id), or go back to the step's own code (null). */
  onBreakIt: (id: string | null) => void;
  /** The variation in the editor, if any. */
  breakIt?: string | null;
}

export const LessonPane = memo(function LessonPane(p: LessonPaneProps) {
  const { lesson, flow, lang, verdict } = p;
  const ui = useStrings();
  if (!lesson) return <p className="empty">{ui.noLesson}</p>;
  const step = lesson.steps[flow.step];
  if (!step) return <p className="empty">{ui.noLesson}</p>;
  const done = flow.passed.filter(Boolean).length;
  const hints = flow.hintsShown[flow.step] ?? 0;
  const isLast = flow.step === lesson.steps.length - 1;
  // With a break-it variation in the editor, its own checks say what the learner should see.
  const active = p.breakIt ? step.breakIt?.find((b) => b.id === p.breakIt) : undefined;
  const checks = active?.checks ?? step.checks;
  const passedShown = stepPassedShown(flow.passed[flow.step] === true, verdict && { verdict, breakIt: !!active });
  return (
    <div className="lesson" data-lesson={lesson.id} data-step={step.number}>
      <div style={{ display: "flex", alignItems: "center", gap: 8 }}>
        <h1 style={{ flex: 1 }}>{lesson.title[lang]}</h1>
        <select value={lang} onChange={(e) => p.onLang(e.target.value as Language)} aria-label="language">
          <option value="en">English</option>
          <option value="zh">中文</option>
        </select>
      </div>
      <div className="progress" title={`${done}/${lesson.steps.length}`} data-testid="lesson-progress">
        <div style={{ width: `${(100 * done) / lesson.steps.length}%` }} />
      </div>
      <ol className="steps">
        {lesson.steps.map((s, i) => {
          const reachable = i === 0 || flow.passed[i - 1] || flow.passed[i];
          return (
            <li
              key={s.id}
              className={i === flow.step ? "current" : undefined}
              aria-disabled={!reachable}
              style={reachable ? undefined : { opacity: 0.5, cursor: "default" }}
              onClick={() => reachable && p.onStep(i)}
            >
              <span className={`dot${flow.passed[i] ? " done" : ""}`}>{flow.passed[i] ? "✓" : s.number}</span>
              {s.title[lang]}
            </li>
          );
        })}
      </ol>
      <Markdown text={step.text[lang]} />
      <h4 style={{ margin: "10px 0 4px" }}>{ui.goals}</h4>
      <ul className="checks" data-testid="checks">
        {checks.map((c, i) => {
          const r = verdict?.results[i];
          const cls = r === undefined ? undefined : r.passed ? "pass" : "fail";
          return (
            <li key={i} className={cls} data-pass={r === undefined ? undefined : String(r.passed)}>
              <span className="mark">{r === undefined ? "○" : r.passed ? "✓" : "✗"}</span>
              <span>
                {describeCheck(c, lang, goalContext(step, lang), verdict)}
                {r && !r.passed && r.detail && (
                  <div className="muted">{collapseEscapeRuns(r.details?.[lang] ?? r.detail)}</div>
                )}
              </span>
            </li>
          );
        })}
      </ul>
      {verdict?.unexpectedError && (
        <div className="hint bad-hint">
          <code>{verdict.unexpectedError.code ?? verdict.unexpectedError.name ?? "Error"}</code>{" "}
          {verdict.unexpectedError.why
            ? [verdict.unexpectedError.verb, ui.verbWhy(verdict.unexpectedError.why)].filter(Boolean).join(": ")
            : verdict.unexpectedError.message}
        </div>
      )}
      {/* Passed in an earlier visit, nothing run since: the goals above are unchecked, so say when it passed. */}
      {passedShown && !verdict && (
        <div className="passed-banner before" data-testid="step-passed-before">
          ✓ {ui.passedBefore}
        </div>
      )}
      {passedShown && verdict && (
        <div className="passed-banner" data-testid="step-passed">
          ✓ {flow.completed ? ui.lessonDone : ui.stepPassed}
        </div>
      )}
      {step.hints.slice(0, hints).map((h, i) => (
        <div key={i} className="hint">
          <Markdown text={h[lang]} />
        </div>
      ))}
      {step.breakIt && step.breakIt.length > 0 && (
        <div className="break-it">
          <h4 style={{ margin: "10px 0 4px" }}>{ui.breakIt}</h4>
          {step.breakIt.map((b) => (
            <div key={b.id} className={`break-item${p.breakIt === b.id ? " active" : ""}`}>
              <button data-break-it={b.id} onClick={() => p.onBreakIt(p.breakIt === b.id ? null : b.id)}>
                {p.breakIt === b.id ? ui.backToStep : `⚡ ${b.title[lang]}`}
              </button>
              {p.breakIt === b.id && verdict && <Markdown text={b.observe[lang]} />}
            </div>
          ))}
        </div>
      )}
      <div style={{ display: "flex", gap: 6, flexWrap: "wrap", marginTop: 6 }}>
        {hints < step.hints.length && <button onClick={p.onHint}>{hints === 0 ? ui.hint : ui.moreHint}</button>}
        <button onClick={p.onSolution}>{ui.solution}</button>
        {flow.passed[flow.step] && !isLast && (
          <button className="primary" onClick={p.onNext} data-testid="next-step">
            {ui.nextStep}
          </button>
        )}
        {flow.passed[flow.step] && isLast && p.nextLesson && p.onNextLesson && (
          <button className="primary" onClick={p.onNextLesson} data-testid="next-lesson">
            {ui.nextLesson} {p.nextLesson} →
          </button>
        )}
      </div>
    </div>
  );
});
