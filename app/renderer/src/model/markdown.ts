/**
 * The Markdown subset lesson text uses (headings, paragraphs, lists with wrapped items,
 * block quotes, tables, fenced code, `code`, **bold**, *emphasis*, [links](…)), parsed to
 * plain blocks so React renders it without innerHTML.
 */
export type Inline =
  | { t: "text" | "code"; s: string }
  /** `inl`: the parsed content, when it has markup of its own (**What to look at in `ibv_query_qp`.**). */
  | { t: "b" | "i"; s: string; inl?: Inline[] }
  | { t: "a"; s: string; href: string };
export type Block =
  | { t: "h"; level: number; inl: Inline[] }
  | { t: "p" | "quote"; inl: Inline[] }
  | { t: "ul" | "ol"; items: Inline[][] }
  | { t: "table"; head: Inline[][]; rows: Inline[][][] }
  | { t: "pre"; lang: string; code: string };

export function parseInline(s: string): Inline[] {
  const out: Inline[] = [];
  const re = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*]+)\*|\[([^\]]+)\]\(([^)]+)\)/g;
  let last = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    if (m.index > last) out.push({ t: "text", s: s.slice(last, m.index) });
    if (m[1] !== undefined) out.push({ t: "code", s: m[1] });
    else if (m[2] !== undefined || m[3] !== undefined) {
      const inner = (m[2] ?? m[3])!;
      const inl = parseInline(inner);
      out.push({ t: m[2] !== undefined ? "b" : "i", s: inner, ...(inl.some((x) => x.t !== "text") && { inl }) });
    } else out.push({ t: "a", s: m[4], href: m[5] });
    last = re.lastIndex;
  }
  if (last < s.length) out.push({ t: "text", s: s.slice(last) });
  return out;
}

type ListBlock = Extract<Block, { t: "ul" | "ol" }>;

const cells = (line: string) =>
  line
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split("|")
    .map((c) => parseInline(c.trim()));

export function parseMarkdown(src: string): Block[] {
  const lines = src.replace(/\r\n/g, "\n").split("\n");
  const blocks: Block[] = [];
  let para: string[] = [];
  let quote: string[] = [];
  /** The list item that indented continuation lines extend. */
  let item = null as { list: ListBlock; text: string } | null;
  const flushItem = () => {
    if (item) item.list.items.push(parseInline(item.text));
    item = null;
  };
  const flush = () => {
    flushItem();
    if (para.length) blocks.push({ t: "p", inl: parseInline(para.join(" ")) });
    if (quote.length) blocks.push({ t: "quote", inl: parseInline(quote.join(" ")) });
    para = [];
    quote = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = /^\s*```(\w*)/.exec(line);
    if (fence) {
      flush();
      const code: string[] = [];
      for (i++; i < lines.length && !/^\s*```/.test(lines[i]); i++) code.push(lines[i]);
      blocks.push({ t: "pre", lang: fence[1], code: code.join("\n") });
      continue;
    }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) {
      flush();
      blocks.push({ t: "h", level: h[1].length, inl: parseInline(h[2]) });
      continue;
    }
    if (/^\s*\|.*\|\s*$/.test(line) && /^\s*\|?[\s:-]+(\|[\s:-]+)+\|?\s*$/.test(lines[i + 1] ?? "")) {
      flush();
      const head = cells(line);
      const rows: Inline[][][] = [];
      for (i += 2; i < lines.length && /^\s*\|/.test(lines[i]); i++) rows.push(cells(lines[i]));
      i--;
      blocks.push({ t: "table", head, rows });
      continue;
    }
    const q = /^>\s?(.*)$/.exec(line);
    if (q) {
      if (!quote.length) flush();
      quote.push(q[1].trim());
      continue;
    }
    const li = /^\s*([-*]|\d+\.)\s+(.*)$/.exec(line);
    if (li) {
      const kind = /\d/.test(li[1]) ? "ol" : "ul";
      const list: ListBlock | undefined = item?.list;
      flushItem();
      if (para.length || quote.length) flush();
      const prev = blocks[blocks.length - 1];
      const target: ListBlock | undefined =
        list?.t === kind ? list : prev && prev.t === kind && !para.length ? prev : undefined;
      const l: ListBlock = target ?? { t: kind, items: [] };
      if (!target) blocks.push(l);
      item = { list: l, text: li[2] };
      continue;
    }
    if (item && /^\s+\S/.test(line)) {
      item.text += " " + line.trim();
      continue;
    }
    if (line.trim() === "") {
      // A blank line ends a paragraph; a list continues if the next item follows.
      flush();
    } else {
      flushItem();
      if (quote.length) flush();
      para.push(line.trim());
    }
  }
  flush();
  return blocks;
}
