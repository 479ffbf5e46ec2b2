/** Exports: pure functions of the transcript. */
import type { Transcript } from "../transcript.js";
import { toC } from "./c.js";
import { toHtml } from "./html.js";
import { toJson } from "./json.js";
import { toMarkdown } from "./markdown.js";

export { toC, toHtml, toJson, toMarkdown };

export type ExportFormat = "md" | "html" | "json" | "c";

export const EXPORT_FORMATS: Readonly<
  Record<ExportFormat, { extension: string; mime: string; render: (t: Transcript) => string }>
> = {
  md: { extension: ".md", mime: "text/markdown", render: toMarkdown },
  html: { extension: ".html", mime: "text/html", render: toHtml },
  json: { extension: ".json", mime: "application/json", render: toJson },
  c: { extension: ".c", mime: "text/x-c", render: toC },
};

/** Renders a transcript in one of the formats. */
export function exportTranscript(t: Transcript, format: ExportFormat): string {
  const f = EXPORT_FORMATS[format];
  if (!f) throw new TypeError(`unknown export format "${String(format)}" (expected md, html, json or c)`);
  return f.render(t);
}
