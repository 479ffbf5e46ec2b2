/**
 * A learner's profile on disk (Node: the app's backend process, the CLI): one folder per
 * profile under the data folder, `<data>/profiles/<name>/`, holding
 *   progress.json   the lesson flow snapshots (state-machines/lesson-progress.ts), by lesson id
 *   workspace.json  where the learner is (the lesson open) and their code, per lesson step
 * Files are rewritten atomically (a temporary file, then a rename), so a crash mid-write leaves
 * the previous version whole.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Snapshot } from "xstate";
import type { ProgressStore } from "../state-machines/lesson-progress.js";

type FileShape = Record<string, Record<string, Snapshot<unknown>>>;

function readJson(path: string): Record<string, unknown> {
  try {
    const data = JSON.parse(readFileSync(path, "utf8")) as unknown;
    return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
  } catch {
    return {}; // no file yet, or unreadable: nothing saved
  }
}

function writeJson(path: string, data: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(data, null, 2));
  renameSync(tmp, path);
}

/** A store that keeps `{ learner: { lessonId: snapshot } }` in `path`, rewritten atomically on each save. */
export function createJsonFileProgressStore(path: string): ProgressStore {
  const read = () => readJson(path) as FileShape;
  return {
    load: (learner, lessonId) => read()[learner]?.[lessonId],
    save(learner, lessonId, snapshot) {
      const data = read();
      (data[learner] ??= {})[lessonId] = snapshot;
      writeJson(path, data);
    },
    clear(learner, lessonId) {
      const data = read();
      if (data[learner]) delete data[learner][lessonId];
      writeJson(path, data);
    },
  };
}

/** The profile used when none is named (VERBSLAB_PROFILE / --profile). */
export const DEFAULT_PROFILE = "default";
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** A code key: `<lesson id>/<step>` or `<lesson id>/<step>/break-<id>`, or "free" (no lesson). */
export const CODE_KEY = /^(free|[a-z0-9][a-z0-9-]{0,99}\/[1-9][0-9]{0,2}(\/break-[a-z0-9][a-z0-9-]{0,99})?)$/;
/** The most code one key keeps (a lesson program is a few KB). */
export const MAX_CODE_CHARS = 1_000_000;

/** Where the learner is and what they wrote. */
export interface Workspace {
  /** The lesson open when they last chose one; null before any. */
  lessonId: string | null;
  /** The editor's text per step (CODE_KEY), as last edited. */
  code: Record<string, string>;
}

export interface LearnerProfile {
  name: string;
  /** `<data>/profiles/<name>`. */
  dir: string;
  /** Flow snapshots, keyed by lesson (the learner argument is the profile's name). */
  progress: ProgressStore;
  workspace(): Workspace;
  setLesson(lessonId: string): void;
  setCode(key: string, code: string): void;
}

/** Why `name` cannot name a profile folder, or undefined when it can. */
export function profileNameProblem(name: string): string | undefined {
  return PROFILE_NAME.test(name)
    ? undefined
    : `profile name "${name}" is not allowed: use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit`;
}

/**
 * The profile `name` under `dataDir`. Throws (naming what is wrong) for a name that is not a
 * plain file name. The default profile takes over a progress.json left at the data folder's
 * top by versions that kept one file for everyone.
 */
export function openLearnerProfile(dataDir: string, name: string = DEFAULT_PROFILE): LearnerProfile {
  const problem = profileNameProblem(name);
  if (problem) throw new RangeError(problem);
  const dir = join(dataDir, "profiles", name);
  const progressPath = join(dir, "progress.json");
  const workspacePath = join(dir, "workspace.json");
  const legacy = join(dataDir, "progress.json");
  if (name === DEFAULT_PROFILE && !existsSync(progressPath) && existsSync(legacy)) {
    const old = readJson(legacy)[DEFAULT_PROFILE];
    if (old && typeof old === "object") writeJson(progressPath, { [name]: old });
  }
  const store = createJsonFileProgressStore(progressPath);
  const progress: ProgressStore = {
    load: (_learner, lessonId) => store.load(name, lessonId),
    save: (_learner, lessonId, snapshot) => store.save(name, lessonId, snapshot),
    clear: (_learner, lessonId) => store.clear(name, lessonId),
  };
  const workspace = (): Workspace => {
    const w = readJson(workspacePath);
    const code: Record<string, string> = {};
    if (typeof w.code === "object" && w.code !== null)
      for (const [k, v] of Object.entries(w.code)) if (CODE_KEY.test(k) && typeof v === "string") code[k] = v;
    return { lessonId: typeof w.lessonId === "string" ? w.lessonId : null, code };
  };
  return {
    name,
    dir,
    progress,
    workspace,
    setLesson(lessonId) {
      writeJson(workspacePath, { ...workspace(), lessonId });
    },
    setCode(key, text) {
      if (!CODE_KEY.test(key))
        throw new RangeError(`code key "${key}" is not <lesson id>/<step>[/break-<id>] or "free"`);
      if (text.length > MAX_CODE_CHARS) throw new RangeError(`code for ${key} is over ${MAX_CODE_CHARS} characters`);
      const w = workspace();
      writeJson(workspacePath, { ...w, code: { ...w.code, [key]: text } });
    },
  };
}
