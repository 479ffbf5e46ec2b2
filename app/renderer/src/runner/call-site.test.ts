/**
 * Call sites map back to main.ts as the learner wrote it: TypeScript's own emit and source map
 * (the compiler Monaco's worker runs), the import rewrite, and a stack as V8 writes it.
 */
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { CallSites, frameIn, variableAt } from "./call-site.js";
import { SourceMap } from "./source-map.js";
import { rewriteImports } from "./transform.js";

const SOURCE = `import {
  IBV_QPT_RC,
  type Verbs,
} from "verbslab";

interface Unused {
  a: number;
}

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd: unknown = await ctx.allocPd();
  await (pd as { x(): void }).x();
}
`;

function compile(source: string) {
  const out = ts.transpileModule(source, {
    compilerOptions: { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.ESNext, sourceMap: true },
    fileName: "main.ts",
  });
  return { js: rewriteImports(out.outputText), map: out.sourceMapText! };
}

/** The 1-based position of `needle` in `text`. */
function at(text: string, needle: string) {
  const i = text.indexOf(needle);
  const before = text.slice(0, i).split("\n");
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

describe("call sites", () => {
  it("map a generated position back to the TypeScript line and column (types and imports removed above it)", () => {
    const { js, map } = compile(SOURCE);
    const gen = at(js, "allocPd");
    expect(gen.line).toBeLessThan(at(SOURCE, "allocPd").line); // the interface is gone from the JS
    expect(new SourceMap(map).original(gen)).toEqual(at(SOURCE, "allocPd"));
  });
  it("read the first learner frame of a V8 stack, and the variable a create assigns to", () => {
    const { js, map } = compile(SOURCE);
    const url = "blob:http://127.0.0.1:5173/6f1c";
    const gen = at(js, "openDevice");
    const stack = [
      "Error",
      "    at Object.call (http://127.0.0.1:5173/assets/learner-worker.js:1:2345)",
      "    at o.<computed> (http://127.0.0.1:5173/assets/learner-worker.js:1:999)",
      `    at main (${url}:${gen.line}:${gen.column})`,
    ].join("\n");
    expect(frameIn(stack, url)).toEqual(gen);
    const sites = new CallSites(url, new SourceMap(map), SOURCE);
    expect(sites.site(stack, true)).toEqual({ ...at(SOURCE, "openDevice"), variable: "ctx" });
    expect(sites.site("Error\n    at elsewhere (x.js:1:1)")).toBeUndefined();
  });
  it("names the variable of a declaration, a typed declaration or an assignment, and nothing else", () => {
    const col = (line: string, name: string) => line.indexOf(name) + 1;
    const l1 = "  const a = await pd.createQp({ send_cq: cq });";
    expect(variableAt(l1, col(l1, "createQp"))).toBe("a");
    const l2 = "  let b: Qp = await pd.createQp(init);";
    expect(variableAt(l2, col(l2, "createQp"))).toBe("b");
    const l3 = "  qp = await pd.createQp(init);";
    expect(variableAt(l3, col(l3, "createQp"))).toBe("qp");
    const l4 = "  qps.push(await pd.createQp(init));";
    expect(variableAt(l4, col(l4, "createQp"))).toBeUndefined();
    const l5 = "  if (x === await pd.createQp(init)) {}";
    expect(variableAt(l5, col(l5, "createQp"))).toBeUndefined();
  });
  it("refuse a source map that is not one", () => {
    expect(() => new SourceMap("{")).toThrow(/not JSON/);
    expect(() => new SourceMap('{"version":2}')).toThrow(/version 3/);
  });
  it("the import rewrite keeps every line where it was", () => {
    const js = 'import {\n  A,\n  B,\n} from "verbslab";\nimport type { T } from "verbslab";\nconst x = 1;\n';
    const out = rewriteImports(js);
    expect(out.split("\n").indexOf("const x = 1;")).toBe(js.split("\n").indexOf("const x = 1;"));
  });
});
