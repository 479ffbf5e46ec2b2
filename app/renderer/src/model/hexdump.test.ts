import { describe, expect, it } from "vitest";
import { changedOffsets, hexRows } from "./hexdump.js";

describe("hexRows", () => {
  it("groups 16 bytes a row with printable ASCII", () => {
    const bytes = new TextEncoder().encode("hello, RDMA world!\n");
    const rows = hexRows(bytes);
    expect(rows).toHaveLength(2);
    expect(rows[0].offset).toBe(0);
    expect(rows[0].ascii).toBe("hello, RDMA worl");
    expect(rows[1].ascii).toBe("d!·");
  });
  it("stops at the limit", () => expect(hexRows(new Uint8Array(1000), 64)).toHaveLength(4));
  it("finds the bytes a write changed", () => {
    expect(changedOffsets(Uint8Array.of(0, 0, 0), Uint8Array.of(0, 7, 0))).toEqual([1]);
    expect(changedOffsets(undefined, Uint8Array.of(1))).toEqual([]);
  });
});
