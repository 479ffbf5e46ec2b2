/**
 * Builds the learner's `Verbs` facade over any CallSurface: the session in-process, or a
 * bridge client in the renderer's Web Worker. Browser-safe: no Node imports.
 *
 * Every facade object is a thin proxy for a handle; one object per handle, so identity
 * holds (`qp.send_cq === cq`). Read-only fields come from the ref's `props`.
 */
import type { Sge } from "../../verbs/types.js";
import { argError } from "../../verbs/errors.js";
import { seen } from "../../verbs/verb-failure.js";
import { methodsOf, VERBS } from "./verb-table.js";
import type { Verbs } from "./verbs-api.js";
import {
  CM_HANDLE,
  decodeValue,
  isCmIdReply,
  isRef,
  mapRefs,
  ROOT_HANDLE,
  type CallSurface,
  type HandleType,
  type Ref,
} from "./wire.js";

const HANDLE = Symbol("verbslab.handle");

/** The handle behind a facade object, or undefined for anything else. */
export function refOf(o: object): Ref | undefined {
  const r = (o as { [HANDLE]?: Ref })[HANDLE];
  return r ? { $handle: r.$handle, type: r.type } : undefined;
}

/** Makes `verbs.log` arguments cloneable: errors keep their fields, functions become their names. */
function loggable(v: unknown): unknown {
  if (v instanceof Error) return { name: v.name, message: v.message, ...(v as object) };
  if (typeof v === "function") return `[function ${v.name}]`;
  if (typeof v === "symbol") return v.toString();
  return v;
}

/**
 * `mr.sge(offset, length)`: the SGE for bytes [offset, offset + length) of the MR, checked as
 * the simulator's Mr.sge checks it (TypeError for a non-integer, RangeError outside the MR).
 */
export function mrSge(mr: { addr: number; length: number; lkey: number }, offset: unknown, length?: unknown): Sge {
  const int = (name: string, v: unknown) => {
    if (typeof v !== "number" || !Number.isSafeInteger(v))
      throw argError(TypeError, "sge", { kind: "arg-type", field: name, expected: "integer", got: seen(v) });
    return v;
  };
  const off = int("offset", offset);
  const len = length === undefined || length === null ? mr.length - off : int("length", length);
  if (off < 0 || off > mr.length)
    throw argError(RangeError, "sge", { kind: "mr-offset", offset: off, mrLength: mr.length });
  if (len < 0 || off + len > mr.length)
    throw argError(RangeError, "sge", {
      kind: "mr-past-end",
      op: "sge",
      offset: off,
      length: len,
      mrLength: mr.length,
    });
  return { addr: mr.addr + off, length: len, lkey: mr.lkey };
}

export function createVerbsFacade(surface: CallSurface, kind: "sim" | "native"): Verbs {
  const objects = new Map<number, object>();

  // Facade objects become refs on the way out and refs become facade objects on the way in.
  const toRefs = (v: unknown): unknown => mapRefs(v, (o) => refOf(o));
  const fromRefs = (v: unknown): unknown => mapRefs(v, (o) => (isRef(o) ? objectFor(o) : undefined));

  // The rdma_cm objects' props hold bytes and structs as wire values: decoded, refs kept.
  const CM_TYPES: ReadonlySet<string> = new Set(["cmId", "cmEvent"]);
  const propValue = (type: string, v: unknown): unknown =>
    fromRefs(CM_TYPES.has(type) ? decodeValue(v as never, (r: Ref) => r) : v);

  function objectFor(ref: Ref): object {
    const h = ref.$handle;
    const known = objects.get(h) as Record<string, unknown> | undefined;
    if (known) {
      // An id's verbs, qp, port_num and route change: every ref of it carries them as they are now.
      if (ref.type === "cmId" && ref.props)
        for (const [k, v] of Object.entries(ref.props)) known[k] = propValue(ref.type, v);
      return known;
    }
    const type = ref.type;
    if (!Object.hasOwn(VERBS, type))
      throw argError(TypeError, undefined, { kind: "no-object-type", type: String(type) });
    const o: Record<string | symbol, unknown> = { [HANDLE]: { $handle: h, type } };
    objects.set(h, o);
    for (const [k, v] of Object.entries(ref.props ?? {})) o[k] = propValue(type, v);
    for (const m of methodsOf(type)) {
      o[m] = async (...args: unknown[]) => {
        const callArgs = m === "log" ? args.map((a) => toRefs(loggable(a))) : args.map(toRefs);
        const reply = await surface.call(h, m, callArgs);
        if (!isCmIdReply(reply)) return fromRefs(reply);
        // The result first: objects it creates (id.createQp's QP) come with their props, which
        // the id's own fields (a bare ref to that QP) would not give them.
        const out = fromRefs(reply.result);
        objectFor(reply.$cmId); // the id's fields as this call left them
        return out;
      };
    }
    if (type === "mr") {
      o.sge = function (this: { addr: number; length: number; lkey: number }, offset = 0, length?: number): Sge {
        return mrSge(this, offset, length);
      };
      const write = o.write as (offset: number, data: unknown) => Promise<unknown>;
      o.write = (offset: number, data: unknown) =>
        write(offset, typeof data === "string" ? new TextEncoder().encode(data) : data);
    }
    return o;
  }

  const root = objectFor({ $handle: ROOT_HANDLE, type: "verbs" }) as Record<string, unknown>;
  root.kind = kind;
  root.lab = { setLink: root.setLink, clearLink: root.clearLink, getLink: root.getLink };
  // rdma_cm: its calls fail (no such handle) on a backend without a connection manager.
  root.cm = objectFor({ $handle: CM_HANDLE, type: "cm" });
  return root as unknown as Verbs;
}
