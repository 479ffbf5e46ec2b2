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
});
