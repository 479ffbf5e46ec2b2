import { describe, expect, it } from "vitest";
import { changedFields, flatten } from "./diff.js";

describe("changedFields", () => {
  it("names nested fields that changed, by dotted path", () => {
    const before = { attr: { qp_state: 1, ah_attr: { grh: { dgid: "::" } }, dest_qp_num: 0 } };
    const after = { attr: { qp_state: 2, ah_attr: { grh: { dgid: "fe80::1" } }, dest_qp_num: 0 } };
    expect(changedFields(before, after)).toEqual(["attr.ah_attr.grh.dgid", "attr.qp_state"]);
  });
  it("is empty without a previous snapshot", () => {
    expect(changedFields(undefined, { a: 1 })).toEqual([]);
  });
  it("flattens to leaves only", () => {
    expect(flatten({ a: { b: 1, c: { d: "x" } } })).toEqual({ "a.b": 1, "a.c.d": "x" });
  });
});
