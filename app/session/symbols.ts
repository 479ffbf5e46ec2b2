/**
 * What a transcript knows about its objects, and the values in its calls that name them.
 * Keys, addresses, QPNs and GIDs differ between runs (rxe draws key bytes at random, a C
 * program's buffers live elsewhere), so replays and the C export rewrite them: an `lkey`
 * equal to mr4's lkey becomes "mr4's lkey", a `dest_qp_num` equal to qp6's number becomes
 * "qp6's qp_num". Pure functions of the transcript; browser-safe.
 */
import type { Transcript } from "./transcript.js";
import type { HandleType, Ref, WireValue } from "./wire.js";

export interface ObjectInfo {
  handle: number;
  type: HandleType;
  /** Read-only fields at creation (qp_num, lkey, addr, length, cqe, device, gids, …). */
  props: { [key: string]: WireValue };
  /** The seq of the event that created it. */
  createdAt: number;
  /** A C-friendly name: ctx1, pd2, cq3, mr4, qp5, ah6, ch7. */
  name: string;
}

const PREFIX: Record<HandleType, string> = {
  verbs: "verbs",
  context: "ctx",
  pd: "pd",
  mr: "mr",
  cq: "cq",
  channel: "ch",
  qp: "qp",
  ah: "ah",
  cm: "cm",
  cmChannel: "cmch",
  cmId: "cmid",
  cmEvent: "cmev",
};

export function objectName(ref: { $handle: number; type: HandleType }): string {
  return `${PREFIX[ref.type]}${ref.$handle}`;
}

/** Every object the transcript's calls created, by handle. */
export function objectsOf(t: Pick<Transcript, "events">): Map<number, ObjectInfo> {
  const out = new Map<number, ObjectInfo>();
  for (const e of t.events) {
    if (e.kind !== "verb") continue;
    for (const r of e.created ?? []) addRef(out, r, e.seq);
  }
  return out;
}

function addRef(out: Map<number, ObjectInfo>, r: Ref, seq: number): void {
  out.set(r.$handle, { handle: r.$handle, type: r.type, props: r.props ?? {}, createdAt: seq, name: objectName(r) });
}

/** A value that names an object's key, address, number or GID. */
export type Sym =
  | { $sym: "qp_num"; handle: number }
  | { $sym: "lkey"; handle: number }
  | { $sym: "rkey"; handle: number }
  | { $sym: "addr"; handle: number; offset: number }
  | { $sym: "gid"; handle: number; index: number };

export function isSym(v: unknown): v is Sym {
  return typeof v === "object" && v !== null && typeof (v as Sym).$sym === "string";
}

const num = (v: WireValue | undefined) => (typeof v === "number" ? v : undefined);

/** The symbol for `value` in field `key`, if an object (created before `seq`) owns it. */
function symFor(key: string, value: WireValue, objects: Map<number, ObjectInfo>, seq: number): Sym | undefined {
  const known = [...objects.values()].filter((o) => o.createdAt < seq);
  if (typeof value === "number") {
    if (key === "dest_qp_num" || key === "remote_qpn") {
      const qp = known.find((o) => o.type === "qp" && o.props.qp_num === value);
      if (qp) return { $sym: "qp_num", handle: qp.handle };
    }
    if (key === "lkey") {
      const mr = known.find((o) => o.type === "mr" && o.props.lkey === value);
      if (mr) return { $sym: "lkey", handle: mr.handle };
    }
    if (key === "rkey" && value !== 0) {
      const mr = known.find((o) => o.type === "mr" && o.props.rkey === value);
      if (mr) return { $sym: "rkey", handle: mr.handle };
    }
    if (key === "addr" || key === "remote_addr") {
      const mr = known.find((o) => {
        const a = num(o.props.addr);
        const l = num(o.props.length);
        return o.type === "mr" && a !== undefined && l !== undefined && value >= a && value <= a + l;
      });
      if (mr) return { $sym: "addr", handle: mr.handle, offset: value - (mr.props.addr as number) };
    }
  }
  if (typeof value === "string" && key === "dgid") {
    for (const o of known) {
      if (o.type !== "context" || !Array.isArray(o.props.gids)) continue;
      const g = (o.props.gids as { gid: string; gid_index: number }[]).find((x) => sameGid(x.gid, value));
      if (g) return { $sym: "gid", handle: o.handle, index: g.gid_index };
    }
  }
  return undefined;
}

function sameGid(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** Replaces the values in `args` that name objects with symbols (for a call at `seq`). */
export function symbolize(v: WireValue, objects: Map<number, ObjectInfo>, seq: number, key = ""): WireValue | Sym {
  if (Array.isArray(v)) return v.map((x) => symbolize(x, objects, seq, key)) as WireValue;
  if (v !== null && typeof v === "object") {
    if ("$handle" in v || "$bigint" in v || "$bytes" in v) return v;
    const out: { [k: string]: WireValue } = {};
    for (const [k, x] of Object.entries(v)) out[k] = symbolize(x as WireValue, objects, seq, k) as WireValue;
    return out;
  }
  return symFor(key, v, objects, seq) ?? v;
}

/** Replaces symbols with the values the same objects have now (`props` of the new run's objects). */
export function resolveSymbols(
  v: unknown,
  propsOf: (handle: number) => { [key: string]: WireValue } | undefined,
): unknown {
  if (isSym(v)) {
    const p = propsOf(v.handle);
    if (!p) throw new Error(`the replay has no object ${v.handle} (it was not created the same way)`);
    switch (v.$sym) {
      case "qp_num":
        return p.qp_num;
      case "lkey":
        return p.lkey;
      case "rkey":
        return p.rkey;
      case "addr":
        return (p.addr as number) + v.offset;
      case "gid": {
        const g = (p.gids as { gid: string; gid_index: number }[] | undefined)?.find((x) => x.gid_index === v.index);
        if (!g) throw new Error(`the replay's context ${v.handle} has no GID at index ${v.index}`);
        return g.gid;
      }
    }
  }
  if (Array.isArray(v)) return v.map((x) => resolveSymbols(x, propsOf));
  if (v !== null && typeof v === "object") {
    if ("$handle" in v || "$bigint" in v || "$bytes" in v) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = resolveSymbols(x, propsOf);
    return out;
  }
  return v;
}
