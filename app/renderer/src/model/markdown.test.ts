import { describe, expect, it } from "vitest";
import { loadCourse } from "../../../../lessons/load.js";
import { renderMarkdown } from "./markdown.js";

/** What a learner reads: the text outside code spans and blocks, tags dropped. */
const prose = (html: string) =>
  html
    .replace(/<code[^>]*>[\s\S]*?<\/code>/g, "")
    .replace(/<[^>]+>/g, "")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");

describe("lesson Markdown (markdown-it)", () => {
  it("keeps a number that wraps to the start of a line inside its sentence (lesson 12's task)", () => {
    const html = renderMarkdown("you get 4 completions, with `wr_id` 15, 31, 47 and\n63. `ib_write_bw` does the same.");
    expect(html).not.toContain("<ol");
    expect(html).not.toContain("<li");
    expect(prose(html)).toContain("47 and\n63.  does the same.");
  });

  it("renders a numbered list with wrapped items as one item per number", () => {
    const html = renderMarkdown(
      "So the order is:\n\n1. the receiver posts a RECV naming\n   where data may land;\n2. the sender posts a SEND\n   (`a.postSend({ wr_id,\n   sg_list })`);\n3. both poll their CQ.\n",
    );
    expect(html.match(/<li>/g)).toHaveLength(3);
    expect(html).toContain("<li>the receiver posts a RECV naming\nwhere data may land;</li>");
    expect(html).toContain("<code>a.postSend({ wr_id, sg_list })</code>");
  });

  it("puts emphasis on the words marked, and shows a wildcard asterisk in code as itself", () => {
    const html = renderMarkdown(
      "- **lkey** — used by *your* work requests;\n- **rkey** — what you give a *peer*.\n\n**Without any `IBV_ACCESS_REMOTE_*` flag the rkey is 0**, and 2 * 3 = 6.",
    );
    expect(html.match(/<em>[^<]*<\/em>/g)).toEqual(["<em>your</em>", "<em>peer</em>"]);
    expect(html).toContain("<strong>Without any <code>IBV_ACCESS_REMOTE_*</code> flag the rkey is 0</strong>");
    expect(prose(html)).toContain("2 * 3 = 6");
  });

  it("renders code inside bold, and fenced code with its language", () => {
    expect(renderMarkdown("**What to look at in `ibv_query_qp`.**")).toBe(
      "<p><strong>What to look at in <code>ibv_query_qp</code>.</strong></p>\n",
    );
    expect(renderMarkdown("```ts\nawait qp.modify(a, m);\n```\n")).toBe(
      '<pre><code class="language-ts">await qp.modify(a, m);\n</code></pre>\n',
    );
  });

  it("shows the course's own figures (figure:name from assets/figures), and nothing for an unknown one", () => {
    const html = renderMarkdown('![Two data paths "compared"](figure:kernel-bypass) ![x](figure:no-such-figure)');
    expect(html.match(/<img /g)).toHaveLength(1);
    expect(html).toMatch(
      /<img class="lesson-figure" src="(data:image\/svg\+xml[^"]+|[^"]*kernel-bypass[^"]*\.svg)" alt="Two data paths &quot;compared&quot;"/,
    );
    // Lesson 1 shows it in both languages.
    const lesson1 = loadCourse().lessons.find((l) => l.id === "bypassing-the-kernel")!;
    for (const lang of ["en", "zh"] as const)
      expect(renderMarkdown(lesson1.steps[0]!.text[lang])).toContain("lesson-figure");
  });

  it("keeps raw HTML as text, drops unsafe links and images, opens safe links outside", () => {
    const html = renderMarkdown(
      '<img src=x onerror="alert(1)"> [x](javascript:alert(1)) [f](file:///etc/passwd) ![i](https://example.org/i.png) [man](https://man7.org/linux/man-pages/man3/ibv_post_send.3.html)',
    );
    expect(html).not.toMatch(/<img|<a href="javascript|<a href="file/);
    expect(html).toContain("&lt;img src=x");
    expect(html).toContain(
      '<a href="https://man7.org/linux/man-pages/man3/ibv_post_send.3.html" target="_blank" rel="noreferrer">man</a>',
    );
  });

  it("keeps the pane's <h1> the lesson's title: the text's headings are h3/h4; tables are the app's grid", () => {
    const html = renderMarkdown("# Step\n\n### Detail\n\n| a | b |\n|---|---|\n| `x` | y |\n");
    expect(html).toMatch(/^<h3>Step<\/h3>\n<h4>Detail<\/h4>\n<table class="grid md-table">/);
    expect(html).toContain("<td><code>x</code></td>");
  });

  it("lets a code identifier in a table break after its underscores only (lesson 18's status column)", () => {
    const html = renderMarkdown("| status |\n|---|\n| 28 (`IB_CM_REJ_CONSUMER_DEFINED`) |\n\n`IBV_QPS_RTS` <b>\n");
    expect(html).toContain("<code>IB_<wbr>CM_<wbr>REJ_<wbr>CONSUMER_<wbr>DEFINED</code>");
    // Outside a table code stays as it was, and markup in code is still text.
    expect(html).toContain("<p><code>IBV_QPS_RTS</code> &lt;b&gt;</p>");
    expect(renderMarkdown("| a |\n|---|\n| `<i>_x` |\n")).toContain("<code>&lt;i&gt;_<wbr>x</code>");
  });

  it("shows no stray asterisk, underscore run or backtick in any lesson's text, hint or explanation", () => {
    const course = loadCourse();
    expect(course.lessons.length).toBeGreaterThan(10);
    const stray: string[] = [];
    for (const l of course.lessons)
      for (const s of l.steps)
        for (const lang of ["en", "zh"] as const) {
          const texts = [
            s.text[lang],
            ...s.hints.map((h) => h[lang]),
            ...(s.breakIt ?? []).map((b) => b.observe[lang]),
          ];
          for (const t of texts) {
            const shown = prose(renderMarkdown(t));
            const flat = t.replace(/\s+/g, " ");
            for (const line of shown.split("\n")) {
              // Markup left as text: "**", "__", backticks, or a "*" the source did not have
              // where it stands (REMOTE_* as a wildcard is fine; "0*," cut from "0**," is not).
              const lone = [...line.matchAll(/\*/g)].some((m) => {
                const around = line.slice(Math.max(0, m.index - 6), m.index + 2).replace(/\s+/g, " ");
                return !flat.includes(around);
              });
              if (/\*\*|`|__/.test(line) || lone) stray.push(`${l.id} step ${s.number} (${lang}): ${line.trim()}`);
            }
          }
        }
    expect(stray).toEqual([]);
  });
});
