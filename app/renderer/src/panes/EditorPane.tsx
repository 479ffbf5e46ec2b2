/**
 * The Monaco editor over main.ts, with the verbs API typings. Loaded lazily with Monaco itself.
 * This component owns the editor: it creates it when it mounts and disposes it (and its model)
 * when it unmounts. It points at the program's lines: the verb the stepper is paused before
 * (highlighted and scrolled to), each line's latest outcome after it ("→ EINVAL: missing
 * IBV_QP_PORT"), the line an error came from, and a line a transcript or log row asked for.
 */
import { memo, useEffect, useLayoutEffect, useRef } from "react";
import { MAIN_URI, emitJavaScript, monaco } from "../monaco/setup.js";
import { LineMark } from "../monaco/line-mark.js";
import type { CompiledProgram } from "../runner/protocol.js";

/** A line's latest outcome, worded (i18n.ts `lineOutcome`), and how many calls the line made. */
export interface ShownResult {
  line: number;
  text: string;
  bad: boolean;
  count: number;
}

/** A place in main.ts (1-based). */
export interface EditorSpot {
  line: number;
  column: number;
}

export interface EditorPaneProps {
  code: string;
  onChange: (code: string) => void;
  /** Called once the editor exists, with a function that compiles the current program. */
  onReady?: (compile: () => Promise<CompiledProgram>) => void;
  /** Called once, when Monaco has drawn the program's first lines (it draws in an animation frame after creation). */
  onDrawn?: () => void;
  /** Keyboard shortcuts that must also work while the editor has focus. */
  onShortcut?: (action: "run" | "step" | "continue") => void;
  /** The line of the verb the program is paused before. */
  pausedAt?: EditorSpot;
  /** Each line's latest outcome, shown after the line. */
  lineResults?: readonly ShownResult[];
  /** Where the error the program ended with came from. */
  errorAt?: EditorSpot & { message: string };
  /** A line to scroll to and highlight (a transcript or log row was clicked); `at` tells two clicks apart. */
  reveal?: EditorSpot & { at: number };
}

const OPTIONS: monaco.editor.IStandaloneEditorConstructionOptions = {
  minimap: { enabled: false },
  fontSize: 13,
  fontFamily: "'DejaVu Sans Mono', ui-monospace, monospace",
  scrollBeyondLastLine: false,
  automaticLayout: true,
  tabSize: 2,
  renderLineHighlight: "line",
  // Hover docs and suggestions are often wider than the editor column: let them out of the panel.
  fixedOverflowWidgets: true,
};

/** Memoised: App re-renders on every bridge event, the editor only when its own props change. */
export default memo(function EditorPane({
  code,
  onChange,
  onReady,
  onDrawn,
  onShortcut,
  pausedAt,
  lineResults,
  errorAt,
  reveal,
}: EditorPaneProps) {
  const host = useRef<HTMLDivElement>(null);
  const editorRef = useRef<monaco.editor.IStandaloneCodeEditor | null>(null);
  // Set while a new `code` prop is written into the model: that edit is not the learner's.
  const applying = useRef(false);
  // The paused and the revealed line move on every step or click: they are elements of our own
  // (line-mark.ts), not decorations, which would make Monaco re-render every visible line. The
  // error line is set once per run: a decoration, with its hover.
  const marks = useRef<{
    paused: LineMark;
    error: monaco.editor.IEditorDecorationsCollection;
    revealed: LineMark;
  } | null>(null);
  const wrap = useRef<HTMLDivElement>(null);
  // The outcome after each line, by line: a content widget each, whose text a step changes in
  // place. (As decorations' injected text, every change re-laid-out the editor's lines: bench:ui's
  // step p50 went from about 26 to 34 ms.)
  const results = useRef(new Map<number, ResultWidget>());
  // The editor keeps the listeners and commands registered at creation: they call the latest props.
  const latest = useRef({ onChange, onShortcut, onDrawn });
  latest.current = { onChange, onShortcut, onDrawn };

  // A layout effect: the editor exists, and Run is enabled (onReady), in the commit that mounts
  // the pane, so the first frame that shows the editor shows it ready.
  useLayoutEffect(() => {
    const model = monaco.editor.getModel(MAIN_URI) ?? monaco.editor.createModel(code, "typescript", MAIN_URI);
    if (model.getValue() !== code) model.setValue(code);
    const editor = monaco.editor.create(host.current!, { ...OPTIONS, model });
    editorRef.current = editor;
    const changes = model.onDidChangeContent(() => {
      // The outcomes and the error were of the program as it ran: once it changes, they point at
      // lines that are not that program's any more.
      for (const w of results.current.values()) editor.removeContentWidget(w);
      results.current.clear();
      marks.current?.error.clear();
      // So is a line a row revealed (its mark would otherwise grow over a pasted program).
      marks.current?.revealed.show(0);
      monaco.editor.setModelMarkers(model, "verbslab-run", []);
      wrap.current?.setAttribute("data-error-line", "");
      wrap.current?.removeAttribute("data-revealed-line");
      if (!applying.current) latest.current.onChange(model.getValue());
    });
    editor.addCommand(monaco.KeyCode.F10, () => latest.current.onShortcut?.("step"));
    editor.addCommand(monaco.KeyCode.F8, () => latest.current.onShortcut?.("continue"));
    editor.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyCode.Enter, () => latest.current.onShortcut?.("run"));
    marks.current = {
      paused: new LineMark(editor, "vl-paused-line", "vl-paused-glyph"),
      error: editor.createDecorationsCollection(),
      revealed: new LineMark(editor, "vl-revealed-line"),
    };
    // What the paused line's decoration said on hover, from a hover provider (no decoration).
    const pausedHover = monaco.languages.registerHoverProvider("typescript", {
      provideHover: (m, position) => {
        const line = marks.current?.paused.shown;
        if (m !== model || !line || position.lineNumber !== line) return null;
        return {
          range: new monaco.Range(line, 1, line, model.getLineMaxColumn(line)),
          contents: [{ value: PAUSED_HOVER }],
        };
      },
    });
    // The browser scrolls Monaco's scrollable box itself to bring something inside it into view
    // (a click's or a focus's scrollIntoView on its very wide lines layer): the text then sits
    // shifted left under the gutter while Monaco's own horizontal scroll reads 0, and Monaco undoes
    // only such vertical scrolls. Monaco scrolls sideways by its own scroll position alone.
    const scrollable = host.current!.querySelector<HTMLElement>(".editor-scrollable");
    const unscroll = () => {
      if (scrollable && scrollable.scrollLeft !== 0) scrollable.scrollLeft = 0;
    };
    scrollable?.addEventListener("scroll", unscroll);
    onReady?.(emitJavaScript);
    // Monaco draws its lines in the animation frame it asked for while being created; a frame
    // asked for after that runs after it, and finds them there (or, rarely, waits one more).
    let frame = 0;
    const drawn = () => {
      if (host.current?.querySelector(".view-line")) latest.current.onDrawn?.();
      else frame = requestAnimationFrame(drawn);
    };
    frame = requestAnimationFrame(drawn);
    return () => {
      cancelAnimationFrame(frame);
      scrollable?.removeEventListener("scroll", unscroll);
      pausedHover.dispose();
      marks.current?.paused.dispose();
      marks.current?.revealed.dispose();
      marks.current = null;
      changes.dispose();
      editor.dispose();
      model.dispose();
      editorRef.current = null;
    };
    // Created once: later `code` props arrive through the effect below.
  }, []);

  // A new program from outside (another lesson step, the solution, a reset): one edit, so the
  // learner can undo it.
  useLayoutEffect(() => {
    const editor = editorRef.current;
    const model = editor?.getModel();
    if (!editor || !model || model.getValue() === code) return;
    applying.current = true;
    try {
      editor.executeEdits("", [{ range: model.getFullModelRange(), text: code, forceMoveMarkers: true }]);
      editor.pushUndoStop();
      // The new program is read from the start of its lines, not where the last one was scrolled to.
      editor.setScrollLeft(0, monaco.editor.ScrollType.Immediate);
    } finally {
      applying.current = false;
    }
  }, [code]);

  // Paused: the verb's line is highlighted and scrolled into view.
  useLayoutEffect(() => {
    const editor = editorRef.current;
    const m = marks.current;
    const model = editor?.getModel();
    if (!editor || !m || !model) return;
    const line = pausedAt && inModel(model, pausedAt.line);
    m.paused.show(line || 0);
    wrap.current?.setAttribute("data-paused-line", String(line || ""));
    if (line) {
      // The verb's line from its start: a long line stepped past before must not leave it scrolled sideways.
      editor.setScrollLeft(0, monaco.editor.ScrollType.Immediate);
      editor.revealLineInCenterIfOutsideViewport(line, monaco.editor.ScrollType.Immediate);
    }
  }, [pausedAt?.line, pausedAt?.column]);

  // Each line's latest outcome, after the line's text.
  useEffect(() => {
    const editor = editorRef.current;
    const model = editor?.getModel();
    if (!editor || !model) return;
    const shown = results.current;
    const wanted = new Map<number, ShownResult>();
    for (const r of lineResults ?? []) {
      const line = inModel(model, r.line);
      if (line) wanted.set(line, r);
    }
    for (const [line, w] of shown)
      if (!wanted.has(line)) {
        editor.removeContentWidget(w);
        shown.delete(line);
      }
    for (const [line, r] of wanted) {
      const text = `→ ${r.text}${r.count > 1 ? ` (×${r.count})` : ""}`;
      const w = shown.get(line);
      if (w) w.show(text, r.bad);
      else {
        const made = new ResultWidget(line, model.getLineMaxColumn(line), text, r.bad);
        shown.set(line, made);
        editor.addContentWidget(made);
      }
    }
  }, [lineResults]);

  // The error the program ended with: a marker at its line and column, and the line marked.
  useEffect(() => {
    const m = marks.current;
    const model = editorRef.current?.getModel();
    if (!m || !model) return;
    const line = errorAt && inModel(model, errorAt.line);
    m.error.set(line ? [lineMark(line, "vl-error-line", "vl-error-glyph", errorAt.message)] : []);
    wrap.current?.setAttribute("data-error-line", String(line || ""));
    monaco.editor.setModelMarkers(
      model,
      "verbslab-run",
      line
        ? [
            {
              severity: monaco.MarkerSeverity.Error,
              message: errorAt.message,
              startLineNumber: line,
              startColumn: errorAt.column,
              endLineNumber: line,
              endColumn:
                model.getWordAtPosition({ lineNumber: line, column: errorAt.column })?.endColumn ?? errorAt.column + 1,
            },
          ]
        : [],
    );
    if (line) editorRef.current!.revealLineInCenterIfOutsideViewport(line);
  }, [errorAt?.line, errorAt?.column, errorAt?.message]);

  // A row asked for its line: scroll there, put the cursor on the call, highlight the line.
  useEffect(() => {
    const editor = editorRef.current;
    const m = marks.current;
    const model = editor?.getModel();
    if (!editor || !m || !model || !reveal) return;
    const line = inModel(model, reveal.line);
    if (!line) return;
    m.revealed.show(line);
    wrap.current?.setAttribute("data-revealed-line", String(line));
    editor.setPosition({ lineNumber: line, column: reveal.column });
    // Sideways only as far as the call's column needs (from the line's start, not from where it was).
    editor.setScrollLeft(0, monaco.editor.ScrollType.Immediate);
    editor.revealPositionInCenter({ lineNumber: line, column: reveal.column }, monaco.editor.ScrollType.Immediate);
  }, [reveal]);

  return (
    <div className="editor-wrap" ref={wrap}>
      <section style={{ display: "flex", position: "relative", width: "100%", height: "100%" }}>
        <div ref={host} style={{ width: "100%" }} />
      </section>
    </div>
  );
});

const PAUSED_HOVER = "paused before this line's verb";

/** `line` if main.ts has it (the program may have been edited since it ran), else 0. */
const inModel = (model: monaco.editor.ITextModel, line: number) =>
  line >= 1 && line <= model.getLineCount() ? line : 0;

function lineMark(
  line: number,
  className: string,
  glyph?: string,
  hover?: string,
): monaco.editor.IModelDeltaDecoration {
  return {
    range: new monaco.Range(line, 1, line, 1),
    options: {
      isWholeLine: true,
      className,
      ...(glyph && { linesDecorationsClassName: glyph }),
      ...(hover && { hoverMessage: { value: hover } }),
    },
  };
}

/** A line's outcome, placed just after the line's last character. */
class ResultWidget implements monaco.editor.IContentWidget {
  private readonly node = document.createElement("span");
  private readonly position: monaco.editor.IContentWidgetPosition;
  constructor(
    private readonly line: number,
    column: number,
    text: string,
    bad: boolean,
  ) {
    this.position = {
      position: { lineNumber: line, column },
      preference: [monaco.editor.ContentWidgetPositionPreference.EXACT],
    };
    this.show(text, bad);
  }
  /** Changes the text in place: Monaco lays nothing out again. */
  show(text: string, bad: boolean) {
    if (this.node.textContent !== text) this.node.textContent = text;
    const cls = bad ? "vl-result vl-result-bad" : "vl-result";
    if (this.node.className !== cls) this.node.className = cls;
  }
  getId() {
    return `verbslab.result.${this.line}`;
  }
  getDomNode() {
    return this.node;
  }
  getPosition() {
    return this.position;
  }
}
