/** Loading lessons from disk reads only plain files inside each lesson's own folder. */
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LESSONS_DIR, cjkLineBreaks, lessonFolders, loadLesson, missingFigures } from "./load.js";

const root = mkdtempSync(join(tmpdir(), "verbslab-lessons-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("loading lessons", () => {
  it("does not follow a symlinked lesson file or folder out of the lesson folder", () => {
    const folder = lessonFolders()[0]!;
    cpSync(join(LESSONS_DIR, folder), join(root, folder), { recursive: true });
    expect(loadLesson(folder, root).lesson).toBeDefined();

    const secret = join(root, "..", `verbslab-secret-${process.pid}.txt`);
    writeFileSync(secret, "SECRET CONTENT");
    try {
      symlinkSync(secret, join(root, folder, "step-1.en.md.link"));
      symlinkSync(secret, join(root, folder, "lesson-notes.md"));
      const r = loadLesson(folder, root);
      expect(r.problems.filter((p) => p.includes("symbolic link"))).toHaveLength(2);
      expect(JSON.stringify(r)).not.toContain("SECRET CONTENT");

      // A lesson folder that is itself a link (to a folder elsewhere) is not a lesson folder.
      const elsewhere = join(root, "..", `verbslab-elsewhere-${process.pid}`);
      mkdirSync(elsewhere, { recursive: true });
      symlinkSync(elsewhere, join(root, "99-linked"));
      expect(lessonFolders(root)).not.toContain("99-linked");
      rmSync(elsewhere, { recursive: true, force: true });
    } finally {
      rmSync(secret, { force: true });
    }
  });
});

describe("lesson figures", () => {
  it("a figure a lesson names must be in assets/figures/", () => {
    const dir = mkdtempSync(join(tmpdir(), "verbslab-figures-"));
    mkdirSync(join(dir, "01-x"));
    writeFileSync(join(dir, "01-x", "step-1.en.md"), "![a](figure:kernel-bypass) ![b](figure:missing-one)\n");
    expect(missingFigures(dir)).toEqual([
      '01-x/step-1.en.md: figure "missing-one" is not in assets/figures/ (add missing-one.svg there)',
    ]);
    expect(missingFigures()).toEqual([]);
  });

  it("refuses a line break between two Chinese characters in a zh step text (it shows as a space)", () => {
    const dir = mkdtempSync(join(tmpdir(), "verbslab-cjk-"));
    mkdirSync(join(dir, "01-x"));
    writeFileSync(
      join(dir, "01-x", "step-1.zh.md"),
      [
        "然后接受连接；",
        "接着等待。这里换行在 `code`",
        "旁边，是真正的空格；",
        "- 列表项另起一行",
        "```",
        "代码块里；",
        "换行照旧",
        "```",
        "",
      ].join("\n"),
    );
    writeFileSync(join(dir, "01-x", "step-1.en.md"), "A line\nbreak in English.\n");
    expect(cjkLineBreaks(dir)).toEqual([
      "01-x/step-1.zh.md: line 1 breaks between two Chinese characters (shown as a space): join line 2 to it",
    ]);
    expect(cjkLineBreaks()).toEqual([]);
  });
});
