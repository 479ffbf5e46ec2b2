import { describe, expect, it } from "vitest";
import { IBV_QPS_INIT, IBV_QPS_RTS } from "../verbs/constants.js";
import type { QpAttr } from "../verbs/types.js";
import { evaluateChecks, type RunRecord } from "./checks.js";
import { replayProblems, type ReplayResult, type StepReplay } from "./replay.js";
import type { Check, Lesson, Step } from "./schema.js";

const stepChecks: Check[] = [
  { kind: "qp_state", qp: 0, state: "IBV_QPS_RTS" },
  { kind: "log", key: "chosen_gid_index", value: { min: 1 } },
];

function record(state: number, index: number): RunRecord {
  return {
    calls: [],
    wcs: [],
    qps: [{ qp_num: 0x11, attr: { qp_state: state } as QpAttr }],
    mrs: [],
    logs: [{ key: "chosen_gid_index", value: index }],
    counters: {},
  };
}

/** A break-it replay of a mistake whose own expectation (`checks`) always holds. */
function breakIt(stepFails: { goal: number; detail: string }[], run: RunRecord) {
  const checks: Check[] = [{ kind: "log", key: "chosen_gid_index", present: true }];
  const r = {
    step: { checks: stepChecks } as unknown as Step,
    lesson: {} as Lesson,
    variant: "oops",
    file: "",
    checks,
    stepFails,
  } as StepReplay;
  const result = { program: "x", verdict: evaluateChecks(checks, run), record: run } as ReplayResult;
  return replayProblems(r, result);
}

describe("a break-it variation is a mistake the step's goals catch", () => {
  it("passes when the named goals fail with the named detail", () => {
    expect(breakIt([{ goal: 1, detail: '"chosen_gid_index" = 0, expected ≥ 1' }], record(IBV_QPS_RTS, 0))).toEqual([]);
  });

  it("is refused when the step's goals all pass on the mistake", () => {
    expect(breakIt([], record(IBV_QPS_RTS, 1))).toEqual([
      "the step's own goals all pass on this mistake: the learner would be told the step is done",
    ]);
  });

  it("is refused when a named goal passes, or fails with another explanation", () => {
    const run = record(IBV_QPS_INIT, 1);
    expect(breakIt([{ goal: 1, detail: "expected ≥ 1" }], run)[0]).toMatch(
      /step goal 1 \(log\) passes, expected it to fail/,
    );
    expect(breakIt([{ goal: 0, detail: "expected IBV_QPS_ERR" }], run)[0]).toBe(
      'step goal 0 (qp_state) fails with "QP #0 (0x11) is IBV_QPS_INIT, expected IBV_QPS_RTS", expected "expected IBV_QPS_ERR"',
    );
  });
});
