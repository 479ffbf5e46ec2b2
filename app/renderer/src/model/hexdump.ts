/** MR contents as rows of `perRow` bytes (16, or 8 where the pane is narrow): offset, hex and printable ASCII. */
export interface HexRow {
  offset: number;
  bytes: number[];
  ascii: string;
}

export function hexRows(bytes: Uint8Array, max = 256, perRow = 16): HexRow[] {
  const rows: HexRow[] = [];
  const n = Math.min(bytes.length, max);
  for (let off = 0; off < n; off += perRow) {
    const slice = Array.from(bytes.subarray(off, Math.min(off + perRow, n)));
    const ascii = slice.map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : "·")).join("");
    rows.push({ offset: off, bytes: slice, ascii });
  }
  return rows;
}

export const byteHex = (b: number): string => b.toString(16).padStart(2, "0");

/** Offsets whose byte differs between two reads of the same MR. */
export function changedOffsets(before: Uint8Array | undefined, after: Uint8Array): number[] {
  if (!before) return [];
  const out: number[] = [];
  for (let i = 0; i < after.length; i++) if (before[i] !== after[i]) out.push(i);
  return out;
}
