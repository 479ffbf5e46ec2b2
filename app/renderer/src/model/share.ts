/**
 * Structural sharing between two builds of the view: whatever is deep-equal to the previous
 * build is returned as the previous object, so memoised panes see the same props and skip
 * rendering when a step did not change what they draw.
 */
export function share<T>(prev: unknown, next: T): T {
  if (Object.is(prev, next)) return prev as T;
  if (typeof prev !== "object" || typeof next !== "object" || prev === null || next === null) return next;
  if (Array.isArray(next)) {
    if (!Array.isArray(prev)) return next;
    let same = prev.length === next.length;
    const out = next.map((v, i) => {
      const s = share(prev[i], v);
      if (s !== prev[i]) same = false;
      return s;
    });
    return (same ? prev : out) as T;
  }
  if (ArrayBuffer.isView(next)) {
    if (!ArrayBuffer.isView(prev) || prev.constructor !== next.constructor) return next;
    const a = new Uint8Array(prev.buffer, prev.byteOffset, prev.byteLength);
    const b = new Uint8Array(next.buffer, next.byteOffset, next.byteLength);
    if (a.length !== b.length) return next;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return next;
    return prev as T;
  }
  const proto = Object.getPrototypeOf(next);
  if ((proto !== Object.prototype && proto !== null) || Object.getPrototypeOf(prev) !== proto) return next;
  const p = prev as Record<string, unknown>;
  const n = next as Record<string, unknown>;
  const keys = Object.keys(n);
  let same = keys.length === Object.keys(p).length;
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const s = share(p[k], n[k]);
    if (s !== p[k] || !(k in p)) same = false;
    out[k] = s;
  }
  return (same ? prev : out) as T;
}
