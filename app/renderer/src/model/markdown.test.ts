import { describe, expect, it } from "vitest";
import { parseInline, parseMarkdown } from "./markdown.js";

describe("parseMarkdown", () => {
  it("reads headings, paragraphs, lists and fenced code", () => {
    const b = parseMarkdown(
      "# Title\n\nSome `ibv_modify_qp` text\nwraps.\n\n- one\n- two\n\n```ts\nawait qp.modify(a, m);\n```\n",
    );
    expect(b.map((x) => x.t)).toEqual(["h", "p", "ul", "pre"]);
    expect(b[1]).toEqual({
      t: "p",
      inl: [
        { t: "text", s: "Some " },
        { t: "code", s: "ibv_modify_qp" },
        { t: "text", s: " text wraps." },
      ],
    });
    expect(b[2]).toMatchObject({ t: "ul", items: [[{ s: "one" }], [{ s: "two" }]] });
    expect(b[3]).toEqual({ t: "pre", lang: "ts", code: "await qp.modify(a, m);" });
  });
  it("reads bold, emphasis and links", () => {
    expect(parseInline("**RTR** needs *dest_qp_num*, see [man](https://x)").map((i) => i.t)).toEqual([
      "b",
      "text",
      "i",
      "text",
      "a",
    ]);
  });
  it("reads code inside bold (no stray backticks on screen)", () => {
    const [b] = parseInline("**What to look at in `ibv_query_qp`.**");
    expect(b).toEqual({
      t: "b",
      s: "What to look at in `ibv_query_qp`.",
      inl: [
        { t: "text", s: "What to look at in " },
        { t: "code", s: "ibv_query_qp" },
        { t: "text", s: "." },
      ],
    });
  });
  it("joins wrapped list items and block quotes, and reads tables", () => {
    const b = parseMarkdown(
      "1. first item\n   wraps here.\n2. second\n\n> a quote\n> over two lines\n\n| a | b |\n|---|---|\n| `x` | y |\n",
    );
    expect(b[0]).toMatchObject({ t: "ol", items: [[{ s: "first item wraps here." }], [{ s: "second" }]] });
    expect(b[1]).toEqual({ t: "quote", inl: [{ t: "text", s: "a quote over two lines" }] });
    expect(b[2]).toMatchObject({
      t: "table",
      head: [[{ s: "a" }], [{ s: "b" }]],
      rows: [[[{ t: "code", s: "x" }], [{ s: "y" }]]],
    });
  });
});
