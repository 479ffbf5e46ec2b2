/**
 * The handle registry of a session: every object it handed out, by handle (0 is the backend
 * itself), numbered in creation order so a replay of the same calls gives the same handles.
 * It turns objects into `Ref`s on the way out (with their read-only `props` when created)
 * and refs back into objects on the way in. Browser-safe.
 */
import type { qpMachine } from "../../state-machines/qp.js";
import type { Context, Cq, Mr, Qp } from "../../verbs/backend.js";
import type { Actor } from "xstate";
import type { CmEvent, CmId } from "../../verbs/cm.js";
import { argError } from "../../verbs/errors.js";
import {
  CM_HANDLE,
  encodeValue,
  isRef,
  mapRefs,
  ROOT_HANDLE,
  type HandleType,
  type Ref,
  type WireValue,
} from "./wire.js";

/** One object a session handed out. */
export interface Entry {
  handle: number;
  type: HandleType;
  obj: unknown;
  /** The ref with its read-only props, as handed out at creation. */
  ref: Ref;
  destroyed: boolean;
  /** For QPs: the model (attached by the session) and the state last observed. */
  model?: Actor<typeof qpMachine>;
  observed?: number;
}

export type HandleRegistry = ReturnType<typeof createHandles>;

export function createHandles(backend: object) {
  const entries = new Map<number, Entry>();
  const handles = new Map<unknown, number>();
  let nextHandle = 1;
  entries.set(ROOT_HANDLE, {
    handle: ROOT_HANDLE,
    type: "verbs",
    obj: backend,
    ref: { $handle: ROOT_HANDLE, type: "verbs" },
    destroyed: false,
  });
  // The connection manager, when the backend has one, at its fixed handle (numbering unchanged).
  const cm = (backend as { cm?: object }).cm;
  if (cm) {
    entries.set(CM_HANDLE, {
      handle: CM_HANDLE,
      type: "cm",
      obj: cm,
      ref: { $handle: CM_HANDLE, type: "cm" },
      destroyed: false,
    });
    handles.set(cm, CM_HANDLE);
  }

  /** A contract object (or an incoming ref) to its bare ref, handle and type, as the transcript records it. */
  const toRef = (o: object): Ref | undefined => {
    if (isRef(o)) return { $handle: o.$handle, type: o.type };
    const h = handles.get(o);
    return h === undefined ? undefined : { $handle: h, type: entries.get(h)!.type };
  };

  /** The entry of `obj`, made on first sight (`fresh`); handles are numbered in creation order. */
  function register(obj: object, type: HandleType): { entry: Entry; fresh: boolean } {
    const known = handles.get(obj);
    if (known !== undefined) return { entry: entries.get(known)!, fresh: false };
    const handle = nextHandle++;
    const entry: Entry = {
      handle,
      type,
      obj,
      ref: { $handle: handle, type, props: propsOf(obj, type) },
      destroyed: false,
    };
    entries.set(handle, entry);
    handles.set(obj, handle);
    return { entry, fresh: true };
  }

  function propsOf(obj: object, type: HandleType): { [key: string]: WireValue } {
    const enc = (v: unknown) => encodeValue(v, toRef);
    switch (type) {
      case "context": {
        const ctx = obj as Context;
        let gids: unknown = [];
        try {
          gids = ctx.queryGidTable();
        } catch {
          // A context that cannot list its GIDs still works; exports then use index numbers.
        }
        return { device: enc(ctx.device), gids: enc(gids) };
      }
      case "pd":
        return { context: enc((obj as { context: object }).context) };
      case "mr": {
        const mr = obj as Mr;
        return {
          pd: enc(mr.pd),
          addr: mr.addr,
          length: mr.length,
          lkey: mr.lkey,
          rkey: mr.rkey,
          access: mr.access,
        };
      }
      case "cq": {
        const cq = obj as Cq;
        return {
          context: enc(cq.context),
          cqe: cq.cqe,
          ...(cq.cq_context !== undefined && { cq_context: enc(cq.cq_context) }),
        };
      }
      case "qp": {
        const qp = obj as Qp;
        return {
          pd: enc(qp.pd),
          qp_num: qp.qp_num,
          qp_type: qp.qp_type,
          send_cq: enc(qp.send_cq),
          recv_cq: enc(qp.recv_cq),
          cap: enc(qp.cap),
        };
      }
      case "ah":
        return { pd: enc((obj as { pd: object }).pd) };
      case "cmId": {
        // What struct rdma_cm_id shows; verbs, qp, port_num and route change as the id goes on,
        // so every ref of an id carries them as they are now (withProps).
        const id = obj as CmId;
        return {
          channel: enc(id.channel),
          ps: id.ps,
          qp_type: id.qp_type,
          port_num: id.port_num,
          route: enc(id.route),
          ...(id.verbs && { verbs: enc(id.verbs) }),
          ...(id.qp && { qp: enc(id.qp) }),
          ...(id.context !== undefined && { context: enc(id.context) }),
        };
      }
      case "cmEvent": {
        // The ids go with their props: the id of a CONNECT_REQUEST is first seen here.
        const e = obj as CmEvent;
        const idRef = (o: object) => {
          const r = toRef(o);
          return r && r.type === "cmId" ? { ...r, props: propsOf(o, "cmId") } : r;
        };
        return {
          event: e.event,
          status: e.status,
          id: encodeValue(e.id, idRef),
          ...(e.listen_id && { listen_id: encodeValue(e.listen_id, idRef) }),
          param: enc(e.param),
        };
      }
      default:
        return {};
    }
  }

  /** Turns incoming plain data (refs for objects) into what the backend takes. */
  function decodeArgs(args: unknown[]): unknown[] {
    return args.map((a) =>
      mapRefs(a, (o) => {
        if (!isRef(o)) {
          if ("$handle" in o)
            throw argError(TypeError, undefined, { kind: "not-a-handle", handle: JSON.stringify(o.$handle) });
          return undefined;
        }
        const e = entries.get(o.$handle);
        if (!e) throw argError(TypeError, undefined, { kind: "no-handle", handle: String(o.$handle) });
        return e.obj;
      }),
    );
  }

  /** The result as it leaves the session: every object as its ref with props, as first handed out. */
  function withProps(result: unknown, created: Ref[]): unknown {
    return mapRefs(result, (o) => {
      const h = handles.get(o);
      if (h === undefined) return undefined;
      const e = entries.get(h)!;
      if (e.type === "cmId") return { ...e.ref, props: propsOf(o, "cmId") };
      return created.find((r) => r.$handle === h) ?? e.ref;
    });
  }

  return {
    get: (handle: number): Entry | undefined => entries.get(handle),
    /** Every entry in creation order, destroyed ones included. */
    all: (): Entry[] => [...entries.values()],
    handleOf: (o: unknown): number | undefined => handles.get(o),
    toRef,
    register,
    decodeArgs,
    withProps,
  };
}
