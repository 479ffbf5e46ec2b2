/**
 * A small Markdown subset for lesson text (headings, paragraphs, lists, fenced code,
 * `code`, **bold**, *emphasis*, [links](…)), parsed to plain blocks so React renders it
 * without innerHTML.
 */
export type Inline = { t: "text" | "code" | "b" | "i"; s: string } | { t: "a"; s: string; href: string };
export type Block =
  | { t: "h"; level: number; inl: Inline[] }
  | { t: "p"; inl: Inline[] }
  | { t: "ul" | "ol"; items: Inline[][] }
  | { t: "pre"; lang: string; code: string };

export function parseInline(s: string): Inline[] {
  const out: Inline[] = [];
  const re = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*]+)\*|\[([^\]]+)\]\(([^)]+)\)/g;
  let last = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    if (m.index > last) out.push({ t: "text", s: s.slice(last, m.index) });
    if (m[1] !== undefined) out.push({ t: "code", s: m[1] });
    else if (m[2] !== undefined) out.push({ t: "b", s: m[2] });
    else if (m[3] !== undefined) out.push({ t: "i", s: m[3] });
    else out.push({ t: "a", s: m[4], href: m[5] });
    last = re.lastIndex;
  }
  if (last < s.length) out.push({ t: "text", s: s.slice(last) });
  return out;
}

export function parseMarkdown(src: string): Block[] {
  const lines = src.replace(/\r\n/g, "\n").split("\n");
  const blocks: Block[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length) blocks.push({ t: "p", inl: parseInline(para.join(" ")) });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = /^```(\w*)/.exec(line);
    if (fence) {
      flush();
      const code: string[] = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) code.push(lines[i]);
      blocks.push({ t: "pre", lang: fence[1], code: code.join("\n") });
      continue;
    }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) {
      flush();
      blocks.push({ t: "h", level: h[1].length, inl: parseInline(h[2]) });
      continue;
    }
    const li = /^\s*([-*]|\d+\.)\s+(.*)$/.exec(line);
    if (li) {
      flush();
      const kind = /\d/.test(li[1]) ? "ol" : "ul";
      const prev = blocks[blocks.length - 1];
      if (prev && prev.t === kind) prev.items.push(parseInline(li[2]));
      else blocks.push({ t: kind, items: [parseInline(li[2])] });
      continue;
    }
    if (line.trim() === "") flush();
    else para.push(line.trim());
  }
  flush();
  return blocks;
}
