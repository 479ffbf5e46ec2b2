/**
 * The course and the learner's place in it: lessons from the host (lessons/ loaded there),
 * the lesson flow machine (state-machines/lesson.ts) per lesson, its snapshot saved through
 * the bridge after every change.
 */
import { useSelector } from "@xstate/react";
import { useEffect, useMemo, useState } from "react";
import type { Snapshot } from "xstate";
import type { Bridge } from "../../../bridge/client.js";
import type { LessonSummary } from "../../../bridge/contract.js";
import type { Lesson } from "../../../../lessons/schema.js";
import { flowState } from "../../../../state-machines/lesson.js";
import { startLessonFlow, type ProgressStore } from "../../../../state-machines/lesson-progress.js";
import type { LessonFlowView } from "../panes/LessonPane.js";

type FlowActor = ReturnType<typeof startLessonFlow>;

function bridgeProgressStore(bridge: Bridge, saved: Record<string, unknown>): ProgressStore {
  return {
    load: (_learner, lessonId) => saved[lessonId] as Snapshot<unknown> | undefined,
    save: (_learner, lessonId, snapshot) => {
      saved[lessonId] = snapshot;
      bridge.request("lessons.progress.save", { lessonId, snapshot }).catch(() => {
        // Progress is a convenience: a host that cannot save it must not stop the lesson.
      });
    },
    clear: (_learner, lessonId) => void delete saved[lessonId],
  };
}

const EMPTY_FLOW: LessonFlowView = { step: 0, passed: [], hintsShown: [], solutionRevealed: [], completed: false };

export function useLessonFlow(bridge: Bridge) {
  const [lessons, setLessons] = useState<LessonSummary[]>([]);
  const [saved, setSaved] = useState<Record<string, unknown> | null>(null);
  const [lessonId, setLessonId] = useState<string | null>(null);
  const [lesson, setLesson] = useState<Lesson | undefined>();
  const [actor, setActor] = useState<FlowActor | null>(null);

  useEffect(() => {
    let live = true;
    void (async () => {
      try {
        const [list, progress] = await Promise.all([
          bridge.request("lessons.list", {}),
          bridge.request("lessons.progress.get", {}).catch(() => ({ snapshots: {} })),
        ]);
        if (!live) return;
        const sorted = [...list.lessons].sort((a, b) => a.order - b.order);
        setLessons(sorted);
        setSaved(progress.snapshots);
        const fromUrl = new URLSearchParams(globalThis.location?.search ?? "").get("lesson");
        setLessonId(sorted.find((l) => l.id === fromUrl)?.id ?? sorted[0]?.id ?? null);
      } catch {
        if (live) setSaved({});
      }
    })();
    return () => {
      live = false;
    };
  }, [bridge]);

  useEffect(() => {
    if (!lessonId || !saved) return;
    let live = true;
    let started: FlowActor | null = null;
    void bridge.request("lessons.load", { id: lessonId }).then(({ lesson: l }) => {
      if (!live) return;
      setLesson(l);
      started = startLessonFlow(bridgeProgressStore(bridge, saved), "learner", {
        lessonId: l.id,
        hintCounts: l.steps.map((s) => s.hints.length),
      });
      if (started.getSnapshot().value === "notStarted") started.send({ type: "START" });
      setActor(started);
    });
    return () => {
      live = false;
      started?.stop();
    };
  }, [bridge, lessonId, saved]);

  const context = useSelector(actor ?? undefined, (s) => s?.context);
  const value = useSelector(actor ?? undefined, (s) => s?.value);
  const flow: LessonFlowView = useMemo(
    () =>
      context
        ? {
            step: context.step,
            passed: context.passed,
            hintsShown: context.hintsShown,
            solutionRevealed: context.solutionRevealed,
            completed: value !== undefined && flowState(value) === "completed",
          }
        : EMPTY_FLOW,
    [context, value],
  );
  return { lessons, lessonId, setLessonId, lesson: lesson?.id === lessonId ? lesson : undefined, flow, actor };
}
