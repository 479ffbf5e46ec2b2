/**
 * The one call surface every verb crosses, `call(target, method, args)` where objects are
 * handles, and the one codec (`encodeValue`/`decodeValue`) that turns its values into JSON
 * for the bridge and the transcript alike. Arguments and results are plain data:
 * primitives, bigint, Uint8Array, arrays, plain objects, and `Ref`s for contract objects.
 * Browser-safe: no Node imports.
 */
import { argError } from "../../verbs/errors.js";

/** The kinds of object a handle can name (`verbs` is the root, handle 0). */
export type HandleType =
  "verbs" | "context" | "pd" | "mr" | "cq" | "channel" | "qp" | "ah" | "cm" | "cmChannel" | "cmId" | "cmEvent";

/** Handle 0: the backend itself (getDeviceList, openDevice, sleep, log, now). */
export const ROOT_HANDLE = 0;

/** Handle −1: the backend's connection manager (`verbs.cm`, rdma_cm), when it has one. */
export const CM_HANDLE = -1;

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

export interface WireNum {
  $num: "NaN" | "Infinity" | "-Infinity";
}
export interface WireUndefined {
  $undefined: true;
}

/** What `encodeValue` produces: JSON, with the tagged objects above for what JSON loses. */
export type WireValue =
  | null
  | boolean
  | number
  | string
  | WireValue[]
  | Ref
  | WireBigint
  | WireBytes
  | WireNum
  | WireUndefined
  | { [key: string]: WireValue };

/**
 * Anything that performs handle-based calls: the session in-process, or a bridge client.
 * `target` is a handle (ROOT_HANDLE for the backend); args and the result are plain data
 * with `Ref`s in place of objects (see the file comment).
 */
export interface CallSurface {
  call(target: number, method: string, args: unknown[]): Promise<unknown>;
}

/**
 * What a call on an rdma_cm id answers. librdmacm fills in an id's fields in calls that return
 * nothing (rdma_bind_addr to a device's address sets id->verbs), so the id comes back as it is
 * now, beside the result, and the facade's object for it follows.
 */
export interface CmIdReply {
  readonly $cmId: Ref;
  readonly result: unknown;
}

export function isCmIdReply(v: unknown): v is CmIdReply {
  return typeof v === "object" && v !== null && "$cmId" in v && isRef((v as CmIdReply).$cmId);
}

/** A `Ref` (handles are numbers: the session numbers objects in creation order). */
export function isRef(v: unknown): v is Ref {
  return (
    typeof v === "object" && v !== null && typeof (v as Ref).$handle === "number" && typeof (v as Ref).type === "string"
  );
}

/**
 * Deep-copies plain data, replacing what `swap` recognises (objects → refs on the way out,
 * refs → objects on the way in). bigint and bytes are kept as they are.
 */
export function mapRefs(v: unknown, swap: (o: object) => unknown | undefined, depth = 0): unknown {
  if (v === null || typeof v !== "object") return v;
  if (depth > MAX_DEPTH) throw argError(TypeError, undefined, { kind: "too-deep", max: MAX_DEPTH });
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

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** Lower-case hex, two digits a byte (a table lookup: MR reads of a megabyte cross the bridge this way). */
function toHex(bytes: Uint8Array): string {
  const parts: string[] = new Array<string>(bytes.length);
  for (let i = 0; i < bytes.length; i++) parts[i] = HEX[bytes[i]!]!;
  return parts.join("");
}

function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || /[^0-9a-fA-F]/.test(hex))
    throw argError(TypeError, undefined, { kind: "not-hex", text: hex.slice(0, 20) });
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/**
 * The one wire codec: how values become JSON wherever they leave a process or reach a
 * disk. The bridge (both transports, and the backend process's pipe) and the transcript
 * use it alike, so a value reads the same in a JSONL file as in a bridge message:
 *
 *   bigint                → { $bigint: "18446744073709551615" }  (decimal)
 *   Uint8Array, views, ArrayBuffer → { $bytes: "0a0b" }        (lower-case hex, two digits a byte)
 *                           or { $bytes, $length } past `maxBytes` (the transcript keeps EVENT_BYTES_MAX)
 *   NaN, ±Infinity        → { $num: "NaN" }                    (a learner's NaN reaches the verb and is refused there)
 *   undefined (not a field) → { $undefined: true }             (`cq.poll(undefined)` keeps its arity)
 *   a plain object that looks like one of these → { $literal: {…} }  (a transcript event inside a bridge message stays as it is)
 *
 * Contract objects never cross: `toRef` turns them into `Ref`s ({ $handle, type, props }),
 * which are plain JSON and decode as themselves unless `fromRef` is given.
 */
export function encodeValue(v: unknown, toRef?: (o: object) => Ref | undefined, maxBytes = Infinity): WireValue {
  return enc(v, toRef, maxBytes, 0, "value");
}

/** Nesting deeper than this is refused (a cycle, or a hostile value). */
export const MAX_DEPTH = 64;

const TAGS = new Set(["$bigint", "$bytes", "$num", "$undefined", "$literal"]);
const isTagShaped = (o: object) => {
  const keys = Object.keys(o);
  if (keys.length === 2) return keys.includes("$bytes") && keys.includes("$length");
  return keys.length === 1 && TAGS.has(keys[0]!);
};

type ToRef = ((o: object) => Ref | undefined) | undefined;

function enc(v: unknown, toRef: ToRef, maxBytes: number, depth: number, path: string): WireValue {
  if (depth > MAX_DEPTH) throw argError(TypeError, undefined, { kind: "too-deep", max: MAX_DEPTH, path });
  switch (typeof v) {
    case "string":
    case "boolean":
      return v;
    case "number":
      return Number.isFinite(v) ? v : { $num: String(v) };
    case "bigint":
      return { $bigint: v.toString() };
    case "undefined":
      return { $undefined: true };
    case "function":
    case "symbol":
      throw argError(TypeError, undefined, { kind: "cannot-encode", path, what: typeof v });
  }
  if (v === null) return null;
  const ref = toRef?.(v as object);
  if (ref) return ref;
  if (v instanceof ArrayBuffer) return bytesValue(new Uint8Array(v), maxBytes);
  if (ArrayBuffer.isView(v)) return bytesValue(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), maxBytes);
  if (Array.isArray(v)) return v.map((item, i) => enc(item, toRef, maxBytes, depth + 1, `${path}[${i}]`));
  if (v instanceof Map || v instanceof Set || v instanceof Promise || v instanceof WeakMap)
    throw argError(TypeError, undefined, { kind: "cannot-encode", path, what: v.constructor.name });
  if (v instanceof Date) return v.toISOString();
  const toJSON = (v as { toJSON?: () => unknown }).toJSON;
  if (typeof toJSON === "function") return enc(toJSON.call(v), toRef, maxBytes, depth + 1, path);
  const out: { [key: string]: WireValue } = {};
  for (const [key, item] of Object.entries(v as Record<string, unknown>)) {
    if (item === undefined) continue; // as JSON: an absent field and an undefined one mean the same
    out[key] = enc(item, toRef, maxBytes, depth + 1, `${path}.${key}`);
  }
  return isTagShaped(out) ? { $literal: out } : out;
}

function bytesValue(bytes: Uint8Array, maxBytes: number): WireBytes {
  if (bytes.length <= maxBytes) return { $bytes: toHex(bytes) };
  return { $bytes: toHex(bytes.subarray(0, maxBytes)), $length: bytes.length };
}

/** The length of recorded bytes (whole, or `$length` when only the first were kept). */
export function wireBytesLength(w: WireBytes): number {
  return w.$length ?? w.$bytes.length / 2;
}

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

/** Decodes what encodeValue produced; `fromRef` turns a ref into the object it names (refs stay refs without it). */
export function decodeValue(w: unknown, fromRef?: (r: Ref) => unknown): unknown {
  return dec(w, fromRef, 0);
}

function dec(w: unknown, fromRef: ((r: Ref) => unknown) | undefined, depth: number): unknown {
  // The other side encoded it (and refused anything deeper): past MAX_DEPTH here is a bug, not the learner's.
  if (depth > MAX_DEPTH) throw new TypeError("encoded value nested too deeply");
  if (w === null || typeof w !== "object") return w;
  if (Array.isArray(w)) return w.map((x) => dec(x, fromRef, depth + 1));
  if (fromRef && isRef(w)) return fromRef(w);
  const o = w as Record<string, unknown>;
  if (isTagShaped(o)) {
    if (typeof o.$bigint === "string" && /^-?\d+$/.test(o.$bigint)) return BigInt(o.$bigint);
    if (typeof o.$bytes === "string" && o.$length === undefined) return fromHex(o.$bytes);
    if (
      typeof o.$bytes === "string" &&
      Number.isSafeInteger(o.$length) &&
      (o.$length as number) >= o.$bytes.length / 2
    ) {
      // Only the first bytes were recorded: the rest read as zeros.
      const out = new Uint8Array(o.$length as number);
      out.set(fromHex(o.$bytes));
      return out;
    }
    if (o.$num === "NaN") return NaN;
    if (o.$num === "Infinity") return Infinity;
    if (o.$num === "-Infinity") return -Infinity;
    if (o.$undefined === true) return undefined;
    if (typeof o.$literal === "object" && o.$literal !== null && !Array.isArray(o.$literal))
      return decodeFields(o.$literal as Record<string, unknown>, fromRef, depth);
  }
  return decodeFields(o, fromRef, depth);
}

function decodeFields(o: Record<string, unknown>, fromRef: ((r: Ref) => unknown) | undefined, depth: number) {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(o)) {
    if (key === "__proto__") continue; // never let a message set a prototype
    out[key] = dec(o[key], fromRef, depth + 1);
  }
  return out;
}
