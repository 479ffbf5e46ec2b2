/**
 * Monaco, from local files only: the editor core, TypeScript support and their two workers,
 * bundled by Vite. This module is imported lazily (with the editor pane), so the first paint
 * does not wait for it.
 */
import * as monaco from "monaco-editor/editor/editor.api";
import "monaco-editor/languages/definitions/typescript/register";
import * as ts from "monaco-editor/languages/features/typescript/register";
import EditorWorker from "monaco-editor/editor/editor.worker?worker";
import TsWorker from "monaco-editor/languages/features/typescript/ts.worker?worker";
import { loader } from "@monaco-editor/react";
import { EXTRA_LIBS } from "./typings.js";

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
});
for (const lib of EXTRA_LIBS) ts.typescriptDefaults.addExtraLib(lib.content, lib.path);
// Emit even when there are type errors: the learner should see the verb fail, not the compiler.
ts.typescriptDefaults.setEagerModelSync(true);

loader.config({ monaco });

export const MAIN_URI = monaco.Uri.parse("file:///main.ts");

/** Compiles the editor's program to JavaScript with Monaco's TypeScript worker (no network, no Node). */
export async function emitJavaScript(): Promise<string> {
  const model = monaco.editor.getModel(MAIN_URI);
  if (!model) throw new Error("the editor is not ready yet");
  const getWorker = await ts.getTypeScriptWorker();
  const worker = await getWorker(MAIN_URI);
  const out = await worker.getEmitOutput(MAIN_URI.toString());
  const js = out.outputFiles.find((f) => f.name.endsWith(".js"));
  if (!js) throw new Error("TypeScript produced no JavaScript for main.ts");
  return js.text;
}

export { monaco, ts };
