import { describe, expect, it } from "vitest";
import { applyEdit, importFix } from "./import-fix.js";

const fixed = (src: string, name: string) => {
  const e = importFix(src, name);
  return e && applyEdit(src, e);
};

describe("the import Quick Fix", () => {
  it("adds a constant to the existing import from verbslab", () => {
    const src = 'import { IBV_QPS_INIT, type Verbs } from "verbslab";\nconst m = IBV_QP_STATE;\n';
    expect(fixed(src, "IBV_QP_STATE")).toBe(
      'import { IBV_QP_STATE, IBV_QPS_INIT, type Verbs } from "verbslab";\nconst m = IBV_QP_STATE;\n',
    );
  });
  it("keeps a multi-line import multi-line, at its indent", () => {
    const src = 'import {\n    IBV_QPS_INIT,\n} from "verbslab";\n';
    expect(fixed(src, "IBV_QPS_RTR")).toBe('import {\n    IBV_QPS_RTR,\n    IBV_QPS_INIT,\n} from "verbslab";\n');
  });
  it("adds the import when there is none", () => {
    expect(fixed("export default async function main() { IBV_WR_SEND; }\n", "IBV_WR_SEND")).toBe(
      'import { IBV_WR_SEND } from "verbslab";\nexport default async function main() { IBV_WR_SEND; }\n',
    );
  });
  it("offers nothing for a name that is not a verbs constant, or is imported already", () => {
    expect(importFix("const x = IBV_NOT_A_THING;", "IBV_NOT_A_THING")).toBeUndefined();
    expect(importFix("const x = foo;", "foo")).toBeUndefined();
    expect(importFix('import { IBV_QP_STATE as S } from "verbslab";', "IBV_QP_STATE")).toBeUndefined();
  });
});
