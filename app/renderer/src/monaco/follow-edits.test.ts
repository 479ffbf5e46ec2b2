import { describe, expect, it } from "vitest";
import { followEdits, type LineEdit } from "./follow-edits.js";

const edit = (sl: number, sc: number, el: number, ec: number, text: string): LineEdit => ({
  range: { startLineNumber: sl, startColumn: sc, endLineNumber: el, endColumn: ec },
  text,
});

describe("followEdits: a marked line moves with the learner's edits", () => {
  it("lines added or removed above move it; edits below or inside it do not", () => {
    expect(followEdits(10, [edit(3, 5, 3, 5, "\n\n")])).toBe(12);
    expect(followEdits(10, [edit(3, 1, 5, 1, "")])).toBe(8);
    expect(followEdits(10, [edit(12, 1, 12, 1, "\n")])).toBe(10);
    expect(followEdits(10, [edit(10, 7, 10, 9, "x\ny")])).toBe(10);
  });
  it("Enter at the line's start pushes it along with its text", () => {
    expect(followEdits(10, [edit(10, 1, 10, 1, "\n")])).toBe(11);
  });
  it("deleting the line above with its newline, or joining it to the line above", () => {
    expect(followEdits(10, [edit(9, 1, 10, 1, "")])).toBe(9);
    expect(followEdits(10, [edit(9, 20, 10, 3, "")])).toBe(9);
  });
  it("a deletion that swallows the line leaves it where the deletion began", () => {
    expect(followEdits(10, [edit(4, 2, 14, 1, "")])).toBe(4);
  });
  it("several changes of one event (in any order) all count", () => {
    expect(followEdits(10, [edit(2, 1, 2, 1, "\n"), edit(5, 1, 5, 1, "\n")])).toBe(12);
    expect(followEdits(10, [edit(5, 1, 5, 1, "\n"), edit(2, 1, 3, 1, "")])).toBe(10);
  });
});
