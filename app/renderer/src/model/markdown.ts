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
