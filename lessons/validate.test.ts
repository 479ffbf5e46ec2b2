import { describe, expect, it } from "vitest";
import { parseLesson } from "./parse.js";
import { LESSON_SCHEMA_VERSION } from "./schema.js";
import { validateLessonFile, validateProgram } from "./validate.js";

const t = (en: string, zh = "中文") => ({ en, zh });
const lesson = (over: Record<string, unknown> = {}) => ({
  schemaVersion: LESSON_SCHEMA_VERSION,
  id: "tiny",
  title: t("Tiny"),
  level: "beginner",
  prerequisites: [],
  intro: t("Intro"),
  steps: [
    {
      id: "one",
      title: t("One"),
      checks: [{ kind: "qp_state", qp: 0, state: "IBV_QPS_RTS" }],
      hints: [t("Hint")],
      breakIt: [
        {
          id: "oops",
          title: t("Oops"),
          observe: t("EINVAL"),
          checks: [{ kind: "error", verb: "ibv_modify_qp", code: "EINVAL" }],
        },
      ],
    },
  ],
  ...over,
});
const program =
  'import type { Verbs } from "verbslab";\nexport default async function main(verbs: Verbs) {\n  await verbs.sleep(1);\n}\n';
const files = (json: unknown, extra: Record<string, string> = {}) => ({
  "lesson.json": JSON.stringify(json),
  "step-1.en.md": "# One",
  "step-1.zh.md": "# 第一步",
  "step-1.starter.ts": program,
  "step-1.solution.ts": program,
  "step-1.break-oops.ts": program,
  ...extra,
});

describe("lesson validation", () => {
  it("accepts a well-formed lesson", () => {
    const r = parseLesson("01-tiny", files(lesson()));
    expect(r.problems).toEqual([]);
    expect(r.lesson?.steps[0]?.breakItCode.oops).toBe(program);
  });

  it("refuses a wrong schema version, a step without hints, duplicate step ids, missing Chinese", () => {
    expect(validateLessonFile(lesson({ schemaVersion: 99 })).join()).toMatch(/schemaVersion/);
    const noHints = lesson();
    (noHints.steps as { hints: unknown[] }[])[0]!.hints = [];
    expect(validateLessonFile(noHints).join()).toMatch(/hint/);
    const dup = lesson();
    (dup.steps as unknown[]).push((dup.steps as unknown[])[0]);
    expect(validateLessonFile(dup).join()).toMatch(/duplicate step id/);
    expect(validateLessonFile(lesson({ title: { en: "Tiny", zh: "Tiny" } })).join()).toMatch(/no Chinese/);
    const badCheck = lesson();
    (badCheck.steps as { checks: unknown[] }[])[0]!.checks = [{ kind: "wc", status: "IBV_WC_NOPE" }];
    expect(validateLessonFile(badCheck).join()).toMatch(/constant/);
  });

  it("refuses a stepFails entry that names no step goal, and a log check with an empty prefix", () => {
    const bad = lesson();
    const step = (bad.steps as { checks: unknown[]; breakIt: Record<string, unknown>[] }[])[0]!;
    step.breakIt[0]!.stepFails = [{ goal: 3, detail: "x" }];
    expect(validateLessonFile(bad).join()).toMatch(
      /stepFails\[0\]\.goal: must be the index of one of the step's 1 checks/,
    );
    step.breakIt[0]!.stepFails = [{ goal: 0, detail: "is IBV_QPS_INIT" }];
    expect(validateLessonFile(bad)).toEqual([]);
    step.checks = [{ kind: "log", key: "gid", prefix: "" }];
    expect(validateLessonFile(bad).join()).toMatch(/prefix: must be a non-empty string/);
  });

  it("refuses stray and missing files, and a folder that does not match the id", () => {
    expect(parseLesson("01-tiny", files(lesson(), { "notes.txt": "x" })).problems.join()).toMatch(/stray/);
    const missing: Record<string, string> = files(lesson());
    delete missing["step-1.zh.md"];
    expect(parseLesson("01-tiny", missing).problems.join()).toMatch(/step-1.zh.md: missing/);
    expect(parseLesson("01-other", files(lesson())).problems.join()).toMatch(/folder name/);
  });

  it("flags a verb that is not awaited", () => {
    expect(validateProgram("p.ts", program)).toEqual([]);
    const fireAndForget = program.replace("await verbs.sleep(1);", "qp.postSend(wr);");
    expect(validateProgram("p.ts", fireAndForget).join()).toMatch(/postSend` is not awaited/);
  });
});
