/**
 * The Monaco editor over main.ts, with the verbs API typings. Loaded lazily with Monaco itself.
 * This component owns the editor: it creates it when it mounts and disposes it (and its model)
 * when it unmounts.
 */
import { memo, useLayoutEffect, useRef } from "react";
import { MAIN_URI, emitJavaScript, monaco } from "../monaco/setup.js";

export interface EditorPaneProps {
  code: string;
  onChange: (code: string) => void;
  /** Called once the editor exists, with a function that compiles the current program. */
  onReady?: (compile: () => Promise<string>) => void;
  /** Keyboard shortcuts that must also work while the editor has focus. */
  onShortcut?: (action: "run" | "step" | "continue") => void;
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
export default memo(function EditorPane({ code, onChange, onReady, onShortcut }: EditorPaneProps) {
  const host = useRef<HTMLDivElement>(null);
  const editorRef = useRef<monaco.editor.IStandaloneCodeEditor | null>(null);
  // Set while a new `code` prop is written into the model: that edit is not the learner's.
  const applying = useRef(false);
  // The editor keeps the listeners and commands registered at creation: they call the latest props.
  const latest = useRef({ onChange, onShortcut });
  latest.current = { onChange, onShortcut };

  // A layout effect: the editor exists, and Run is enabled (onReady), in the commit that mounts
  // the pane, so the first frame that shows the editor shows it ready.
  useLayoutEffect(() => {
    const model = monaco.editor.getModel(MAIN_URI) ?? monaco.editor.createModel(code, "typescript", MAIN_URI);
    if (model.getValue() !== code) model.setValue(code);
    const editor = monaco.editor.create(host.current!, { ...OPTIONS, model });
    editorRef.current = editor;
    const changes = model.onDidChangeContent(() => {
      if (!applying.current) latest.current.onChange(model.getValue());
    });
    editor.addCommand(monaco.KeyCode.F10, () => latest.current.onShortcut?.("step"));
    editor.addCommand(monaco.KeyCode.F8, () => latest.current.onShortcut?.("continue"));
    editor.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyCode.Enter, () => latest.current.onShortcut?.("run"));
    onReady?.(emitJavaScript);
    return () => {
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
    } finally {
      applying.current = false;
    }
  }, [code]);

  return (
    <div className="editor-wrap">
      <section style={{ display: "flex", position: "relative", width: "100%", height: "100%" }}>
        <div ref={host} style={{ width: "100%" }} />
      </section>
    </div>
  );
});
