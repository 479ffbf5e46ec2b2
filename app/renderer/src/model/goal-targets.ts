/**
 * What the current step's goals aim at, for the panes to show beside what is, as Learn Git
 * Branching shows the goal beside your tree: the QP states its `qp_state` goals ask for (the
 * diagram marks them) and the bytes its `mr_bytes` goals ask for (the Memory tab shows them
 * beside the MR's). Pure.
 */
import { constValue, expectedBytes, type Verdict } from "../../../../lessons/checks.js";
import type { Check } from "../../../../lessons/schema.js";

/** QP #qp (creation order, as the goal counts) should end in `state`; `passed` once a run was judged. */
export interface StateGoal {
  qp: number;
  state: number;
  passed?: boolean;
}

/** MR #mr (creation order) should hold `bytes` at `offset` (given as text where the goal says text). */
export interface BytesGoal {
  mr: number;
  offset: number;
  bytes: Uint8Array;
  utf8?: string;
  passed?: boolean;
}

export interface GoalTargets {
  states: StateGoal[];
  bytes: BytesGoal[];
}

export const NO_GOALS: GoalTargets = { states: [], bytes: [] };

/** The targets of `checks`, each with its verdict where `verdict` judged this step's last run. */
export function goalTargets(checks: readonly Check[], verdict?: Pick<Verdict, "results">): GoalTargets {
  const out: GoalTargets = { states: [], bytes: [] };
  checks.forEach((c, i) => {
    const r = verdict?.results[i];
    const passed = r && { passed: r.passed };
    if (c.kind === "qp_state") out.states.push({ qp: c.qp, state: constValue(c.state), ...passed });
    else if (c.kind === "mr_bytes")
      out.bytes.push({
        mr: c.mr,
        offset: c.offset ?? 0,
        bytes: expectedBytes(c),
        ...(c.utf8 !== undefined && { utf8: c.utf8 }),
        ...passed,
      });
  });
  return out.states.length || out.bytes.length ? out : NO_GOALS;
}
