/**
 * Where a marked line went after an edit, as a Monaco decoration on that line would have moved:
 * LineMark (line-mark.ts) is no decoration, so it follows the learner's edits itself.
 */

/** One change of a Monaco content-change event: its range in the text before the edit, and what replaced it. */
export interface LineEdit {
  range: { startLineNumber: number; startColumn: number; endLineNumber: number; endColumn: number };
  text: string;
}

const newlines = (s: string) => s.split("\n").length - 1;

/**
 * The 1-based line that `line` is after `changes` (one event's, each range in the text before the
 * event): lines inserted or deleted above it move it; text typed at its start pushes it along with
 * the verb it marks; a deletion that swallows its start leaves it where the deletion began.
 */
export function followEdits(line: number, changes: readonly LineEdit[]): number {
  // From the bottom up: a change never moves the ranges above it.
  const bottomUp = [...changes].sort(
    (a, b) => b.range.startLineNumber - a.range.startLineNumber || b.range.startColumn - a.range.startColumn,
  );
  for (const { range: r, text } of bottomUp) {
    const delta = newlines(text) - (r.endLineNumber - r.startLineNumber);
    const endsAtLineStart = r.endLineNumber === line && r.endColumn === 1;
    if (r.endLineNumber < line || endsAtLineStart) line += delta;
    else if (r.startLineNumber < line) line = r.startLineNumber;
  }
  return line;
}
