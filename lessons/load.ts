/** Reads the course from disk (Node): every `NN-id/` folder under lessons/. */
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseLesson, validateCourse } from "./parse.js";
import type { Lesson } from "./schema.js";

/** The lessons/ folder of this checkout. */
export const LESSONS_DIR = dirname(fileURLToPath(import.meta.url));

export interface Course {
  lessons: Lesson[];
  /** Every problem found; a lesson with problems is left out of `lessons`. */
  problems: string[];
}

/**
 * Lesson folders are the ones named like `06-first-message`; everything else in lessons/ is
 * code. Links are never followed (lstat): a lesson reads only what lies in its own folder.
 */
export function lessonFolders(root = LESSONS_DIR): string[] {
  return readdirSync(root)
    .filter((name) => /^\d{2}-/.test(name) && lstatSync(join(root, name)).isDirectory())
    .sort();
}

export function loadLesson(folder: string, root = LESSONS_DIR): ReturnType<typeof parseLesson> {
  const dir = join(root, folder);
  const files: Record<string, string> = {};
  const problems: string[] = [];
  for (const name of readdirSync(dir)) {
    const st = lstatSync(join(dir, name));
    if (st.isDirectory()) problems.push(`${folder}/${name}/: stray folder`);
    else if (st.isSymbolicLink())
      problems.push(`${folder}/${name}: a symbolic link (lesson files must be plain files in the lesson's folder)`);
    else if (!st.isFile()) problems.push(`${folder}/${name}: not a plain file`);
    else files[name] = readFileSync(join(dir, name), "utf8");
  }
  const result = parseLesson(folder, files);
  return problems.length ? { problems: [...problems, ...result.problems] } : result;
}

export function loadCourse(root = LESSONS_DIR): Course {
  const lessons: Lesson[] = [];
  const problems: string[] = [];
  for (const folder of lessonFolders(root)) {
    const r = loadLesson(folder, root);
    problems.push(...r.problems);
    if (r.lesson) lessons.push(r.lesson);
  }
  problems.push(...validateCourse(lessons), ...missingFigures(root), ...cjkLineBreaks(root));
  return { lessons, problems };
}

/** The course's figures (the renderer bundles this folder: app/renderer/src/model/figures.ts). */
export const FIGURES_DIR = join(LESSONS_DIR, "..", "assets", "figures");

/** Every `![…](figure:name)` in a lesson's Markdown must name assets/figures/<name>.svg. */
export function missingFigures(root = LESSONS_DIR, figures = FIGURES_DIR): string[] {
  const out: string[] = [];
  for (const folder of lessonFolders(root))
    for (const name of readdirSync(join(root, folder)).filter((n) => n.endsWith(".md")))
      for (const m of readFileSync(join(root, folder, name), "utf8").matchAll(/\]\(figure:([^)\s]*)\)/g))
        if (!/^[a-z0-9][a-z0-9.-]*$/.test(m[1]!) || !existsSync(join(figures, `${m[1]}.svg`)))
          out.push(`${folder}/${name}: figure "${m[1]}" is not in assets/figures/ (add ${m[1]}.svg there)`);
  return out;
}

/** A Chinese character or full-width punctuation (the dashes and quotes Chinese text uses too). */
const CJK = "[\\u3000-\\u303f\\u3400-\\u9fff\\uff00-\\uffef\\u2014\\u2026\\u201c\\u201d\\u2018\\u2019]";
const ENDS_CJK = new RegExp(`${CJK}$`);
const STARTS_CJK = new RegExp(`^\\s*${CJK}`);
/** A line that starts a block of its own (list item, quote, table row, heading, fence, figure, blank). */
const STARTS_BLOCK = /^\s*([-*+]\s|\d+\.\s|>|\||#|```|!\[|$)/;

/**
 * Where a Chinese step text breaks a line between two Chinese characters. Markdown turns the
 * break into a space, and between Chinese characters the learner reads a stray gap ("连接； 接着"):
 * such a paragraph is written on one line (a break beside Latin text or code is a real space).
 */
export function cjkLineBreaks(root = LESSONS_DIR): string[] {
  const out: string[] = [];
  for (const folder of lessonFolders(root))
    for (const name of readdirSync(join(root, folder)).filter((n) => n.endsWith(".zh.md"))) {
      const lines = readFileSync(join(root, folder, name), "utf8").split("\n");
      let fence = false;
      lines.forEach((line, i) => {
        if (line.trimStart().startsWith("```")) fence = !fence;
        const next = lines[i + 1];
        if (fence || next === undefined || /^\s*(\||#)/.test(line) || line.endsWith("  ")) return;
        if (ENDS_CJK.test(line) && STARTS_CJK.test(next) && !STARTS_BLOCK.test(next))
          out.push(
            `${folder}/${name}: line ${i + 1} breaks between two Chinese characters (shown as a space): join line ${i + 2} to it`,
          );
      });
    }
  return out;
}
