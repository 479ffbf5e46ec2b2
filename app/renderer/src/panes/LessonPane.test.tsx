/** The goal list as a learner sees it: which goal failed and why, and when the step counts as passed. */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { evaluateChecks, type Verdict } from "../../../../lessons/checks.js";
import { IBV_QPS_INIT } from "../../../../verbs/constants.js";
import type { QpAttr } from "../../../../verbs/types.js";
import type { Lesson } from "../../../../lessons/schema.js";
import { LessonPane, type LessonFlowView } from "./LessonPane.js";

const t = (en: string) => ({ en, zh: `${en}（中文）` });
const lesson = {
  id: "first-message",
  title: t("First message"),
  steps: [
    {
      id: "send-recv",
      number: 1,
      title: t("SEND into a posted RECV"),
      text: t("Post a RECV with wr_id 200, then a SEND with wr_id 100."),
      hints: [],
      starter: "",
      checks: [
        { kind: "wc", qp: 0, status: "IBV_WC_SUCCESS", opcode: "IBV_WC_SEND", wr_id: 100 },
        { kind: "qp_state", qp: 0, state: "IBV_QPS_RTS" },
      ],
    },
  ],
} as unknown as Lesson;
const flow: LessonFlowView = { step: 0, passed: [true], hintsShown: [0], solutionRevealed: [false], completed: false };
const noop = () => {};
const render = (verdict?: Verdict, breakIt?: string, lang: "en" | "zh" = "en") =>
  renderToStaticMarkup(
    <LessonPane
      lesson={lesson}
      flow={flow}
      lang={lang}
      {...(verdict && { verdict })}
      onStep={noop}
      onLang={noop}
      onHint={noop}
      onSolution={noop}
      onNext={noop}
      onBreakIt={noop}
      breakIt={breakIt ?? null}
    />,
  );
const rts = { check: lesson.steps[0]!.checks[1]!, passed: true, detail: "QP #0 (0x11) is IBV_QPS_RTS" };

describe("LessonPane goals", () => {
  it("states the whole check in a generated goal", () => {
    expect(render()).toContain("A work completion on QP #0: IBV_WC_SUCCESS, opcode IBV_WC_SEND, wr_id 100");
  });

  it("shows the failed constraint under a red goal, and no 'Step passed' although the step passed before", () => {
    const failing: Verdict = {
      passed: false,
      results: [
        {
          check: lesson.steps[0]!.checks[0]!,
          passed: false,
          detail: "no completion on QP #0 matches: nearest has wr_id 0, expected 100",
        },
        rts,
      ],
    };
    const s = render(failing);
    expect(s).toMatch(/data-pass="false"[^]*wr_id 0, expected 100/);
    expect(s).not.toContain('data-testid="step-passed"');
  });

  it("shows 'Step passed' when every goal on screen passed", () => {
    const passing: Verdict = {
      passed: true,
      results: [{ check: lesson.steps[0]!.checks[0]!, passed: true, detail: "1 matching completion(s)" }, rts],
    };
    expect(render(passing)).toContain('data-testid="step-passed"');
    // Passed before, nothing run since: said as such, not as a result of the unchecked goals on screen.
    expect(render()).toContain('data-testid="step-passed-before"');
    expect(render()).not.toContain('data-testid="step-passed"');
  });

  it("shows a failure in the learner's language", () => {
    const r = evaluateChecks(lesson.steps[0]!.checks, {
      calls: [],
      wcs: [],
      qps: [{ qp_num: 0x11, attr: { qp_state: IBV_QPS_INIT } as QpAttr }],
      mrs: [],
      logs: [],
      counters: {},
    });
    const zh = render(r, undefined, "zh");
    expect(zh).toContain("没有轮询到任何完成");
    expect(zh).toContain("QP #0 (0x11) 处于 IBV_QPS_INIT，期望 IBV_QPS_RTS");
    expect(render(r)).toContain("QP #0 (0x11) is IBV_QPS_INIT, expected IBV_QPS_RTS");
    expect(zh).not.toContain('data-testid="step-passed"');
  });
});
