/**
 * The Quick Fix for a verbs constant used but not imported (`IBV_QP_STATE` with no import of
 * it): add it to the program's `import { … } from "verbslab"`, or add that import. The names
 * are verbs/constants.ts's, the module the learner's `verbslab` re-exports. Pure (no Monaco),
 * so it is tested alone; monaco/quick-fix.ts registers it.
 */
import * as constants from "../../../../verbs/constants.js";

/** Every constant learner code can import from "verbslab" (IBV_QPS_RTS, IBV_QP_STATE, …). */
export const VERBS_CONSTANTS: ReadonlySet<string> = new Set(Object.keys(constants).filter((k) => /^IBV_/.test(k)));

/** A text edit by 1-based positions (Monaco's ranges). */
export interface TextEdit {
  startLine: number;
  startColumn: number;
  endLine: number;
  endColumn: number;
  text: string;
}

const NAMED_IMPORT = /import\s*\{([^}]*)\}\s*from\s*["']verbslab["']/;

/** The edit that imports `name` in `source`, or undefined when it is not a verbs constant or is imported already. */
export function importFix(source: string, name: string): TextEdit | undefined {
  if (!VERBS_CONSTANTS.has(name)) return undefined;
  const m = NAMED_IMPORT.exec(source);
  if (m) {
    const names = m[1]!.split(",").map(
      (n) =>
        n
          .trim()
          .replace(/^type\s+/, "")
          .split(/\s+as\s+/)[0],
    );
    if (names.includes(name)) return undefined;
    // Right after the "{": the learner's order and line breaks stay as they were.
    const at = position(source, m.index + m[0].indexOf("{") + 1);
    const multiline = m[1]!.includes("\n");
    const indent = multiline ? (/\n([ \t]*)\S/.exec(m[1]!)?.[1] ?? "  ") : "";
    return {
      ...at,
      endLine: at.startLine,
      endColumn: at.startColumn,
      text: multiline ? `\n${indent}${name},` : ` ${name},`,
    };
  }
  return { startLine: 1, startColumn: 1, endLine: 1, endColumn: 1, text: `import { ${name} } from "verbslab";\n` };
}

function position(source: string, offset: number): { startLine: number; startColumn: number } {
  const before = source.slice(0, offset);
  const lines = before.split("\n");
  return { startLine: lines.length, startColumn: lines.at(-1)!.length + 1 };
}

/** Applies `edit` to `source` (tests, and anyone checking what a fix would do). */
export function applyEdit(source: string, edit: TextEdit): string {
  const lines = source.split("\n");
  const offset = (line: number, col: number) =>
    lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0) + col - 1;
  return (
    source.slice(0, offset(edit.startLine, edit.startColumn)) +
    edit.text +
    source.slice(offset(edit.endLine, edit.endColumn))
  );
}
