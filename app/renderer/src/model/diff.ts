/** Field-by-field comparison of two `ibv_query_qp` snapshots, for highlighting what a verb changed. */

/** Flattens nested plain objects to dotted paths (`attr.ah_attr.grh.dgid`). */
export function flatten(value: unknown, prefix = "", out: Record<string, unknown> = {}): Record<string, unknown> {
  if (value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Uint8Array)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix) {
    out[prefix] = value;
  }
  return out;
}

/** Paths whose values differ between `before` and `after` (a path present on one side only counts). */
export function changedFields(before: unknown, after: unknown): string[] {
  if (before === undefined || after === undefined) return [];
  const a = flatten(before);
  const b = flatten(after);
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => !Object.is(a[k], b[k]) && String(a[k]) !== String(b[k])).sort();
}
