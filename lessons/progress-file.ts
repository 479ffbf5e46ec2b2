/** Lesson progress in one JSON file (Node: the CLI, and the app's main process). */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Snapshot } from "xstate";
import type { ProgressStore } from "../state-machines/lesson-progress.js";

type FileShape = Record<string, Record<string, Snapshot<unknown>>>;

/** A store that keeps `{ learner: { lessonId: snapshot } }` in `path`, rewritten atomically on each save. */
export function createJsonFileProgressStore(path: string): ProgressStore {
  const read = (): FileShape => {
    try {
      const data = JSON.parse(readFileSync(path, "utf8")) as unknown;
      return typeof data === "object" && data !== null ? (data as FileShape) : {};
    } catch {
      return {}; // no file yet, or unreadable: no progress
    }
  };
  const write = (data: FileShape) => {
    mkdirSync(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(data, null, 2));
    renameSync(tmp, path);
  };
  return {
    load: (learner, lessonId) => read()[learner]?.[lessonId],
    save(learner, lessonId, snapshot) {
      const data = read();
      (data[learner] ??= {})[lessonId] = snapshot;
      write(data);
    },
    clear(learner, lessonId) {
      const data = read();
      if (data[learner]) delete data[learner][lessonId];
      write(data);
    },
  };
}
