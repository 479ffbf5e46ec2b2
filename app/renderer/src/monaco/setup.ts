/**
 * Monaco, from local files only: the editor core, TypeScript support and their two workers,
 * bundled by Vite. This module is imported lazily (with the editor pane), so the first paint
 * does not wait for it.
 */
import * as monaco from "monaco-editor/editor/editor.api";
import "monaco-editor/languages/definitions/typescript/register";
import * as ts from "monaco-editor/languages/features/typescript/register";
// editor.api is the bare core: without these contributions the TypeScript worker's completions,
// hover docs (the contract's TSDoc) and signature help have no widget to show them in.
import "monaco-editor/editor/contrib/suggest/browser/suggestController";
import "monaco-editor/features/suggest/register";
import "monaco-editor/features/snippet/register";
import "monaco-editor/features/hover/register";
import "monaco-editor/features/parameterHints/register";
import "monaco-editor/features/gotoError/register";
import "monaco-editor/features/bracketMatching/register";
import "monaco-editor/features/comment/register";
import "monaco-editor/features/find/register";
import "monaco-editor/features/wordHighlighter/register";
import "monaco-editor/features/contextmenu/register";
import "monaco-editor/features/clipboard/register";
import "monaco-editor/features/codeAction/register";
import EditorWorker from "monaco-editor/editor/editor.worker?worker";
import TsWorker from "monaco-editor/languages/features/typescript/ts.worker?worker";
import { EXTRA_LIBS } from "./typings.js";
import type { CompiledProgram } from "../runner/protocol.js";
import { registerImportQuickFix } from "./quick-fix.js";

self.MonacoEnvironment = {
  getWorker(_id: string, label: string) {
    return label === "typescript" || label === "javascript" ? new TsWorker() : new EditorWorker();
  },
};

ts.typescriptDefaults.setCompilerOptions({
  target: ts.ScriptTarget.ES2020,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.NodeJs,
  strict: true,
  noEmitOnError: false,
  allowNonTsExtensions: true,
  lib: ["es2022", "webworker"],
  // The runner maps stack frames back to main.ts with it (the learner's line, not the emitted one).
  sourceMap: true,
});
for (const lib of EXTRA_LIBS) ts.typescriptDefaults.addExtraLib(lib.content, lib.path);
// Quick fixes are ours (monaco/quick-fix.ts): TypeScript's import fixes can name the typings'
// virtual files (file:///verbslab/…) instead of "verbslab", which the runner refuses. The rest of
// TypeScript's language features stay.
ts.typescriptDefaults.setModeConfiguration({ ...ts.typescriptDefaults.modeConfiguration, codeActions: false });
registerImportQuickFix(monaco);
// Emit even when there are type errors: the learner is asked, and may see the verb fail instead.
ts.typescriptDefaults.setEagerModelSync(true);

export const MAIN_URI = monaco.Uri.parse("file:///main.ts");

/** Compiles the editor's program to JavaScript with Monaco's TypeScript worker (no network, no Node). */
export async function emitJavaScript(): Promise<CompiledProgram> {
  const model = monaco.editor.getModel(MAIN_URI);
  if (!model) throw new Error("the editor is not ready yet");
  const source = model.getValue();
  const getWorker = await ts.getTypeScriptWorker();
  const worker = await getWorker(MAIN_URI);
  // Type errors may still run (the verb's own error teaches more), but a program that does not parse
  // would run as TypeScript's error recovery rewrote it, not as the learner wrote it.
  const syntax = await worker.getSyntacticDiagnostics(MAIN_URI.toString());
  const where = (d: { start?: number; messageText: string | { messageText: string } }) => {
    const at = model.getPositionAt(d.start ?? 0);
    const text = typeof d.messageText === "string" ? d.messageText : d.messageText.messageText;
    return `line ${at.lineNumber}, column ${at.column}: ${text}`;
  };
  if (syntax.length > 0)
    throw new Error(`main.ts does not parse, so nothing ran. ${syntax.slice(0, 3).map(where).join("; ")}`);
  const typeErrors = (await worker.getSemanticDiagnostics(MAIN_URI.toString()))
    .filter((d) => d.category === 1)
    .map((d) => {
      const at = model.getPositionAt(d.start ?? 0);
      const message = typeof d.messageText === "string" ? d.messageText : d.messageText.messageText;
      return { line: at.lineNumber, column: at.column, message };
    });
  const out = await worker.getEmitOutput(MAIN_URI.toString());
  const js = out.outputFiles.find((f) => f.name.endsWith(".js"));
  if (!js) throw new Error("TypeScript produced no JavaScript for main.ts");
  const map = out.outputFiles.find((f) => f.name.endsWith(".js.map"))?.text;
  // The map travels with the program; the comment naming its file would point nowhere.
  const text = js.text.replace(/\n\/\/# sourceMappingURL=.*\s*$/, "\n");
  return { js: text, source, typeErrors, ...(map && { map }) };
}

export { monaco, ts };
