/**
 * How values cross the bridge. Every message is encoded the same way on both transports
 * (Electron IPC and the WebSocket) so the two cannot drift: plain JSON plus a few tagged
 * objects for what JSON loses.
 *
 *   bigint              → { $$bigint: "18446744073709551615" }  (atomic operands, max_mr_size)
 *   Uint8Array etc.     → { $$bytes: "<base64>" }               (MR contents; decodes to Uint8Array)
 *   NaN, ±Infinity     → { $$num: "NaN" }                       (a learner's NaN reaches the verb and is refused there)
 *   undefined in a list → { $$undefined: true }                 (`cq.poll(undefined)` keeps its arity)
 *
 * The tags are `$$…` so they never collide with the transcript's own JSON encoding
 * (app/session/wire.ts: `{ $bigint }`, `{ $bytes: hex }`), which passes through untouched.
 * Objects that live in the backend process (Context, Pd, Mr, Cq, …) never cross: they are
 * named by the session's `Ref` ({ $handle: number, type, props }), plain JSON as well.
 */

/** A JSON value (what the encoder produces and the decoder accepts). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const MAX_DEPTH = 64;

/** Encodes a value for the bridge. Throws TypeError for what cannot cross (functions, symbols, cycles, Maps). */
export function toWire(value: unknown): Json {
  return enc(value, 0, "value");
}

function enc(v: unknown, depth: number, path: string): Json {
  if (depth > MAX_DEPTH) throw new TypeError(`${path}: nested too deeply (or a cycle) to send over the bridge`);
  switch (typeof v) {
    case "string":
    case "boolean":
      return v;
    case "number":
      return Number.isFinite(v) ? v : { $$num: String(v) };
    case "bigint":
      return { $$bigint: v.toString() };
    case "undefined":
      return { $$undefined: true };
    case "function":
    case "symbol":
      throw new TypeError(`${path}: a ${typeof v} cannot be sent over the bridge`);
  }
  if (v === null) return null;
  if (v instanceof ArrayBuffer) return { $$bytes: bytesToBase64(new Uint8Array(v)) };
  if (ArrayBuffer.isView(v)) return { $$bytes: bytesToBase64(new Uint8Array(v.buffer, v.byteOffset, v.byteLength)) };
  if (Array.isArray(v)) return v.map((item, i) => enc(item, depth + 1, `${path}[${i}]`));
  if (v instanceof Map || v instanceof Set || v instanceof Promise || v instanceof WeakMap)
    throw new TypeError(`${path}: a ${v.constructor.name} cannot be sent over the bridge`);
  const toJSON = (v as { toJSON?: () => unknown }).toJSON;
  if (typeof toJSON === "function" && !(v instanceof Date)) return enc(toJSON.call(v), depth + 1, path);
  if (v instanceof Date) return v.toISOString();
  const out: Record<string, Json> = {};
  for (const [key, item] of Object.entries(v as Record<string, unknown>)) {
    if (item === undefined) continue; // as JSON: an absent field and an undefined one mean the same
    out[key] = enc(item, depth + 1, `${path}.${key}`);
  }
  return out;
}

/** Decodes what toWire produced. Other objects (including the transcript's `$bigint`/`$bytes`) are left as they are. */
export function fromWire(value: unknown): unknown {
  return dec(value, 0);
}

function dec(v: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new TypeError("bridge message nested too deeply");
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map((item) => dec(item, depth + 1));
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 1) {
    if (typeof o.$$bigint === "string" && /^-?\d+$/.test(o.$$bigint)) return BigInt(o.$$bigint);
    if (typeof o.$$bytes === "string") return base64ToBytes(o.$$bytes);
    if (o.$$num === "NaN") return NaN;
    if (o.$$num === "Infinity") return Infinity;
    if (o.$$num === "-Infinity") return -Infinity;
    if (o.$$undefined === true) return undefined;
  }
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    if (key === "__proto__") continue; // never let a message set a prototype
    out[key] = dec(o[key], depth + 1);
  }
  return out;
}

export function bytesToBase64(bytes: Uint8Array): string {
  let s = "";
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) s += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(s);
}

export function base64ToBytes(b64: string): Uint8Array {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
