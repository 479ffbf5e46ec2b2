/**
 * Turns one lesson folder's files into a `Lesson`, without touching the filesystem, so
 * the same code serves Node (lessons/load.ts) and the renderer (files bundled by Vite).
 */
import { LANGUAGES, type Lesson, type LessonFile, type Step } from "./schema.js";
import { validateFileList, validateLessonFile, validateProgram } from "./validate.js";

/** `06-first-message` → order 6; the folder name's tail must equal the lesson id. */
const FOLDER = /^(\d{2})-([a-z0-9-]+)$/;

export interface ParseResult {
  lesson?: Lesson;
  problems: string[];
}

/** Parses a lesson folder given as `file name → text`. Any problem means `lesson` is absent. */
export function parseLesson(folder: string, files: Record<string, string>): ParseResult {
  const m = FOLDER.exec(folder);
  if (!m) return { problems: [`${folder}: folder must be named <NN>-<lesson id>`] };
  const raw = files["lesson.json"];
  if (raw === undefined) return { problems: [`${folder}/lesson.json: missing`] };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    return { problems: [`${folder}/lesson.json: not JSON (${(err as Error).message})`] };
  }
  const problems = validateLessonFile(json, `${folder}/lesson.json`);
  if (problems.length > 0) return { problems };
  const file = json as LessonFile;
  if (file.id !== m[2]) problems.push(`${folder}: folder name must end with the lesson id "${file.id}"`);
  problems.push(...validateFileList(folder, file, Object.keys(files)));
  if (problems.length > 0) return { problems };

  const steps: Step[] = file.steps.map((s, i) => {
    const n = i + 1;
    const name = (suffix: string) => `step-${n}.${suffix}`;
    const text: Step["text"] = { en: files[name("en.md")]!, zh: files[name("zh.md")]! };
    for (const lang of LANGUAGES) if (text[lang].trim() === "") problems.push(`${folder}/${name(`${lang}.md`)}: empty`);
    if (!/[\u4e00-\u9fff]/.test(text.zh)) problems.push(`${folder}/${name("zh.md")}: has no Chinese characters`);
    const breakItFiles = Object.fromEntries((s.breakIt ?? []).map((b) => [b.id, name(`break-${b.id}.ts`)]));
    const programs: Record<string, string> = {
      [name("starter.ts")]: files[name("starter.ts")]!,
      [name("solution.ts")]: files[name("solution.ts")]!,
      ...Object.fromEntries(Object.values(breakItFiles).map((f) => [f, files[f]!])),
    };
    for (const [f, code] of Object.entries(programs)) problems.push(...validateProgram(`${folder}/${f}`, code));
    return {
      ...s,
      number: n,
      text,
      starter: files[name("starter.ts")]!,
      solution: files[name("solution.ts")]!,
      files: { starter: name("starter.ts"), solution: name("solution.ts"), breakIt: breakItFiles },
      breakItCode: Object.fromEntries(Object.entries(breakItFiles).map(([id, f]) => [id, files[f]!])),
    };
  });
  if (problems.length > 0) return { problems };
  const { steps: _steps, ...rest } = file;
  return { lesson: { ...rest, folder, order: Number(m[1]), steps }, problems };
}

/** Problems across the whole course: duplicate ids and orders, unknown or later prerequisites. */
export function validateCourse(lessons: Lesson[]): string[] {
  const out: string[] = [];
  const byId = new Map<string, Lesson>();
  const orders = new Set<number>();
  for (const l of lessons) {
    if (byId.has(l.id)) out.push(`${l.folder}: duplicate lesson id "${l.id}" (also ${byId.get(l.id)!.folder})`);
    byId.set(l.id, l);
    if (orders.has(l.order)) out.push(`${l.folder}: duplicate lesson number ${l.order}`);
    orders.add(l.order);
  }
  for (const l of lessons) {
    for (const pre of l.prerequisites) {
      const p = byId.get(pre);
      if (!p) out.push(`${l.folder}: unknown prerequisite "${pre}"`);
      else if (p.order >= l.order) out.push(`${l.folder}: prerequisite "${pre}" comes later in the course`);
    }
  }
  return out;
}
