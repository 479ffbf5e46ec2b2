/**
 * Which lessons state facts about rxe that another device may not share (Check.rxeOnly,
 * BreakIt.rxeOnly): `verbslab doctor` lists them for a machine whose NIC is not rxe.
 */
import type { Lesson } from "./schema.js";

export interface RxeFacts {
  /** The lesson's folder ("06-first-message"). */
  folder: string;
  title: string;
  /** The step numbers whose goals or break-it variations carry rxe-only facts. */
  steps: number[];
}

/** The lessons, in course order, with at least one rxe-only fact, and in which steps. */
export function lessonsWithRxeFacts(lessons: Lesson[]): RxeFacts[] {
  const out: RxeFacts[] = [];
  for (const l of lessons) {
    const steps = l.steps
      .filter(
        (s) =>
          s.checks.some((c) => c.rxeOnly) ||
          (s.breakIt ?? []).some((b) => b.rxeOnly || b.checks.some((c) => c.rxeOnly)),
      )
      .map((s) => s.number);
    if (steps.length) out.push({ folder: l.folder, title: l.title.en, steps });
  }
  return out;
}
