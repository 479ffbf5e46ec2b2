/** Exports: pure functions of the transcript. */
import type { Transcript } from "../transcript.js";
import { toC } from "./c.js";
import { toHtml } from "./html.js";
import { toJson } from "./json.js";
import { toMarkdown } from "./markdown.js";

export { toC, toHtml, toJson, toMarkdown };

export type ExportFormat = "md" | "html" | "json" | "c";

/** `fileName`: the name the export will be saved under (the C export's build line names it). */
export interface ExportOptions {
  fileName?: string;
}

export const EXPORT_FORMATS: Readonly<
  Record<ExportFormat, { extension: string; mime: string; render: (t: Transcript, options: ExportOptions) => string }>
> = {
  md: { extension: ".md", mime: "text/markdown", render: (t) => toMarkdown(t) },
  html: { extension: ".html", mime: "text/html", render: (t) => toHtml(t) },
  json: { extension: ".json", mime: "application/json", render: (t) => toJson(t) },
  c: { extension: ".c", mime: "text/x-c", render: toC },
};

/** Renders a transcript in one of the formats. */
export function exportTranscript(t: Transcript, format: ExportFormat, options: ExportOptions = {}): string {
  const f = EXPORT_FORMATS[format];
  if (!f) throw new TypeError(`unknown export format "${String(format)}" (expected md, html, json or c)`);
  return f.render(t, options);
}
