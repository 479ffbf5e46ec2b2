import { describe, expect, it } from "vitest";
import { share } from "./share.js";

describe("share", () => {
  it("returns the previous object when nothing changed, deep down", () => {
    const a = { qps: [{ n: 1, q: { attr: { s: 2 } } }], bytes: new Uint8Array([1, 2]), x: undefined };
    const b = { qps: [{ n: 1, q: { attr: { s: 2 } } }], bytes: new Uint8Array([1, 2]), x: undefined };
    expect(share(a, b)).toBe(a);
  });
  it("keeps the unchanged parts and replaces the changed ones", () => {
    const a = { qps: [{ n: 1 }, { n: 2 }], mrs: [{ b: new Uint8Array([1]) }], t: [1] };
    const b = { qps: [{ n: 1 }, { n: 3 }], mrs: [{ b: new Uint8Array([2]) }], t: [1, 2] };
    const s = share(a, b);
    expect(s).not.toBe(a);
    expect(s).toEqual(b);
    expect(s.qps[0]).toBe(a.qps[0]);
    expect(s.qps[1]).toEqual({ n: 3 });
    expect(s.mrs[0].b).toBe(b.mrs[0].b);
    expect(s.t).toEqual([1, 2]);
  });
  it("notices keys that appear or go", () => {
    const a: Record<string, number | undefined> = { x: 1 };
    expect(share(a, { x: 1, y: 2 })).toEqual({ x: 1, y: 2 });
    expect(share({ x: 1, y: 2 }, a)).toEqual({ x: 1 });
    expect(share({ x: 1, y: undefined }, { x: 1, z: undefined })).toEqual({ x: 1, z: undefined });
    expect(share(null, a)).toBe(a);
    expect(share([1], [1, 2])).toEqual([1, 2]);
  });
});
