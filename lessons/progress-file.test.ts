import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { flowState } from "../state-machines/lesson.js";
import { startLessonFlow } from "../state-machines/lesson-progress.js";
import { createJsonFileProgressStore } from "./progress-file.js";

describe("JSON file progress store", () => {
  it("keeps progress per learner across restarts", () => {
    const path = join(mkdtempSync(join(tmpdir(), "verbslab-progress-")), "sub", "progress.json");
    const input = { lessonId: "qp-state-machine", hintCounts: [3, 3] };
    const a = startLessonFlow(createJsonFileProgressStore(path), "ada", input);
    a.send({ type: "START" });
    a.send({ type: "CHECKED", passed: true });
    a.stop();
    const onDisk = JSON.parse(readFileSync(path, "utf8"));
    expect(Object.keys(onDisk)).toEqual(["ada"]);

    const b = startLessonFlow(createJsonFileProgressStore(path), "ada", input);
    expect(flowState(b.getSnapshot().value)).toBe("stepPassed");
    expect(b.getSnapshot().context.passed).toEqual([true, false]);
  });

  it("reads an unreadable file as no progress", () => {
    const path = join(mkdtempSync(join(tmpdir(), "verbslab-progress-")), "progress.json");
    writeFileSync(path, "garbage");
    expect(createJsonFileProgressStore(path).load("ada", "x")).toBeUndefined();
  });
});
