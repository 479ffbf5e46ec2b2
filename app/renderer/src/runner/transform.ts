/**
 * Prepares compiled learner code for the worker: `import … from "verbslab"` becomes a read
 * of the constants module the worker provides (a module loaded from a blob URL cannot
 * resolve bare specifiers), and any other import is refused with a clear message, since
 * learner code has no packages, files or network. Every line stays on its line (an import's
 * replacement is padded with the newlines it spanned), so the source map TypeScript made for
 * the emitted JavaScript still holds for the rewritten one.
 */

/** The global the worker sets to the `verbslab` module's values before importing the program. */
export const VERBSLAB_GLOBAL = "__verbslab";

export class ImportError extends Error {
  constructor(specifier: string) {
    super(`learner programs can only import from "verbslab" (found an import of "${specifier}")`);
    this.name = "ImportError";
  }
}

const IMPORT_RE = /^\s*import\s+(?:(type)\s+)?([\s\S]*?)\s+from\s+["']([^"']+)["'];?[ \t]*$/gm;
const BARE_IMPORT_RE = /^\s*import\s+["']([^"']+)["'];?[ \t]*$/gm;

/** `{ A, B as C }` → `{ A, B: C }`, `* as v` → `v`, `D, { A }` → default + named. */
function bindings(clause: string): string[] {
  const out: string[] = [];
  const named = /\{([\s\S]*)\}/.exec(clause);
  const rest = clause
    .replace(/\{[\s\S]*\}/, "")
    .replace(/,/g, " ")
    .trim();
  if (named) {
    const parts = named[1]
      .split(",")
      .map((p) => p.trim())
      .filter((p) => p && !p.startsWith("type "))
      .map((p) => p.replace(/\s+as\s+/, ": "));
    if (parts.length) out.push(`const { ${parts.join(", ")} } = globalThis.${VERBSLAB_GLOBAL};`);
  }
  const ns = /\*\s+as\s+(\w+)/.exec(rest);
  if (ns) out.push(`const ${ns[1]} = globalThis.${VERBSLAB_GLOBAL};`);
  else if (rest) out.push(`const ${rest} = globalThis.${VERBSLAB_GLOBAL};`);
  return out;
}

/** The newlines `text` spans, to append to its one-line replacement. */
const sameLines = (text: string) => "\n".repeat(text.split("\n").length - 1);

export function rewriteImports(js: string): string {
  const replaced = js.replace(IMPORT_RE, (all, typeOnly: string | undefined, clause: string, spec: string) => {
    if (spec !== "verbslab") throw new ImportError(spec);
    return (typeOnly ? "" : bindings(clause).join(" ")) + sameLines(all);
  });
  return replaced.replace(BARE_IMPORT_RE, (all, spec: string) => {
    if (spec !== "verbslab") throw new ImportError(spec);
    return sameLines(all);
  });
}
