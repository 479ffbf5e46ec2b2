import { describe, expect, it } from "vitest";
import { decodeValue, encodeValue, type Ref, type WireValue } from "./wire.js";

/** What crosses the bridge or sits in a transcript line: JSON text. */
const roundTrip = (v: unknown, toRef?: (o: object) => Ref | undefined, fromRef?: (r: Ref) => unknown) =>
  decodeValue(JSON.parse(JSON.stringify(encodeValue(v, toRef))), fromRef);

describe("the wire codec", () => {
  it("keeps bigints exactly, in the transcript's { $bigint } form", () => {
    expect(encodeValue(18446744073709551615n)).toEqual({ $bigint: "18446744073709551615" });
    expect(roundTrip({ compare_add: 18446744073709551615n, swap: -1n })).toEqual({
      compare_add: 18446744073709551615n,
      swap: -1n,
    });
  });

  it("keeps bytes as lower-case hex and decodes them to a Uint8Array of the same bytes", () => {
    expect(encodeValue(new Uint8Array([0, 1, 254, 255]))).toEqual({ $bytes: "0001feff" });
    const view = new DataView(new Uint8Array([9, 10, 11, 12]).buffer, 1, 2);
    expect(encodeValue(view)).toEqual({ $bytes: "0a0b" });
    expect(encodeValue(new Uint8Array([1, 2]).buffer)).toEqual({ $bytes: "0102" });
    const back = roundTrip(new Uint8Array(70_000).map((_, i) => i & 0xff)) as Uint8Array;
    expect(back).toBeInstanceOf(Uint8Array);
    expect(back.length).toBe(70_000);
    expect(back[0x1ff]).toBe(0xff);
    expect(() => decodeValue({ $bytes: "0g" })).toThrow(TypeError);
  });

  it("keeps only the first maxBytes of a long value, with its whole length; the rest decode as zeros", () => {
    const w = encodeValue(new Uint8Array([1, 2, 3, 4]), undefined, 2);
    expect(w).toEqual({ $bytes: "0102", $length: 4 });
    expect(decodeValue(w)).toEqual(new Uint8Array([1, 2, 0, 0]));
    // A recorded (already encoded) cut value inside a bridge message stays as recorded.
    expect(roundTrip({ $bytes: "0102", $length: 4 })).toEqual({ $bytes: "0102", $length: 4 });
  });

  it("reads old transcripts' values: { $bigint } and { $bytes } as they are on disk", () => {
    expect(decodeValue(JSON.parse('[{"$bigint":"5"},{"$bytes":"0a0b"},{"qp_state":1}]'))).toEqual([
      5n,
      new Uint8Array([10, 11]),
      { qp_state: 1 },
    ]);
  });

  it("keeps undefined in lists (arity) and leaves undefined fields out, as JSON does", () => {
    expect(roundTrip([1, undefined, "x"])).toEqual([1, undefined, "x"]);
    expect((roundTrip([undefined]) as unknown[]).length).toBe(1);
    expect(encodeValue({ a: undefined, b: 1 })).toEqual({ b: 1 });
    expect(roundTrip(undefined)).toBeUndefined();
  });

  it("keeps NaN and the infinities, which JSON would turn into null", () => {
    const back = roundTrip({ nan: NaN, inf: Infinity, ninf: -Infinity }) as Record<string, number>;
    expect(back.nan).toBeNaN();
    expect(back.inf).toBe(Infinity);
    expect(back.ninf).toBe(-Infinity);
  });

  it("turns objects into refs with toRef, and refs back into objects with fromRef", () => {
    const qp = { qp_num: 17, modify() {} };
    const objects = new Map<number, object>([[3, qp]]);
    const toRef = (o: object): Ref | undefined => (o === qp ? { $handle: 3, type: "qp" } : undefined);
    const encoded = encodeValue({ wr: { qp, n: 1 } }, toRef);
    expect(encoded).toEqual({ wr: { qp: { $handle: 3, type: "qp" }, n: 1 } });
    expect(roundTrip({ wr: { qp } }, toRef, (r) => objects.get(r.$handle))).toEqual({ wr: { qp } });
    // Without fromRef a ref is plain data, props and all.
    const ref = { $handle: 3, type: "qp", props: { qp_num: 17, addr: { $bigint: "1" } } };
    expect(roundTrip(ref)).toEqual(ref);
  });

  it("decodes nested values at any depth of lists and objects", () => {
    const v = { wr: [{ sg_list: [{ addr: 1n, data: new Uint8Array([7]) }], next: [undefined, [NaN]] }] };
    const back = roundTrip(v) as typeof v;
    expect(back.wr[0]!.sg_list[0]!.addr).toBe(1n);
    expect([...back.wr[0]!.sg_list[0]!.data]).toEqual([7]);
    expect(back.wr[0]!.next[0]).toBeUndefined();
    expect((back.wr[0]!.next[1] as number[])[0]).toBeNaN();
  });

  it("carries an already-encoded value (a transcript event inside a bridge message) unchanged", () => {
    const event = { seq: 1, args: [{ $bigint: "5" }, { $bytes: "0a0b" }, { $undefined: true }, { $literal: {} }] };
    const wire = encodeValue(event);
    expect(JSON.stringify(wire)).toContain('{"$literal":{"$bigint":"5"}}');
    expect(roundTrip(event)).toEqual(event);
    // Objects with more than one key are never tags.
    expect(roundTrip({ $bigint: "5", $bytes: "0a" })).toEqual({ $bigint: "5", $bytes: "0a" });
  });

  it("refuses functions, symbols, cycles and Maps instead of sending something wrong", () => {
    expect(() => encodeValue({ f: () => 1 })).toThrow(/value\.f: a function/);
    expect(() => encodeValue([Symbol("s")])).toThrow(TypeError);
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => encodeValue(a)).toThrow(/nested too deeply/);
    expect(() => encodeValue(new Map())).toThrow(TypeError);
  });

  it("never lets a message set a prototype", () => {
    const back = decodeValue(JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    const lit = decodeValue(JSON.parse('{"$literal": {"__proto__": {"polluted": true}}}')) as object;
    expect(Object.getPrototypeOf(lit)).toBe(Object.prototype);
  });

  it("encodes errors by their toJSON (a VerbsError keeps its fields) and dates as ISO text", () => {
    const w = encodeValue({ at: new Date(0), e: { toJSON: () => ({ name: "VerbsError", errno: 22 }) } }) as {
      [k: string]: WireValue;
    };
    expect(w).toEqual({ at: "1970-01-01T00:00:00.000Z", e: { name: "VerbsError", errno: 22 } });
  });
});
