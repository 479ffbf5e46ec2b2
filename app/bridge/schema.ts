/**
 * A tiny runtime schema helper for the bridge contract: each schema checks an unknown value
 * and returns it typed, or throws a BridgeValidationError naming the path at fault
 * (`params.args[1].kind`). Only what the contract needs; no dependencies, runs in the
 * renderer, the host and the backend process alike.
 */

export class BridgeValidationError extends Error {
  /** Where in the message the value was wrong, e.g. `params.format`. */
  readonly path: string;
  constructor(path: string, expected: string, got: unknown) {
    super(`${path}: expected ${expected}, got ${describe(got)}`);
    this.name = "BridgeValidationError";
    this.path = path;
  }
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "string") return `string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v)}`;
  if (typeof v === "number") return `number ${v}`;
  return typeof v;
}

export interface Schema<T> {
  /** Returns `value` typed as T, or throws BridgeValidationError naming `path`. */
  parse(value: unknown, path?: string): T;
  /** True when absent is allowed (object keys). */
  readonly optional?: boolean;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

function schema<T>(parse: (value: unknown, path: string) => T): Schema<T> {
  return { parse: (value, path = "value") => parse(value, path) };
}

export const s = {
  string(opts: { max?: number; min?: number } = {}): Schema<string> {
    const max = opts.max ?? 1_000_000;
    return schema((v, p) => {
      if (typeof v !== "string") throw new BridgeValidationError(p, "string", v);
      if (v.length > max) throw new BridgeValidationError(p, `string of at most ${max} characters`, v);
      if (opts.min !== undefined && v.length < opts.min)
        throw new BridgeValidationError(p, `string of at least ${opts.min} characters`, v);
      return v;
    });
  },
  number(opts: { integer?: boolean; min?: number; max?: number } = {}): Schema<number> {
    return schema((v, p) => {
      const what = opts.integer ? "integer" : "finite number";
      if (typeof v !== "number" || !Number.isFinite(v)) throw new BridgeValidationError(p, what, v);
      if (opts.integer && !Number.isInteger(v)) throw new BridgeValidationError(p, what, v);
      if (opts.min !== undefined && v < opts.min) throw new BridgeValidationError(p, `${what} ≥ ${opts.min}`, v);
      if (opts.max !== undefined && v > opts.max) throw new BridgeValidationError(p, `${what} ≤ ${opts.max}`, v);
      return v;
    });
  },
  boolean(): Schema<boolean> {
    return schema((v, p) => {
      if (typeof v !== "boolean") throw new BridgeValidationError(p, "boolean", v);
      return v;
    });
  },
  literal<const L extends readonly (string | number | boolean | null)[]>(...values: L): Schema<L[number]> {
    return schema((v, p) => {
      if (!values.includes(v as L[number]))
        throw new BridgeValidationError(p, `one of ${values.map((x) => JSON.stringify(x)).join(", ")}`, v);
      return v as L[number];
    });
  },
  /** Anything at all (still must have come through the wire decoding). Use sparingly. */
  unknown(): Schema<unknown> {
    return schema((v) => v);
  },
  nullable<T>(inner: Schema<T>): Schema<T | null> {
    return schema((v, p) => (v === null ? null : inner.parse(v, p)));
  },
  optional<T>(inner: Schema<T>): Schema<T | undefined> & { readonly optional: true } {
    return { parse: (v, p = "value") => (v === undefined ? undefined : inner.parse(v, p)), optional: true };
  },
  array<T>(inner: Schema<T>, opts: { max?: number } = {}): Schema<T[]> {
    const max = opts.max ?? 100_000;
    return schema((v, p) => {
      if (!Array.isArray(v)) throw new BridgeValidationError(p, "array", v);
      if (v.length > max) throw new BridgeValidationError(p, `array of at most ${max} items`, v);
      return v.map((item, i) => inner.parse(item, `${p}[${i}]`));
    });
  },
  /** A Uint8Array (bytes survive the wire encoding). */
  bytes(opts: { max?: number } = {}): Schema<Uint8Array> {
    const max = opts.max ?? 1_000_000;
    return schema((v, p) => {
      if (!(v instanceof Uint8Array)) throw new BridgeValidationError(p, "bytes", v);
      if (v.length > max) throw new BridgeValidationError(p, `at most ${max} bytes`, v);
      return v;
    });
  },
  /** A plain object used as a map: any keys, every value checked. */
  record<T>(inner: Schema<T>): Schema<Record<string, T>> {
    return schema((v, p) => {
      if (typeof v !== "object" || v === null || Array.isArray(v)) throw new BridgeValidationError(p, "object", v);
      const out: Record<string, T> = {};
      // defineProperty: a "__proto__" key stays a key.
      for (const [k, x] of Object.entries(v))
        Object.defineProperty(out, k, { value: inner.parse(x, `${p}.${k}`), enumerable: true, writable: true });
      return out;
    });
  },
  /**
   * A plain object with exactly these keys (unknown keys are refused, so a typo in a
   * request is an error rather than silently ignored).
   */
  object<Shape extends Record<string, Schema<unknown>>>(shape: Shape): Schema<ObjectOf<Shape>> {
    return schema((v, p) => {
      if (typeof v !== "object" || v === null || Array.isArray(v)) throw new BridgeValidationError(p, "object", v);
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) throw new BridgeValidationError(p, "plain object", v);
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v)) {
        if (!Object.hasOwn(shape, key)) throw new BridgeValidationError(`${p}.${key}`, "no such field", undefined);
      }
      for (const [key, field] of Object.entries(shape)) {
        const value = (v as Record<string, unknown>)[key];
        if (value === undefined && !field.optional) throw new BridgeValidationError(`${p}.${key}`, "a value", value);
        const parsed = field.parse(value, `${p}.${key}`);
        if (parsed !== undefined) out[key] = parsed;
      }
      return out as ObjectOf<Shape>;
    });
  },
};

type OptionalKeys<Shape> = { [K in keyof Shape]: Shape[K] extends { optional: true } ? K : never }[keyof Shape];
type Simplify<T> = { [K in keyof T]: T[K] } & {};
export type ObjectOf<Shape extends Record<string, Schema<unknown>>> = Simplify<
  { [K in Exclude<keyof Shape, OptionalKeys<Shape>>]: Infer<Shape[K]> } & {
    [K in OptionalKeys<Shape>]?: Exclude<Infer<Shape[K]>, undefined>;
  }
>;
