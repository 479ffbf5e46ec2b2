/**
 * Progress per learner and lesson: the lesson machine's persisted snapshot, kept in a
 * small key-value store. Pure over a `StorageLike` (the browser's localStorage has this
 * shape); the JSON-file store for Node lives in lessons/progress-file.ts.
 */
import { createActor, type Snapshot } from "xstate";
import { lessonMachine, type LessonFlowContext, type LessonFlowInput } from "./lesson.js";

/** The part of the Web Storage API a store needs (localStorage, or a Map-backed stand-in). */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface ProgressStore {
  load(learner: string, lessonId: string): Snapshot<unknown> | undefined;
  save(learner: string, lessonId: string, snapshot: Snapshot<unknown>): void;
  clear(learner: string, lessonId: string): void;
}

const key = (learner: string, lessonId: string) => `verbslab.progress.${encodeURIComponent(learner)}.${lessonId}`;

/** A store over localStorage (browser) or any StorageLike. */
export function createStorageProgressStore(storage: StorageLike): ProgressStore {
  return {
    load(learner, lessonId) {
      const raw = storage.getItem(key(learner, lessonId));
      if (raw === null) return undefined;
      try {
        return JSON.parse(raw) as Snapshot<unknown>;
      } catch {
        return undefined; // a corrupt entry is treated as no progress, not as a crash
      }
    },
    save(learner, lessonId, snapshot) {
      storage.setItem(key(learner, lessonId), JSON.stringify(snapshot));
    },
    clear(learner, lessonId) {
      storage.removeItem(key(learner, lessonId));
    },
  };
}

/** A StorageLike in memory (tests, and the fallback when no storage is available). */
export function memoryStorage(): StorageLike & { readonly size: number } {
  const m = new Map<string, string>();
  return {
    getItem: (k) => m.get(k) ?? null,
    setItem: (k, v) => void m.set(k, v),
    removeItem: (k) => void m.delete(k),
    get size() {
      return m.size;
    },
  };
}

/**
 * Whether a saved snapshot still fits the lesson as it is now: same id and the same
 * number of steps with the same hint counts. A lesson edited since is started afresh
 * rather than restored into a state that no longer exists.
 */
export function snapshotFits(snapshot: Snapshot<unknown> | undefined, input: LessonFlowInput): boolean {
  const ctx = (snapshot as { context?: Partial<LessonFlowContext> } | undefined)?.context;
  if (!ctx || ctx.lessonId !== input.lessonId || !Array.isArray(ctx.hintCounts)) return false;
  return ctx.hintCounts.length === input.hintCounts.length && ctx.hintCounts.every((n, i) => n === input.hintCounts[i]);
}

/**
 * Starts the lesson flow for a learner, restored from the store when possible, and saves
 * every change back. Returns the running actor.
 */
export function startLessonFlow(store: ProgressStore, learner: string, input: LessonFlowInput) {
  const saved = store.load(learner, input.lessonId);
  const actor = createActor(lessonMachine, {
    input,
    ...(snapshotFits(saved, input) && { snapshot: saved }),
  });
  actor.subscribe(() => store.save(learner, input.lessonId, actor.getPersistedSnapshot()));
  actor.start();
  return actor;
}
