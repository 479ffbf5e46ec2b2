/**
 * The window's first reads — the lesson list, the learner's progress, then the first lesson —
 * started by the page's first script (boot.ts) before the main bundle has even arrived. What has
 * come back by the time React first renders is rendered at once (`arrived`): waiting for it in
 * effects cost a frame per step, and the lesson appeared a fifth of a second after the window.
 */
import type { Bridge } from "../../../bridge/client.js";
import type { LessonSummary } from "../../../bridge/contract.js";
import type { Lesson } from "../../../../lessons/schema.js";

export interface CourseStart {
  /** Sorted by `order`. */
  lessons: LessonSummary[];
  /** Saved lesson-flow snapshots by lesson id (empty when the host cannot read them). */
  progress: Record<string, unknown>;
  /** The learner's code per step (`<lesson id>/<step>[/break-<id>]`), as last saved. */
  code: Record<string, string>;
  /** The lesson opened first: `?lesson=` if it names one, else the one open last time, else the lowest `order`. */
  firstId: string | null;
  /** That lesson; null when there is none, or when it could not be read (opening it asks again). */
  first: Lesson | null;
}

export function firstLessonId(sorted: readonly LessonSummary[], search: string, last?: string | null): string | null {
  const fromUrl = new URLSearchParams(search).get("lesson");
  return sorted.find((l) => l.id === fromUrl)?.id ?? sorted.find((l) => l.id === last)?.id ?? sorted[0]?.id ?? null;
}

/** Resolves once the first lesson is in (or known to be missing); rejects when there is no list. */
export function startCourse(bridge: Bridge): Promise<CourseStart> {
  const progress = bridge
    .request("lessons.progress.get", {})
    .then((p) => ({ snapshots: p.snapshots, lessonId: p.lessonId ?? null, code: p.code ?? {} }))
    .catch(() => ({ snapshots: {}, lessonId: null, code: {} }));
  return bridge.request("lessons.list", {}).then(async (list) => {
    const lessons = [...list.lessons].sort((a, b) => a.order - b.order);
    // The place saved comes with the progress, asked for alongside the list: on loopback it is in
    // by the time the list is.
    const saved = await progress;
    const firstId = firstLessonId(lessons, globalThis.location?.search ?? "", saved.lessonId);
    const first = firstId
      ? bridge.request("lessons.load", { id: firstId }).then(
          (r) => r.lesson,
          () => null,
        )
      : null;
    return { lessons, progress: saved.snapshots, code: saved.code, firstId, first: await first };
  });
}

/** The course if it has already arrived, else undefined: for a render, which must not wait. */
export function arrivedSoFar(course: Promise<CourseStart>): () => CourseStart | undefined {
  let arrived: CourseStart | undefined;
  course.then(
    (c) => void (arrived = c),
    () => {},
  );
  return () => arrived;
}
