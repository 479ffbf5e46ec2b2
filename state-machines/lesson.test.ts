import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import type { Verdict } from "../lessons/checks.js";
import { flowState, furthestReachable, lessonMachine, stepPassedShown } from "./lesson.js";
import { createStorageProgressStore, memoryStorage, snapshotFits, startLessonFlow } from "./lesson-progress.js";

const input = { lessonId: "first-message", hintCounts: [2, 1, 3] };
const start = () => createActor(lessonMachine, { input }).start();
const state = (a: ReturnType<typeof start>) => flowState(a.getSnapshot().value);

describe("lesson flow", () => {
  it("starts not started, then works on step 0", () => {
    const a = start();
    expect(state(a)).toBe("notStarted");
    a.send({ type: "SHOW_HINT" }); // nothing to hint before the lesson starts
    expect(state(a)).toBe("notStarted");
    a.send({ type: "START" });
    expect(state(a)).toBe("working");
    expect(a.getSnapshot().context.step).toBe(0);
  });

  it("shows hints in order and no more than the step has", () => {
    const a = start();
    a.send({ type: "START" });
    a.send({ type: "SHOW_HINT" });
    expect(state(a)).toBe("hintShown");
    a.send({ type: "SHOW_HINT" });
    a.send({ type: "SHOW_HINT" });
    expect(a.getSnapshot().context.hintsShown).toEqual([2, 0, 0]);
  });

  it("a failed run stays on the step and records what failed; a passed run moves to stepPassed", () => {
    const a = start();
    a.send({ type: "START" });
    a.send({ type: "CHECKED", passed: false, failures: ["QP #0 is IBV_QPS_INIT"] });
    expect(state(a)).toBe("working");
    expect(a.getSnapshot().context.lastFailures).toEqual(["QP #0 is IBV_QPS_INIT"]);
    expect(a.getSnapshot().context.attempts[0]).toBe(1);
    a.send({ type: "CHECKED", passed: true });
    expect(state(a)).toBe("stepPassed");
    expect(a.getSnapshot().context.passed).toEqual([true, false, false]);
    expect(a.getSnapshot().context.lastFailures).toEqual([]);
  });

  it("cannot skip ahead past an unpassed step, but can go back", () => {
    const a = start();
    a.send({ type: "START" });
    a.send({ type: "GO_TO_STEP", step: 2 });
    expect(a.getSnapshot().context.step).toBe(0);
    a.send({ type: "CHECKED", passed: true });
    a.send({ type: "NEXT_STEP" });
    expect(a.getSnapshot().context.step).toBe(1);
    expect(furthestReachable(a.getSnapshot().context)).toBe(1);
    a.send({ type: "GO_TO_STEP", step: 0 });
    expect(a.getSnapshot().context.step).toBe(0);
    expect(state(a)).toBe("working");
  });

  it("revealing the solution is remembered per step, also after jumping away and back", () => {
    const a = start();
    a.send({ type: "START" });
    a.send({ type: "REVEAL_SOLUTION" });
    expect(state(a)).toBe("solutionRevealed");
    a.send({ type: "CHECKED", passed: true });
    a.send({ type: "NEXT_STEP" });
    expect(state(a)).toBe("working");
    a.send({ type: "GO_TO_STEP", step: 0 });
    expect(state(a)).toBe("solutionRevealed");
    expect(a.getSnapshot().context.solutionRevealed).toEqual([true, false, false]);
  });

  it("completes after the last step passes, and RESTART clears everything", () => {
    const a = start();
    a.send({ type: "START" });
    for (let i = 0; i < 3; i++) {
      a.send({ type: "CHECKED", passed: true });
      a.send({ type: "NEXT_STEP" });
    }
    expect(state(a)).toBe("completed");
    a.send({ type: "RESTART" });
    expect(state(a)).toBe("notStarted");
    expect(a.getSnapshot().context.passed).toEqual([false, false, false]);
  });
});

describe("lesson progress", () => {
  it("saves every change and restores a learner where they left off", () => {
    const storage = memoryStorage();
    const store = createStorageProgressStore(storage);
    const a = startLessonFlow(store, "ada", input);
    a.send({ type: "START" });
    a.send({ type: "SHOW_HINT" });
    a.send({ type: "CHECKED", passed: true });
    a.send({ type: "NEXT_STEP" });
    a.stop();
    // The snapshot is plain JSON.
    const saved = store.load("ada", input.lessonId);
    expect(JSON.parse(JSON.stringify(saved))).toEqual(saved);

    const b = startLessonFlow(store, "ada", input);
    expect(b.getSnapshot().context.step).toBe(1);
    expect(b.getSnapshot().context.hintsShown).toEqual([1, 0, 0]);
    expect(flowState(b.getSnapshot().value)).toBe("working");
    // Another learner starts fresh.
    const c = startLessonFlow(store, "grace", input);
    expect(flowState(c.getSnapshot().value)).toBe("notStarted");
  });

  it("starts afresh when the lesson changed since the snapshot was saved", () => {
    const store = createStorageProgressStore(memoryStorage());
    const a = startLessonFlow(store, "ada", input);
    a.send({ type: "START" });
    a.stop();
    const changed = { lessonId: input.lessonId, hintCounts: [2, 1] };
    expect(snapshotFits(store.load("ada", input.lessonId), changed)).toBe(false);
    const b = startLessonFlow(store, "ada", changed);
    expect(flowState(b.getSnapshot().value)).toBe("notStarted");
  });

  it("treats a corrupt entry as no progress", () => {
    const storage = memoryStorage();
    storage.setItem("verbslab.progress.ada.first-message", "{not json");
    const store = createStorageProgressStore(storage);
    expect(store.load("ada", "first-message")).toBeUndefined();
  });
});

describe("✓ Step passed", () => {
  const goal = (passed: boolean) => ({
    check: { kind: "qp_state", qp: 0, state: "IBV_QPS_RTS" } as const,
    passed,
    detail: passed ? "QP #0 is IBV_QPS_RTS" : "QP #0 is IBV_QPS_INIT, expected IBV_QPS_RTS",
  });
  const verdict = (...goals: boolean[]): Verdict => ({ passed: goals.every(Boolean), results: goals.map(goal) });

  it("is never shown while a goal of the step is failing, even after the step once passed", () => {
    // The flow records the pass; a later run that breaks a goal again stays in stepPassed.
    const a = start();
    a.send({ type: "START" });
    a.send({ type: "CHECKED", passed: true });
    a.send({ type: "CHECKED", passed: false, failures: ["QP #0 is IBV_QPS_INIT, expected IBV_QPS_RTS"] });
    const everPassed = a.getSnapshot().context.passed[0]!;
    expect(everPassed).toBe(true);
    expect(stepPassedShown(everPassed, { verdict: verdict(true, false), breakIt: false })).toBe(false);
    expect(stepPassedShown(everPassed, { verdict: verdict(true, true), breakIt: false })).toBe(true);
    // Before any run of the step on screen, the record decides.
    expect(stepPassedShown(everPassed)).toBe(true);
    expect(stepPassedShown(false)).toBe(false);
  });

  it("follows the goals, not a verdict's own flag, and an unexpected error fails it", () => {
    const inconsistent = { ...verdict(false), passed: true };
    expect(stepPassedShown(true, { verdict: inconsistent, breakIt: false })).toBe(false);
    const threw = { ...verdict(true), unexpectedError: { message: "ibv_post_send: EINVAL" } };
    expect(stepPassedShown(true, { verdict: threw, breakIt: false })).toBe(false);
  });

  it("is not shown over a break-it run, whose goals are the mistake's", () => {
    expect(stepPassedShown(true, { verdict: verdict(true), breakIt: true })).toBe(false);
  });
});
