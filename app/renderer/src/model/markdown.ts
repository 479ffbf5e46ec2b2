/**
 * Lesson Markdown to HTML, by markdown-it (CommonMark). Lesson text is data, but it is shown as
 * the app's own: raw HTML in it stays text (`html: false`), links go only where markdown-it's
 * link check allows (no javascript:, vbscript:, file: or data: URLs) and open outside the app,
 * and images are not rendered (the app loads nothing from the network).
 */
import MarkdownIt from "markdown-it";

const md = new MarkdownIt("commonmark", { html: false, linkify: false, typographer: false });
md.disable("image");
// GFM tables (not CommonMark, but markdown-it's own rule): lessons use them for attribute lists.
md.enable("table");

// The lesson's title is the pane's <h1>; the text's own headings sit below it.
md.core.ruler.push("lesson_headings", (state) => {
  for (const t of state.tokens)
    if (t.type === "heading_open" || t.type === "heading_close") t.tag = Number(t.tag.slice(1)) <= 2 ? "h3" : "h4";
});

md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  tokens[idx].attrSet("target", "_blank");
  tokens[idx].attrSet("rel", "noreferrer");
  return self.renderToken(tokens, idx, options);
};
md.renderer.rules.table_open = () => '<table class="grid md-table">\n';

/** The HTML for one piece of lesson Markdown (a step's text, a hint, a break-it explanation). */
export function renderMarkdown(src: string): string {
  return md.render(src);
}
