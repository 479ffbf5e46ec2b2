/**
 * The window's first reads — the lesson list, the learner's progress, then the first lesson —
 * started by the entry before React renders. Issued from the lesson flow's effects instead,
 * each round trip waited behind one of Monaco's long tasks and the lesson appeared last.
 */
import type { Bridge } from "../../../bridge/client.js";
import type { LessonSummary } from "../../../bridge/contract.js";
import type { Lesson } from "../../../../lessons/schema.js";

export interface CourseStart {
  /** Sorted by `order`. */
  lessons: LessonSummary[];
  /** Saved lesson-flow snapshots by lesson id (empty when the host cannot read them). */
  progress: Record<string, unknown>;
  /** The lesson opened first: `?lesson=` if it names one, else the lowest `order`. */
  firstId: string | null;
  /** That lesson, already requested. */
  first: Promise<Lesson> | null;
}

export function firstLessonId(sorted: readonly LessonSummary[], search: string): string | null {
  const fromUrl = new URLSearchParams(search).get("lesson");
  return sorted.find((l) => l.id === fromUrl)?.id ?? sorted[0]?.id ?? null;
}

export function startCourse(bridge: Bridge): Promise<CourseStart> {
  const progress = bridge
    .request("lessons.progress.get", {})
    .then((p) => p.snapshots)
    .catch(() => ({}));
  return bridge.request("lessons.list", {}).then(async (list) => {
    const lessons = [...list.lessons].sort((a, b) => a.order - b.order);
    const firstId = firstLessonId(lessons, globalThis.location?.search ?? "");
    const first = firstId ? bridge.request("lessons.load", { id: firstId }).then((r) => r.lesson) : null;
    first?.catch(() => {}); // whoever opens the lesson sees the error
    return { lessons, progress: await progress, firstId, first };
  });
}
