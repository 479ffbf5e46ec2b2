/** The Monaco editor over main.ts, with the verbs API typings. Loaded lazily with Monaco itself. */
import { Editor } from "@monaco-editor/react";
import { memo, useEffect, useRef } from "react";
import { MAIN_URI, emitJavaScript, monaco } from "../monaco/setup.js";

export interface EditorPaneProps {
  code: string;
  onChange: (code: string) => void;
  /** Called once the editor exists, with a function that compiles the current program. */
  onReady?: (compile: () => Promise<string>) => void;
  /** Keyboard shortcuts that must also work while the editor has focus. */
  onShortcut?: (action: "run" | "step" | "continue") => void;
}

// One object for every render: a new one makes the wrapper call editor.updateOptions() again.
const OPTIONS = {
  minimap: { enabled: false },
  fontSize: 13,
  fontFamily: "'DejaVu Sans Mono', ui-monospace, monospace",
  scrollBeyondLastLine: false,
  automaticLayout: true,
  tabSize: 2,
  renderLineHighlight: "line",
  // Hover docs and suggestions are often wider than the editor column: let them out of the panel.
  fixedOverflowWidgets: true,
} as const;

/** Memoised: App re-renders on every bridge event, the editor only when its own props change. */
export default memo(function EditorPane({ code, onChange, onReady, onShortcut }: EditorPaneProps) {
  useEffect(() => () => monaco.editor.getModel(MAIN_URI)?.dispose(), []);
  // Monaco keeps the commands registered at mount: they must call the latest handler.
  const shortcut = useRef(onShortcut);
  shortcut.current = onShortcut;
  return (
    <div className="editor-wrap">
      <Editor
        height="100%"
        language="typescript"
        path={MAIN_URI.toString()}
        value={code}
        onChange={(v) => onChange(v ?? "")}
        options={OPTIONS}
        onMount={(editor) => {
          editor.addCommand(monaco.KeyCode.F10, () => shortcut.current?.("step"));
          editor.addCommand(monaco.KeyCode.F8, () => shortcut.current?.("continue"));
          editor.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyCode.Enter, () => shortcut.current?.("run"));
          onReady?.(emitJavaScript);
        }}
      />
    </div>
  );
});
