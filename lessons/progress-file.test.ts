import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { flowState } from "../state-machines/lesson.js";
import { startLessonFlow } from "../state-machines/lesson-progress.js";
import { createJsonFileProgressStore, openLearnerProfile } from "./progress-file.js";

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

describe("learner profiles", () => {
  const input = { lessonId: "qp-state-machine", hintCounts: [3, 3] };
  it("keeps each profile's progress, lesson and code in its own folder", () => {
    const data = mkdtempSync(join(tmpdir(), "verbslab-data-"));
    const ada = openLearnerProfile(data, "ada");
    const a = startLessonFlow(ada.progress, ada.name, input);
    a.send({ type: "START" });
    a.send({ type: "CHECKED", passed: true });
    a.stop();
    ada.setLesson("qp-state-machine");
    ada.setCode("qp-state-machine/2", "// ada's");
    ada.setCode("qp-state-machine/2/break-no-rtr", "// broken");
    expect(existsSync(join(data, "profiles", "ada", "progress.json"))).toBe(true);

    const again = openLearnerProfile(data, "ada");
    expect(again.workspace()).toEqual({
      lessonId: "qp-state-machine",
      code: { "qp-state-machine/2": "// ada's", "qp-state-machine/2/break-no-rtr": "// broken" },
    });
    expect(flowState(startLessonFlow(again.progress, "ada", input).getSnapshot().value)).toBe("stepPassed");

    const bob = openLearnerProfile(data, "bob");
    expect(bob.workspace()).toEqual({ lessonId: null, code: {} });
    expect(bob.progress.load("bob", "qp-state-machine")).toBeUndefined();
  });

  it("refuses names that are not a plain folder name, and code keys that name no step", () => {
    const data = mkdtempSync(join(tmpdir(), "verbslab-data-"));
    for (const bad of ["", "..", "../x", "a/b", ".hidden", "x".repeat(65)])
      expect(() => openLearnerProfile(data, bad)).toThrow(/profile name/);
    const p = openLearnerProfile(data);
    expect(() => p.setCode("../etc", "x")).toThrow(/code key/);
    expect(() => p.setCode("lesson/0", "x")).toThrow(/code key/);
    expect(p.workspace().code).toEqual({});
  });

  it("the default profile takes over the one progress.json older versions kept", () => {
    const data = mkdtempSync(join(tmpdir(), "verbslab-data-"));
    const old = createJsonFileProgressStore(join(data, "progress.json"));
    const a = startLessonFlow(old, "default", input);
    a.send({ type: "START" });
    a.send({ type: "CHECKED", passed: true });
    a.stop();
    const p = openLearnerProfile(data);
    expect(p.dir).toBe(join(data, "profiles", "default"));
    expect(flowState(startLessonFlow(p.progress, p.name, input).getSnapshot().value)).toBe("stepPassed");
  });
});
