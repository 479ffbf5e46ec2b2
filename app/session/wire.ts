/**
 * The one call surface every verb crosses: `call(target, method, args)` where objects are
 * handles. Arguments and results are plain data that structured clone and the bridge's
 * wire encoding carry: primitives, bigint, Uint8Array, arrays, plain objects, and `Ref`s
 * for contract objects. The transcript stores the same values as JSON (`encodeValue`:
 * bigints `{ $bigint }`, bytes `{ $bytes }` in hex). Browser-safe: no Node imports.
 */

/** The kinds of object a handle can name (`verbs` is the root, handle 0). */
export type HandleType = "verbs" | "context" | "pd" | "mr" | "cq" | "channel" | "qp" | "ah";

/** Handle 0: the backend itself (getDeviceList, openDevice, sleep, log, now). */
export const ROOT_HANDLE = 0;

/**
 * A contract object on the wire. `props` carries its read-only fields when the object is
 * created (qp_num, lkey, cqe, …) so the facade can answer them without a round trip.
 */
export interface Ref {
  $handle: number;
  type: HandleType;
  props?: { [key: string]: WireValue };
}

export interface WireBigint {
  $bigint: string;
}
export interface WireBytes {
  /** Lower-case hex, two digits a byte. */
  $bytes: string;
  /**
   * Set when only the first bytes were kept (`encodeValue`'s `maxBytes`): the whole length.
   * The bytes past `$bytes` are not recorded; decoding gives zeros there.
   */
  $length?: number;
}

/**
 * The most bytes of one value a transcript event holds (MR contents, `mr.read` results,
 * `mr.write` data): events go to the UI as one message each, so a 50 MiB buffer must not
 * travel in one. Longer values keep their first EVENT_BYTES_MAX bytes and their `$length`.
 */
export const EVENT_BYTES_MAX = 64 * 1024;

export type WireValue =
  null | boolean | number | string | WireValue[] | Ref | WireBigint | WireBytes | { [key: string]: WireValue };

/**
 * Anything that performs handle-based calls: the session in-process, or a bridge client.
 * `target` is a handle (ROOT_HANDLE for the backend); args and the result are plain data
 * with `Ref`s in place of objects (see the file comment).
 */
export interface CallSurface {
  call(target: number, method: string, args: unknown[]): Promise<unknown>;
}

export function isRef(v: unknown): v is Ref {
  return (
    typeof v === "object" &&
    v !== null &&
    (typeof (v as Ref).$handle === "number" || typeof (v as { $handle?: unknown }).$handle === "string") &&
    typeof (v as Ref).type === "string"
  );
}

/**
 * The handle number of a ref or a target. Tolerates string ids ("qp3", "3") and null (the
 * root) so a bridge that names handles by string can pass them through unchanged.
 */
export function handleNumber(h: number | string | null | undefined): number {
  if (h === null || h === undefined) return ROOT_HANDLE;
  if (typeof h === "number") return h;
  const m = /(\d+)$/.exec(h);
  if (!m) throw new TypeError(`"${h}" is not an object handle`);
  return Number(m[1]);
}

/** A ref's type, tolerating the contract's interface names ("Qp", "CompChannel"). */
export function handleType(type: string): HandleType {
  const t = type.toLowerCase();
  if (t === "compchannel") return "channel";
  if (["verbs", "context", "pd", "mr", "cq", "channel", "qp", "ah"].includes(t)) return t as HandleType;
  throw new TypeError(`"${type}" is not an object type`);
}

/**
 * Deep-copies plain data, replacing what `swap` recognises (objects → refs on the way out,
 * refs → objects on the way in). bigint and bytes are kept as they are.
 */
export function mapRefs(v: unknown, swap: (o: object) => unknown | undefined, depth = 0): unknown {
  if (v === null || typeof v !== "object") return v;
  if (depth > MAX_DEPTH)
    throw new TypeError(`a value nested more than ${MAX_DEPTH} deep (or a cycle) cannot be passed`);
  const s = swap(v);
  if (s !== undefined) return s;
  if (v instanceof Uint8Array) return v;
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (Array.isArray(v)) return v.map((x) => mapRefs(x, swap, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x === "function" || typeof x === "symbol") continue;
    out[k] = mapRefs(x, swap, depth + 1);
  }
  return out;
}

export function toHex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}

export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || /[^0-9a-fA-F]/.test(hex))
    throw new TypeError(`not a hex byte string: "${hex.slice(0, 20)}"`);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/**
 * Encodes a value for the wire. `toRef` turns contract or facade objects into refs (and
 * returns undefined for anything else). Functions and symbols are dropped; `undefined`
 * fields are left out (as JSON does), `undefined` array slots become null.
 */
export function encodeValue(
  v: unknown,
  toRef: (o: object) => Ref | undefined,
  maxBytes = Infinity,
  depth = 0,
): WireValue {
  if (v === null || v === undefined) return null;
  // Deeper than any verb's argument: recorded as a note, so a hostile value cannot overflow the stack.
  if (depth > MAX_DEPTH) return `[nested more than ${MAX_DEPTH} deep]`;
  switch (typeof v) {
    case "boolean":
    case "string":
      return v;
    case "number":
      return v;
    case "bigint":
      return { $bigint: v.toString() };
    case "object": {
      const ref = isRef(v) ? { $handle: handleNumber(v.$handle), type: handleType(v.type) } : toRef(v);
      if (ref) return ref;
      if (v instanceof Uint8Array) return bytesValue(v, maxBytes);
      if (ArrayBuffer.isView(v)) return bytesValue(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), maxBytes);
      if (v instanceof ArrayBuffer) return bytesValue(new Uint8Array(v), maxBytes);
      if (Array.isArray(v)) return v.map((x) => encodeValue(x, toRef, maxBytes, depth + 1));
      const out: { [key: string]: WireValue } = {};
      for (const [k, x] of Object.entries(v)) {
        if (x === undefined || typeof x === "function" || typeof x === "symbol") continue;
        out[k] = encodeValue(x, toRef, maxBytes, depth + 1);
      }
      return out;
    }
    default:
      return null;
  }
}

/** Nesting deeper than this is refused (a cycle, or a hostile value): the bridge's own limit. */
export const MAX_DEPTH = 64;

/** How deep `v` nests (0 for a primitive), counted without recursion, stopping past `limit`. */
export function nestingDepth(v: unknown, limit = MAX_DEPTH): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length) {
    const [x, d] = stack.pop()!;
    if (x === null || typeof x !== "object") continue;
    if (d + 1 > deepest) deepest = d + 1;
    if (deepest > limit) return deepest;
    for (const y of Object.values(x)) stack.push([y, d + 1]);
  }
  return deepest;
}

function bytesValue(bytes: Uint8Array, maxBytes: number): WireBytes {
  if (bytes.length <= maxBytes) return { $bytes: toHex(bytes) };
  return { $bytes: toHex(bytes.subarray(0, maxBytes)), $length: bytes.length };
}

/** The length of recorded bytes (whole, or `$length` when only the first were kept). */
export function wireBytesLength(w: WireBytes): number {
  return w.$length ?? w.$bytes.length / 2;
}

/** Decodes a wire value; `fromRef` turns a ref into the object it names. */
export function decodeValue(w: WireValue, fromRef: (r: Ref) => unknown): unknown {
  if (w === null || typeof w !== "object") return w;
  if (Array.isArray(w)) return w.map((x) => decodeValue(x, fromRef));
  if (isRef(w)) return fromRef(w);
  if (typeof (w as WireBigint).$bigint === "string" && Object.keys(w).length === 1)
    return BigInt((w as WireBigint).$bigint);
  if (typeof (w as WireBytes).$bytes === "string" && Object.keys(w).length === 1)
    return fromHex((w as WireBytes).$bytes);
  const length = (w as WireBytes).$length;
  if (
    typeof (w as WireBytes).$bytes === "string" &&
    Object.keys(w).length === 2 &&
    Number.isSafeInteger(length) &&
    length! >= (w as WireBytes).$bytes.length / 2
  ) {
    const out = new Uint8Array(length!);
    out.set(fromHex((w as WireBytes).$bytes));
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(w)) out[k] = decodeValue(x as WireValue, fromRef);
  return out;
}
