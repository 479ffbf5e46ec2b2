/**
 * Where in main.ts a verb was called, or an error thrown: the first frame of a stack that is
 * in the learner's module (loaded from a blob URL), mapped back through the source map to
 * the TypeScript the learner wrote.
 */
import type { SourceSite } from "../../../session/transcript.js";
import type { Position, SourceMap } from "./source-map.js";

/** The generated position of the first stack frame in the module at `url` (V8's "url:line:col"). */
export function frameIn(stack: string | undefined, url: string): Position | undefined {
  if (!stack) return undefined;
  for (const line of stack.split("\n")) {
    const at = line.lastIndexOf(url);
    if (at < 0) continue;
    const m = /^:(\d+):(\d+)/.exec(line.slice(at + url.length));
    if (m) return { line: Number(m[1]), column: Number(m[2]) };
  }
  return undefined;
}

const IDENT = "[A-Za-z_$][\\w$]*";
/** `const a = await pd.`, `let a: Qp = await pd.`, `a = await pd.` before the called method's name. */
const ASSIGNED = new RegExp(
  `(?:^|[;{(]|\\b(?:const|let|var))\\s*(${IDENT})\\s*(?::[^=]+)?=\\s*(?:await\\s+)?(?:${IDENT}\\s*\\??\\.\\s*)*$`,
);

/** The variable the call at `column` (1-based, at the method's name or the callee) assigns its result to. */
export function variableAt(sourceLine: string, column: number): string | undefined {
  const before = sourceLine.slice(0, column - 1);
  return ASSIGNED.exec(before)?.[1];
}

/** Maps stacks of the learner's module back to main.ts. */
export class CallSites {
  private readonly lines: string[];

  constructor(
    private readonly url: string,
    private readonly map: SourceMap | undefined,
    source: string,
  ) {
    this.lines = source.split("\n");
  }

  /** The main.ts site of the first learner frame of `stack`; with `variable`, the name assigned there. */
  site(stack: string | undefined, variable = false): SourceSite | undefined {
    const gen = frameIn(stack, this.url);
    if (!gen) return undefined;
    const pos = this.map ? this.map.original(gen) : gen;
    if (!pos) return undefined;
    const name = variable ? variableAt(this.lines[pos.line - 1] ?? "", pos.column) : undefined;
    return { line: pos.line, column: pos.column, ...(name && { variable: name }) };
  }
}
