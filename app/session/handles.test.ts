import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../sim/index.js";
import { createHandles } from "./handles.js";

describe("the handle registry", () => {
  it("numbers objects in creation order, once each, with their props in the first ref", () => {
    const backend = createSimBackend({ seed: 1 });
    const r = createHandles(backend);
    const ctx = backend.openDevice("rxe0");
    const pd = ctx.allocPd();
    const a = r.register(ctx, "context");
    const b = r.register(pd, "pd");
    expect([a.entry.handle, a.fresh, b.entry.handle, b.fresh]).toEqual([1, true, 2, true]);
    expect(r.register(pd, "pd")).toEqual({ entry: b.entry, fresh: false });
    expect(b.entry.ref).toEqual({ $handle: 2, type: "pd", props: { context: { $handle: 1, type: "context" } } });
    expect(r.get(0)?.obj).toBe(backend);
    expect(r.toRef(pd)).toEqual({ $handle: 2, type: "pd" });
  });

  it("turns refs back into objects, and refuses handles it never gave out or that are not numbers", () => {
    const backend = createSimBackend({ seed: 1 });
    const r = createHandles(backend);
    const ctx = backend.openDevice("rxe0");
    r.register(ctx, "context");
    expect(r.decodeArgs([{ ctx: { $handle: 1, type: "context" } }, 5])).toEqual([{ ctx }, 5]);
    expect(() => r.decodeArgs([{ $handle: 9, type: "pd" }])).toThrow(/no object with handle 9/);
    expect(() => r.decodeArgs([{ $handle: "ctx1", type: "context" }])).toThrow(TypeError);
  });

  it("hands results out with refs: created objects with props, known ones bare", () => {
    const backend = createSimBackend({ seed: 1 });
    const r = createHandles(backend);
    const ctx = backend.openDevice("rxe0");
    const { entry } = r.register(ctx, "context");
    const pd = ctx.allocPd();
    const created = r.register(pd, "pd").entry.ref;
    expect(r.withProps({ pd, ctx }, [created])).toEqual({ pd: created, ctx: entry.ref });
  });
});
