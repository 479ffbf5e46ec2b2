/**
 * The lesson flow: where a learner is in one lesson, as an xstate v5 machine.
 *
 *   notStarted ─START→ inProgress ─CHECKED(passed)→ stepPassed ─NEXT_STEP→ inProgress (next step)
 *                        │ working ─SHOW_HINT→ hintShown ─REVEAL_SOLUTION→ solutionRevealed
 *                        └─────────────── (last step) NEXT_STEP → completed
 *
 * The machine is pure: it never runs code or touches storage. The app (or the CLI) runs
 * the learner's program, evaluates the step's checks (lessons/checks.ts) and sends
 * CHECKED with the verdict. Progress is the persisted snapshot
 * (`actor.getPersistedSnapshot()`), plain JSON; lesson-progress.ts stores it per learner.
 */
import { assign, setup } from "xstate";
import { verdictPassed, type Verdict } from "../lessons/checks.js";

export interface LessonFlowInput {
  lessonId: string;
  /** How many hints each step has, in step order (its length is the number of steps). */
  hintCounts: number[];
}

export interface LessonFlowContext {
  lessonId: string;
  hintCounts: number[];
  /** The step on screen, 0-based. */
  step: number;
  /** Per step: hints shown so far (they are shown in order, gentle first). */
  hintsShown: number[];
  /** Per step: whether the reference solution was revealed. */
  solutionRevealed: boolean[];
  /** Per step: whether its checks have passed at least once. */
  passed: boolean[];
  /** Per step: how many times the checks were run. */
  attempts: number[];
  /** What failed on the last run of the current step (check details), for the goal list. */
  lastFailures: string[];
}

export type LessonFlowEvent =
  | { type: "START" }
  | { type: "SHOW_HINT" }
  | { type: "REVEAL_SOLUTION" }
  /** The learner's program ran and the step's checks were evaluated. */
  | { type: "CHECKED"; passed: boolean; failures?: string[] }
  | { type: "NEXT_STEP" }
  /** Jump to a step already reached (any passed step, or the first unpassed one). */
  | { type: "GO_TO_STEP"; step: number }
  | { type: "RESTART" };

const setAt = <T>(list: T[], i: number, v: T): T[] => list.map((x, j) => (j === i ? v : x));

function fresh(input: LessonFlowInput): LessonFlowContext {
  const n = input.hintCounts.length;
  return {
    lessonId: input.lessonId,
    hintCounts: [...input.hintCounts],
    step: 0,
    hintsShown: Array(n).fill(0),
    solutionRevealed: Array(n).fill(false),
    passed: Array(n).fill(false),
    attempts: Array(n).fill(0),
    lastFailures: [],
  };
}

/** The furthest step a learner may open: the first not yet passed (or the last one). */
export function furthestReachable(ctx: LessonFlowContext): number {
  const i = ctx.passed.indexOf(false);
  return i === -1 ? ctx.passed.length - 1 : i;
}

export const lessonMachine = setup({
  types: {
    context: {} as LessonFlowContext,
    events: {} as LessonFlowEvent,
    input: {} as LessonFlowInput,
  },
  guards: {
    hasMoreHints: ({ context }) => context.hintsShown[context.step]! < context.hintCounts[context.step]!,
    checksPassed: ({ event }) => event.type === "CHECKED" && event.passed,
    isLastStep: ({ context }) => context.step >= context.hintCounts.length - 1,
    stepReachable: ({ context, event }) =>
      event.type === "GO_TO_STEP" &&
      Number.isInteger(event.step) &&
      event.step >= 0 &&
      event.step <= furthestReachable(context),
    currentRevealed: ({ context }) => context.solutionRevealed[context.step] === true,
    currentHinted: ({ context }) => context.hintsShown[context.step]! > 0,
  },
  actions: {
    showHint: assign({
      hintsShown: ({ context }) => setAt(context.hintsShown, context.step, context.hintsShown[context.step]! + 1),
    }),
    revealSolution: assign({
      solutionRevealed: ({ context }) => setAt(context.solutionRevealed, context.step, true),
    }),
    recordAttempt: assign({
      attempts: ({ context }) => setAt(context.attempts, context.step, context.attempts[context.step]! + 1),
      lastFailures: ({ event }) => (event.type === "CHECKED" && !event.passed ? (event.failures ?? []) : []),
    }),
    markPassed: assign({ passed: ({ context }) => setAt(context.passed, context.step, true) }),
    nextStep: assign({ step: ({ context }) => context.step + 1, lastFailures: [] }),
    goToStep: assign({
      step: ({ context, event }) => (event.type === "GO_TO_STEP" ? event.step : context.step),
      lastFailures: [],
    }),
    restart: assign(({ context }) => fresh({ lessonId: context.lessonId, hintCounts: context.hintCounts })),
  },
}).createMachine({
  id: "lesson",
  context: ({ input }) => fresh(input),
  initial: "notStarted",
  on: {
    RESTART: { target: ".notStarted", actions: "restart" },
  },
  states: {
    notStarted: {
      on: { START: "inProgress" },
    },
    inProgress: {
      initial: "entering",
      on: {
        CHECKED: [
          { guard: "checksPassed", target: "stepPassed", actions: ["recordAttempt", "markPassed"] },
          { actions: "recordAttempt" },
        ],
        GO_TO_STEP: { guard: "stepReachable", target: "inProgress", reenter: true, actions: "goToStep" },
      },
      states: {
        /** Picks the sub-state that matches what this step has already shown (after a jump or a reload). */
        entering: {
          always: [
            { guard: "currentRevealed", target: "solutionRevealed" },
            { guard: "currentHinted", target: "hintShown" },
            { target: "working" },
          ],
        },
        working: {
          on: {
            SHOW_HINT: { guard: "hasMoreHints", target: "hintShown", actions: "showHint" },
            REVEAL_SOLUTION: { target: "solutionRevealed", actions: "revealSolution" },
          },
        },
        hintShown: {
          on: {
            SHOW_HINT: { guard: "hasMoreHints", actions: "showHint" },
            REVEAL_SOLUTION: { target: "solutionRevealed", actions: "revealSolution" },
          },
        },
        solutionRevealed: {
          on: {
            SHOW_HINT: { guard: "hasMoreHints", actions: "showHint" },
          },
        },
      },
    },
    stepPassed: {
      on: {
        NEXT_STEP: [
          { guard: "isLastStep", target: "completed" },
          { target: "inProgress", actions: "nextStep" },
        ],
        // Running again after passing is allowed (learners experiment); the step stays passed.
        CHECKED: { actions: "recordAttempt" },
        GO_TO_STEP: { guard: "stepReachable", target: "inProgress", actions: "goToStep" },
        SHOW_HINT: { guard: "hasMoreHints", actions: "showHint" },
        REVEAL_SOLUTION: { actions: "revealSolution" },
      },
    },
    completed: {
      on: {
        GO_TO_STEP: { guard: "stepReachable", target: "inProgress", actions: "goToStep" },
      },
    },
  },
});

export type LessonFlowState = "notStarted" | "working" | "hintShown" | "solutionRevealed" | "stepPassed" | "completed";

/** A flat name for the state a snapshot is in (the UI's badge). */
export function flowState(value: unknown): LessonFlowState {
  if (typeof value === "string") return value as LessonFlowState;
  const inner = (value as { inProgress?: string }).inProgress;
  return (inner === "entering" ? "working" : inner) as LessonFlowState;
}

/** True when a step counts as done. */
export function stepDone(ctx: LessonFlowContext, step: number): boolean {
  return ctx.passed[step] === true;
}

/**
 * Whether the goal list may say "✓ Step passed": the step has passed once (`ctx.passed`) and
 * nothing on screen contradicts it. A verdict on screen must be of the step's own goals (not
 * of a break-it variation, whose run fails them on purpose) and must pass by the checker's rule
 * (`verdictPassed`), so a learner who breaks a passed step again sees the failing goal, not
 * the banner. Before any run of this step, the record alone decides.
 */
export function stepPassedShown(everPassed: boolean, shown?: { verdict: Verdict; breakIt: boolean }): boolean {
  if (!everPassed) return false;
  if (!shown) return true;
  return !shown.breakIt && verdictPassed(shown.verdict);
}
