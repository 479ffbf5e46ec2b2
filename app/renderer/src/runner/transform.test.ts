import { describe, expect, it } from "vitest";
import { ImportError, rewriteImports } from "./transform.js";

describe("rewriteImports", () => {
  it("turns named, renamed, namespace and default imports of verbslab into reads of the worker's module", () => {
    const js = [
      'import { IBV_QPS_INIT, IBV_QP_STATE as S } from "verbslab";',
      "import * as v from 'verbslab';",
      'import def, { IBV_QPT_RC } from "verbslab";',
      "export default async function main(verbs) {}",
    ].join("\n");
    const out = rewriteImports(js);
    expect(out).toContain("const { IBV_QPS_INIT, IBV_QP_STATE: S } = globalThis.__verbslab;");
    expect(out).toContain("const v = globalThis.__verbslab;");
    expect(out).toContain("const { IBV_QPT_RC } = globalThis.__verbslab;");
    expect(out).toContain("const def = globalThis.__verbslab;");
    expect(out).not.toMatch(/\bimport\b/);
  });
  it("spans multi-line import lists and drops type-only imports", () => {
    const out = rewriteImports(
      'import {\n  IBV_QPS_RTS,\n  type Verbs,\n} from "verbslab";\nimport type { Qp } from "verbslab";\n',
    );
    expect(out.trim()).toBe("const { IBV_QPS_RTS } = globalThis.__verbslab;");
  });
  it("refuses any other module", () => {
    expect(() => rewriteImports('import fs from "node:fs";')).toThrow(ImportError);
    expect(() => rewriteImports('import "./x.js";')).toThrow(/only import from "verbslab"/);
  });
  it("runs: the rewritten module sees the constants", async () => {
    (globalThis as Record<string, unknown>).__verbslab = { IBV_QPS_RTS: 3 };
    const js = rewriteImports('import { IBV_QPS_RTS } from "verbslab";\nexport default () => IBV_QPS_RTS;');
    const mod = await import(`data:text/javascript,${encodeURIComponent(js)}`);
    expect(mod.default()).toBe(3);
  });
});
