/**
 * Lesson Markdown to HTML, by markdown-it (CommonMark). Lesson text is data, but it is shown as
 * the app's own: raw HTML in it stays text (`html: false`), links go only where markdown-it's
 * link check allows (no javascript:, vbscript:, file: or data: URLs) and open outside the app,
 * and the only images are the course's own figures (`![alt](figure:name)`, see figures.ts): the
 * app loads nothing from the network.
 */
import MarkdownIt from "markdown-it";
import { figureUrl } from "./figures.js";

const md = new MarkdownIt("commonmark", { html: false, linkify: false, typographer: false });
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
// In a table, a long identifier in code (IB_CM_REJ_CONSUMER_DEFINED) may break after its
// underscores, and only there: unbroken, lesson 18's status column was cut off at every window
// size; broken anywhere, short names split mid-word ("RESE / T").
md.core.ruler.push("table_code_breaks", (state) => {
  let depth = 0;
  for (const t of state.tokens) {
    if (t.type === "table_open") depth++;
    else if (t.type === "table_close") depth--;
    else if (depth > 0 && t.type === "inline")
      for (const c of t.children ?? []) if (c.type === "code_inline") c.meta = { breakAfterUnderscores: true };
  }
});
const codeInline = md.renderer.rules.code_inline!;
md.renderer.rules.code_inline = (tokens, idx, options, env, self) => {
  const t = tokens[idx];
  if (!(t.meta as { breakAfterUnderscores?: boolean } | null)?.breakAfterUnderscores)
    return codeInline(tokens, idx, options, env, self);
  return `<code${self.renderAttrs(t)}>${md.utils.escapeHtml(t.content).replace(/_/g, "_<wbr>")}</code>`;
};
md.renderer.rules.image = (tokens, idx) => {
  const t = tokens[idx];
  const src = t.attrGet("src") ?? "";
  const url = src.startsWith("figure:") ? figureUrl(src.slice("figure:".length)) : undefined;
  if (!url) return "";
  const alt = md.utils.escapeHtml(t.content);
  return `<img class="lesson-figure" src="${md.utils.escapeHtml(url)}" alt="${alt}" title="${alt}">`;
};

/** The HTML for one piece of lesson Markdown (a step's text, a hint, a break-it explanation). */
export function renderMarkdown(src: string): string {
  return md.render(src);
}
