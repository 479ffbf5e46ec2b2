/** Lesson Markdown on screen (model/markdown.ts renders it, with raw HTML off and links checked). */
import { memo, useMemo } from "react";
import { renderMarkdown } from "../model/markdown.js";

export const Markdown = memo(function Markdown({ text }: { text: string }) {
  const html = useMemo(() => ({ __html: renderMarkdown(text) }), [text]);
  return <div className="prose" dangerouslySetInnerHTML={html} />;
});
