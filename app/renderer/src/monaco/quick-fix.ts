/**
 * Monaco's Quick Fix (the light bulb, Ctrl+.) for a verbs constant used but not imported:
 * TypeScript's "Cannot find name 'IBV_…'" marker gets "Import IBV_… from "verbslab"".
 * TypeScript's own fixes are turned off (monaco/setup.ts): its imports can name the typings'
 * virtual files, which the runner refuses (learner code imports from "verbslab" only).
 */
import type * as Monaco from "monaco-editor/editor/editor.api";
import { importFix } from "./import-fix.js";

/** TypeScript's "Cannot find name 'X'." and "Cannot find name 'X'. Did you mean 'Y'?". */
const CANNOT_FIND = new Set(["2304", "2552"]);

const codeOf = (m: Monaco.editor.IMarkerData) => (typeof m.code === "object" ? m.code.value : m.code);

export function registerImportQuickFix(monaco: typeof Monaco): Monaco.IDisposable {
  return monaco.languages.registerCodeActionProvider(
    "typescript",
    {
      provideCodeActions(model, _range, context) {
        const actions: Monaco.languages.CodeAction[] = [];
        const seen = new Set<string>();
        for (const marker of context.markers) {
          if (!CANNOT_FIND.has(String(codeOf(marker)))) continue;
          const name = model.getValueInRange({
            startLineNumber: marker.startLineNumber,
            startColumn: marker.startColumn,
            endLineNumber: marker.endLineNumber,
            endColumn: marker.endColumn,
          });
          if (seen.has(name)) continue;
          seen.add(name);
          const edit = importFix(model.getValue(), name);
          if (!edit) continue;
          actions.push({
            title: `Import ${name} from "verbslab"`,
            kind: "quickfix",
            diagnostics: [marker],
            isPreferred: true,
            edit: {
              edits: [
                {
                  resource: model.uri,
                  versionId: model.getVersionId(),
                  textEdit: {
                    range: new monaco.Range(edit.startLine, edit.startColumn, edit.endLine, edit.endColumn),
                    text: edit.text,
                  },
                },
              ],
            },
          });
        }
        return { actions, dispose() {} };
      },
    },
    { providedCodeActionKinds: ["quickfix"] },
  );
}
