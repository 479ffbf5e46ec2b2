/** The course's first reads: list and progress at once, the first lesson as soon as the list is in. */
import { describe, expect, it } from "vitest";
import type { Bridge } from "../../../bridge/client.js";
import { arrivedSoFar, firstLessonId, startCourse } from "./course.js";

const summary = (id: string, order: number) => ({ id, order, title: { en: id } }) as never;

function recordingBridge(progress: "ok" | "fails", last: string | null = null) {
  const calls: string[] = [];
  const bridge = {
    host: "web",
    request: async (method: string, params: { id?: string }) => {
      calls.push(params.id ? `${method} ${params.id}` : method);
      if (method === "lessons.list") return { lessons: [summary("b", 2), summary("a", 1)], problems: [] };
      if (method === "lessons.progress.get") {
        if (progress === "fails") throw new Error("no progress file");
        return { snapshots: { a: { step: 1 } }, lessonId: last, code: { "b/2": "// mine" } };
      }
      if (method === "lessons.load") return { lesson: { id: params.id } };
      throw new Error(`unexpected ${method}`);
    },
  } as unknown as Bridge;
  return { bridge, calls };
}

describe("startCourse", () => {
  it("asks for the list and the progress together, then loads the lowest-order lesson", async () => {
    const { bridge, calls } = recordingBridge("ok");
    const c = await startCourse(bridge);
    expect(calls).toEqual(["lessons.progress.get", "lessons.list", "lessons.load a"]);
    expect(c.lessons.map((l) => l.id)).toEqual(["a", "b"]);
    expect(c.progress).toEqual({ a: { step: 1 } });
    expect(c.firstId).toBe("a");
    expect(c.first).toEqual({ id: "a" });
    expect(c.code).toEqual({ "b/2": "// mine" });
  });

  it("opens on the lesson the learner had open last time", async () => {
    const { bridge, calls } = recordingBridge("ok", "b");
    const c = await startCourse(bridge);
    expect(c.firstId).toBe("b");
    expect(calls).toContain("lessons.load b");
  });

  it("arrives without the first lesson when that lesson cannot be read", async () => {
    const { bridge } = recordingBridge("ok");
    const failing = {
      ...bridge,
      request: (method: string, params: never) =>
        method === "lessons.load" ? Promise.reject(new Error("gone")) : bridge.request(method as never, params),
    } as unknown as Bridge;
    const c = await startCourse(failing);
    expect(c.firstId).toBe("a");
    expect(c.first).toBeNull();
  });

  it("starts the lesson anyway when the progress cannot be read", async () => {
    const { bridge } = recordingBridge("fails");
    const c = await startCourse(bridge);
    expect(c.progress).toEqual({});
    expect(c.code).toEqual({});
    expect(c.firstId).toBe("a");
  });
});

describe("arrivedSoFar", () => {
  it("is undefined until the course is in, then the course itself", async () => {
    const { bridge } = recordingBridge("ok");
    const course = startCourse(bridge);
    const arrived = arrivedSoFar(course);
    expect(arrived()).toBeUndefined();
    const c = await course;
    await Promise.resolve();
    expect(arrived()).toBe(c);
  });

  it("stays undefined when the course fails", async () => {
    const course = Promise.reject(new Error("no host"));
    const arrived = arrivedSoFar(course);
    await course.catch(() => {});
    await Promise.resolve();
    expect(arrived()).toBeUndefined();
  });
});

describe("firstLessonId", () => {
  const sorted = [summary("a", 1), summary("b", 2)];
  it("takes ?lesson= when it names a lesson, else the first", () => {
    expect(firstLessonId(sorted, "?lesson=b")).toBe("b");
    expect(firstLessonId(sorted, "?lesson=nope")).toBe("a");
    expect(firstLessonId(sorted, "")).toBe("a");
    expect(firstLessonId([], "")).toBeNull();
    expect(firstLessonId(sorted, "", "b")).toBe("b");
    expect(firstLessonId(sorted, "?lesson=a", "b")).toBe("a");
    expect(firstLessonId(sorted, "", "gone")).toBe("a");
  });
});
