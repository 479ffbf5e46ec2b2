/**
 * `npm run lessons:check` inside `npm test`: every lesson is well formed, and every
 * reference solution, break-it variation and starter replays on the simulator as it should —
 * on rxe's profile, and on the "generic" NIC profile (sim/profile.ts), where only the checks
 * marked rxe-only may turn into explanations.
 */
import { describe, expect, it } from "vitest";
import { checkCourse } from "./course-check.js";

describe("the course on the simulator", () => {
  it("is well formed and every replay does what its step says", { timeout: 120_000 }, async () => {
    const result = await checkCourse("sim");
    expect(result.unavailable).toBeUndefined();
    expect(result.problems).toEqual([]);
    expect(result.failures).toEqual([]);
    expect(result.lessons).toBeGreaterThanOrEqual(5);
    // Each step replays at least its solution and its starter.
    expect(result.results.length).toBeGreaterThanOrEqual(2 * (result.steps - result.skipped.length));
    // On rxe every rxe-only fact is judged: nothing is explained away.
    expect(result.explained).toEqual([]);
    // A reference solution follows the course's own sizing rule: no CQ of it works only because
    // rxe rounded it up (the session's "cq_rounded_up" notice a learner would see under the diagram).
    const leansOnRounding = result.results
      .filter((r) => r.program.endsWith(".solution.ts"))
      .flatMap((r) =>
        r.transcript.events.flatMap((e) =>
          (e.kind === "verb" ? (e.notices ?? []) : [])
            .filter((n) => n.id === "cq_rounded_up")
            .map((n) => `${r.program}: ${n.text}`),
        ),
      );
    expect(leansOnRounding).toEqual([]);
  });

  it(
    "keeps every verdict on a generic RoCE NIC (--profile generic); rxe's facts are explained",
    { timeout: 120_000 },
    async () => {
      const rxe = await checkCourse("sim");
      const generic = await checkCourse("sim", { profile: "generic" });
      expect(generic.unavailable).toBeUndefined();
      expect(generic.failures).toEqual([]);
      // The same programs replayed, and each one with the same outcome (checkCourse fails none).
      expect(generic.results.map((r) => r.program)).toEqual(rxe.results.map((r) => r.program));
      // Every explanation comes from a check (or variation) marked rxe-only, never from another check.
      for (const r of generic.results)
        for (const x of r.verdict.results)
          if (x.explained && x.check.kind !== "counter") expect(x.check.rxeOnly).toBeDefined();
      const explained = new Map(generic.explained.map((e) => [e.program, e.lines.join("\n")]));
      // Lesson 6: the generic NIC sets no IBV_WC_GRH on an RC receive.
      expect(explained.get("06-first-message/step-1.solution.ts")).toContain("IBV_WC_GRH");
      // Lesson 4: it rounds a send queue of 10 to 16, not rxe's 15.
      expect(explained.get("04-completion-queues/step-1.solution.ts")).toContain('"query.max_send_wr" = 16');
      // Lesson 9: a flushed receive's opcode is not rxe's 0.
      expect(explained.get("09-when-it-breaks-1/step-1.solution.ts")).toContain("opcode 255");
      // Lesson 10: createCq(3) holds 4 there, so the off-by-one mistake shows only on rxe.
      expect(explained.get("10-when-it-breaks-2/step-3.break-off-by-one.ts")).toContain("whole variation");
    },
  );
});
