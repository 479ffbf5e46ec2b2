/**
 * `npm run lessons:check` inside `npm test`: every lesson is well formed, and every
 * reference solution, break-it variation and starter replays on the simulator as it should.
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
  });
});
