/**
 * The course and the learner's place in it: lessons from the host (lessons/ loaded there),
 * the lesson flow machine (state-machines/lesson.ts) per lesson, its snapshot saved through
 * the bridge after every change.
 */
import { useSelector } from "@xstate/react";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { Snapshot } from "xstate";
import type { Bridge } from "../../../bridge/client.js";
import type { LessonSummary } from "../../../bridge/contract.js";
import type { Lesson } from "../../../../lessons/schema.js";
import { flowState } from "../../../../state-machines/lesson.js";
import { startLessonFlow, type ProgressStore } from "../../../../state-machines/lesson-progress.js";
import type { LessonFlowView } from "../panes/LessonPane.js";
import type { CourseStart } from "./course.js";

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

/**
 * `course` is the course's first reads (lab/course.ts); `arrived`, what of it is already in when
 * the window first renders: it is shown in that first render.
 */
export function useLessonFlow(bridge: Bridge, course: Promise<CourseStart>, arrived?: CourseStart) {
  const [lessons, setLessons] = useState<LessonSummary[]>(arrived?.lessons ?? []);
  const [saved, setSaved] = useState<Record<string, unknown> | null>(arrived?.progress ?? null);
  const [lessonId, setLessonIdState] = useState<string | null>(arrived?.firstId ?? null);
  const [savedCode, setSavedCode] = useState<Record<string, string>>(arrived?.code ?? {});
  /** Opens a lesson the learner chose, and remembers it in their profile for the next start. */
  const setLessonId = useCallback(
    (id: string) => {
      setLessonIdState(id);
      bridge.request("lessons.place.save", { lessonId: id }).catch(() => {
        // Like progress: a host that cannot save the place must not stop the lesson.
      });
    },
    [bridge],
  );
  const [lesson, setLesson] = useState<Lesson | undefined>(arrived?.first ?? undefined);
  const [actor, setActor] = useState<FlowActor | null>(null);
  // Latched: the first lesson is on screen, or there is none to wait for (no lessons, no host).
  const [opened, setOpened] = useState(arrived !== undefined && (arrived.first !== null || arrived.firstId === null));
  // The first lesson came with the list (startCourse): the first load takes it from there; any
  // other lesson is read when chosen.
  const firstLoad = useRef(true);
  const load = useCallback(
    async (id: string) => {
      if (firstLoad.current) {
        firstLoad.current = false;
        const c = await course.catch(() => null);
        if (c?.first && c.firstId === id) return c.first;
      }
      return (await bridge.request("lessons.load", { id })).lesson;
    },
    [bridge, course],
  );

  useEffect(() => {
    let live = true;
    course.then(
      (c) => {
        if (!live) return;
        setLessons(c.lessons);
        setSaved(c.progress);
        setSavedCode(c.code);
        setLessonIdState(c.firstId);
        if (!c.firstId) setOpened(true);
      },
      () => {
        if (!live) return;
        setSaved({});
        setOpened(true);
      },
    );
    return () => {
      live = false;
    };
  }, [course]);

  useEffect(() => {
    if (!lessonId || !saved) return;
    let live = true;
    let started: FlowActor | null = null;
    void load(lessonId).then(
      (l) => {
        if (!live) return;
        setLesson(l);
        setOpened(true);
        started = startLessonFlow(bridgeProgressStore(bridge, saved), "learner", {
          lessonId: l.id,
          hintCounts: l.steps.map((s) => s.hints.length),
        });
        if (started.getSnapshot().value === "notStarted") started.send({ type: "START" });
        setActor(started);
      },
      () => live && setOpened(true),
    );
    return () => {
      live = false;
      started?.stop();
    };
  }, [bridge, load, lessonId, saved]);

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
  const order = lessons.findIndex((l) => l.id === lessonId);
  return {
    lessons,
    lessonId,
    setLessonId,
    /** The lesson after this one in the course's order, if any. */
    nextLesson: order >= 0 ? lessons[order + 1] : undefined,
    /** The code the learner's profile kept per step when the window opened. */
    savedCode,
    lesson: lesson?.id === lessonId ? lesson : undefined,
    flow,
    actor,
    /** The first lesson has been shown, or there was none to show: from then on, always true. */
    opened,
  };
}
