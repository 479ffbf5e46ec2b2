/**
 * Maps a position in the JavaScript the learner's program compiled to back to main.ts, with
 * the source map TypeScript emits beside it (version 3, one source). Only what lookups need:
 * the `mappings` string decoded into segments per generated line.
 */

/** A 1-based line and column. */
export interface Position {
  line: number;
  column: number;
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT = new Map([...B64].map((ch, i) => [ch, i]));

/** One decoded segment: generated column, original line and column (all 0-based). */
type Segment = [genColumn: number, line: number, column: number];

/** A decoded source map: generated line (0-based) → its segments, by generated column. */
export class SourceMap {
  private readonly lines: Segment[][];

  /** `map` is the source map's JSON text; throws a clear error if it is not one. */
  constructor(map: string) {
    let json: { version?: number; mappings?: unknown };
    try {
      json = JSON.parse(map) as typeof json;
    } catch {
      throw new Error("the compiler's source map is not JSON");
    }
    if (json.version !== 3 || typeof json.mappings !== "string")
      throw new Error("the compiler's source map is not a version 3 map with mappings");
    this.lines = decodeMappings(json.mappings);
  }

  /**
   * The main.ts position of a 1-based generated position: the segment at or before the column
   * on that line (the one that starts the expression there), else the line's first segment.
   */
  original(gen: Position): Position | undefined {
    const segs = this.lines[gen.line - 1];
    if (!segs?.length) return undefined;
    const col = gen.column - 1;
    let best = segs[0]!;
    for (const s of segs) {
      if (s[0] > col) break;
      best = s;
    }
    // Within a segment TypeScript copied the text as written, so the offset carries over.
    return { line: best[1] + 1, column: best[2] + 1 + Math.max(0, col - best[0]) };
  }
}

function decodeMappings(mappings: string): Segment[][] {
  const out: Segment[][] = [];
  let srcLine = 0;
  let srcCol = 0;
  for (const line of mappings.split(";")) {
    const segs: Segment[] = [];
    let genCol = 0;
    for (const seg of line.split(",")) {
      if (!seg) continue;
      const v = decodeVlq(seg);
      genCol += v[0]!;
      // [genCol, source, line, column, name?]: one source only (main.ts), names unused.
      if (v.length >= 4) {
        srcLine += v[2]!;
        srcCol += v[3]!;
        segs.push([genCol, srcLine, srcCol]);
      }
    }
    segs.sort((a, b) => a[0] - b[0]);
    out.push(segs);
  }
  return out;
}

function decodeVlq(seg: string): number[] {
  const out: number[] = [];
  let value = 0;
  let shift = 0;
  for (const ch of seg) {
    const d = DIGIT.get(ch);
    if (d === undefined) throw new Error(`the compiler's source map has a bad character "${ch}"`);
    value += (d & 31) << shift;
    if (d & 32) shift += 5;
    else {
      out.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return out;
}
