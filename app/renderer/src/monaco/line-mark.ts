/**
 * A whole line's highlight, and a bar beside its number, drawn as two elements of our own inside
 * the editor's DOM rather than as a Monaco decoration. Monaco re-renders every visible line (text
 * and overlays) on any decoration change; the stepper moves the paused line on every step, so as a
 * decoration each step repainted the whole editor. Moving these two elements repaints two strips.
 *
 * The band sits in Monaco's `.lines-content` before its overlays and text (so under both, as a
 * decoration's background is), the bar in `.margin` at the line-decorations column; Monaco scrolls
 * both parents itself, so the marks scroll with the text without listening to scroll events.
 */
import { monaco } from "./setup.js";
import { followEdits } from "./follow-edits.js";

export class LineMark {
  private readonly band = document.createElement("div");
  private readonly bar: HTMLDivElement | null = null;
  private line = 0;
  private readonly listeners: monaco.IDisposable[];

  /**
   * @param lineClass the band's class (its colour, in styles.css)
   * @param barClass the bar's class beside the line number, if the mark has one
   */
  constructor(
    private readonly editor: monaco.editor.IStandaloneCodeEditor,
    lineClass: string,
    barClass?: string,
  ) {
    const root = editor.getDomNode()!;
    this.band.className = `vl-line-mark ${lineClass}`;
    this.band.hidden = true;
    const content = root.querySelector(".lines-content")!;
    content.insertBefore(this.band, content.firstChild);
    if (barClass) {
      this.bar = document.createElement("div");
      this.bar.className = `vl-line-mark-bar ${barClass}`;
      this.bar.hidden = true;
      root.querySelector(".margin")!.appendChild(this.bar);
    }
    this.listeners = [
      // A decoration would move with the text: so does the mark.
      editor.onDidChangeModelContent((e) => this.line && this.show(followEdits(this.line, e.changes))),
      // Line height, gutter width, folded lines or a sideways scroll changed where lines are.
      editor.onDidLayoutChange(() => this.place()),
      editor.onDidChangeConfiguration(() => this.place()),
      editor.onDidChangeHiddenAreas(() => this.place()),
      editor.onDidScrollChange((e) => e.scrollLeftChanged && this.place()),
    ];
  }

  /** The line marked, 0 when none. */
  get shown(): number {
    return this.line;
  }

  /** Marks `line` (1-based), or nothing for 0. */
  show(line: number): void {
    const count = this.editor.getModel()?.getLineCount() ?? 0;
    this.line = line >= 1 && line <= count ? line : 0;
    this.place();
  }

  private place(): void {
    const els = this.bar ? [this.band, this.bar] : [this.band];
    if (!this.line) {
      for (const el of els) el.hidden = true;
      return;
    }
    const top = `${this.editor.getTopForLineNumber(this.line)}px`;
    const height = `${this.editor.getOption(monaco.editor.EditorOption.lineHeight)}px`;
    for (const el of els) {
      el.style.top = top;
      el.style.height = height;
      el.hidden = false;
    }
    const layout = this.editor.getLayoutInfo();
    // Across the text area as it is scrolled to, no wider: `.lines-content` is 16M px wide, and a
    // band as wide as that (or as the longest line) repainted its row of the whole window, the
    // inspector beside the editor too.
    this.band.style.left = `${this.editor.getScrollLeft()}px`;
    this.band.style.width = `${layout.width - layout.contentLeft}px`;
    if (this.bar) this.bar.style.left = `${layout.decorationsLeft}px`;
  }

  dispose(): void {
    for (const l of this.listeners) l.dispose();
    this.band.remove();
    this.bar?.remove();
  }
}
