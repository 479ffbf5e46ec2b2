import { afterEach, describe, expect, it, vi } from "vitest";
import { createCodeSaver } from "./code-saver.js";

afterEach(() => vi.useRealTimers());

describe("code saver", () => {
  it("sends each step's latest code once typing pauses, and everything waiting on flush", () => {
    vi.useFakeTimers();
    const sent: [string, string][] = [];
    const saver = createCodeSaver((k, c) => sent.push([k, c]), 400);
    saver.change("a/1", "x");
    saver.change("a/1", "xy");
    vi.advanceTimersByTime(399);
    expect(sent).toEqual([]);
    saver.change("a/2", "z");
    vi.advanceTimersByTime(400);
    expect(sent).toEqual([
      ["a/1", "xy"],
      ["a/2", "z"],
    ]);
    saver.change("a/1", "last");
    saver.flush();
    expect(sent[2]).toEqual(["a/1", "last"]);
    vi.advanceTimersByTime(1000);
    expect(sent).toHaveLength(3);
  });
});
