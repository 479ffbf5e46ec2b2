/**
 * The CM pane's data: each rdma_cm id with the librdmacm calls made on it and the events
 * rdma_get_cm_event handed out about it, from the session's transcript events. A listening id
 * holds the child id of each CONNECT_REQUEST it received (the event's `listen_id` and `id`), so
 * the pane can draw the tree a server program has: one listener, one child per connection.
 */
import {
  RDMA_CM_EVENT_ADDR_ERROR,
  RDMA_CM_EVENT_CONNECT_ERROR,
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_DEVICE_REMOVAL,
  RDMA_CM_EVENT_MULTICAST_ERROR,
  RDMA_CM_EVENT_REJECTED,
  RDMA_CM_EVENT_ROUTE_ERROR,
  RDMA_CM_EVENT_UNREACHABLE,
  rdma_port_space,
  rdmaEventStr,
} from "../../../../verbs/cm.js";
import { nameOf } from "../../../../verbs/constants.js";
import { decodeValue, type Ref } from "../../../session/wire.js";
import type { VerbEvent } from "../../../session/transcript.js";
import { cmStatusName } from "./format.js";
import type { CmIdView, CmLogRow, CmPrivateData } from "./view.js";

/** The contract objects whose calls are librdmacm's (app/session/wire.ts HandleType). */
export const CM_TYPES: ReadonlySet<string> = new Set(["cm", "cmChannel", "cmId", "cmEvent"]);

/** Events that say a step failed, whatever their status. */
const FAILURES = new Set<number>([
  RDMA_CM_EVENT_ADDR_ERROR,
  RDMA_CM_EVENT_ROUTE_ERROR,
  RDMA_CM_EVENT_CONNECT_ERROR,
  RDMA_CM_EVENT_UNREACHABLE,
  RDMA_CM_EVENT_REJECTED,
  RDMA_CM_EVENT_DEVICE_REMOVAL,
  RDMA_CM_EVENT_MULTICAST_ERROR,
]);

type Props = Record<string, unknown>;
const refOf = (v: unknown): Ref | undefined =>
  v && typeof v === "object" && typeof (v as Ref).$handle === "number" ? (v as Ref) : undefined;

/** A socket address as text ("10.77.0.2:7471", "[fe80::1]:7471"); undefined for the unset 0.0.0.0:0. */
export function sockAddrText(a: unknown): string | undefined {
  if (!a || typeof a !== "object") return undefined;
  const { addr, port } = a as { addr?: string; port?: number };
  if (!addr || ((addr === "0.0.0.0" || addr === "::") && !port)) return undefined;
  return `${addr.includes(":") ? `[${addr}]` : addr}:${port ?? 0}`;
}

/** Bytes as the transcript carries them ({ $bytes: hex }) or as a Uint8Array. */
function bytesOf(v: unknown): Uint8Array | undefined {
  if (v instanceof Uint8Array) return v;
  const d = v && typeof v === "object" && "$bytes" in v ? decodeValue(v) : undefined;
  return d instanceof Uint8Array ? d : undefined;
}

/** A message's private data: what the sender filled, and the zeros that pad it to the field's size. */
export function privateDataOf(data: Uint8Array, len = data.length): CmPrivateData {
  let end = Math.min(data.length, len);
  while (end > 0 && data[end - 1] === 0) end--;
  return { len, bytes: data.slice(0, end), zeros: len - end };
}

/** A call's arguments in short: the addresses it names, the private data it sends. */
function callDetail(method: string, args: readonly unknown[]): string | undefined {
  const sent = (v: unknown) => {
    const b = bytesOf(v);
    return b && b.length ? `private_data ${b.length} B` : undefined;
  };
  switch (method) {
    case "bindAddr":
      return sockAddrText(args[0]) ?? "any";
    case "resolveAddr": {
      const dst = sockAddrText(args[1]);
      const src = sockAddrText(args[0]);
      return src ? `${src} → ${dst ?? "?"}` : dst;
    }
    case "listen":
      return `backlog ${Number(args[0] ?? 0)}`;
    case "reject":
      return sent(args[0]);
    case "connect":
    case "accept":
      return sent((args[0] as Props | undefined)?.private_data);
    default:
      return undefined;
  }
}

interface IdState {
  handle: number;
  props: Props;
  listening: boolean;
  destroyed: boolean;
  parent?: { handle: number; seq: number };
  rows: CmLogRow[];
  children: number[];
}

/** What naming needs: each object's one name and its label, by handle (the fold's objects). */
export type CmNamer = (handle: number) => { name: string; label: string } | undefined;

/**
 * The ids, their logs and their children from the CM calls of a transcript (events whose
 * target is a CM object, in order). `names` gives every object's one name.
 */
export function buildCmLog(events: readonly VerbEvent[], names: CmNamer): CmIdView[] {
  const ids = new Map<number, IdState>();
  const eventRows = new Map<number, Extract<CmLogRow, { kind: "event" }>>();
  const nameOfHandle = (h: number) => names(h)?.name ?? `#${h}`;

  const idOf = (ref: Ref | undefined): IdState | undefined => {
    if (!ref) return undefined;
    let s = ids.get(ref.$handle);
    if (!s)
      ids.set(
        ref.$handle,
        (s = { handle: ref.$handle, props: {}, listening: false, destroyed: false, rows: [], children: [] }),
      );
    if (ref.props) s.props = { ...s.props, ...(ref.props as Props) };
    return s;
  };
  const movesOf = (e: VerbEvent) =>
    (e.librdmacm ?? []).filter((t) => t.from !== t.to).map((t) => ({ qp: nameOfHandle(t.qp), from: t.from, to: t.to }));

  for (const e of events) {
    if (!CM_TYPES.has(e.target.type)) continue;
    for (const r of e.created ?? []) if (r.type === "cmId") idOf(r);
    const h = e.target.$handle;
    if (e.method === "getEvent" && e.target.type === "cmChannel") {
      const ref = e.created?.find((r) => r.type === "cmEvent");
      if (!ref) continue;
      const p = (ref.props ?? {}) as Props;
      const event = Number(p.event);
      const status = Number(p.status ?? 0);
      const id = idOf(refOf(p.id));
      const listener = idOf(refOf(p.listen_id));
      const param = (p.param ?? {}) as { conn?: Props; ud?: Props };
      const pd = param.conn ?? param.ud;
      const data = bytesOf(pd?.private_data);
      const len = Number(pd?.private_data_len ?? data?.length ?? 0);
      const statusName = cmStatusName(event, status, Number(id?.props.ps));
      const row: CmLogRow = {
        kind: "event",
        seq: e.seq,
        event: rdmaEventStr(event),
        status,
        ...(statusName && { statusName }),
        bad: FAILURES.has(event) || status !== 0,
        ...(data && len > 0 && { privateData: privateDataOf(data, len) }),
        ...(param.ud &&
          Number(param.ud.qp_num) > 0 && { ud: { qp_num: Number(param.ud.qp_num), qkey: Number(param.ud.qkey) } }),
        acked: false,
        moves: movesOf(e),
      };
      eventRows.set(ref.$handle, row);
      if (event === RDMA_CM_EVENT_CONNECT_REQUEST && listener && id) {
        row.child = nameOfHandle(id.handle);
        id.parent ??= { handle: listener.handle, seq: e.seq };
        if (!listener.children.includes(id.handle)) listener.children.push(id.handle);
        listener.rows.push(row);
      } else id?.rows.push(row);
      continue;
    }
    if (e.target.type === "cmEvent" && e.method === "ack") {
      const row = eventRows.get(h);
      if (row && !e.error) row.acked = true;
      continue;
    }
    if (e.target.type !== "cmId") continue;
    const id = idOf(e.target);
    if (!id) continue;
    const detail = callDetail(e.method, e.args);
    id.rows.push({
      kind: "call",
      seq: e.seq,
      verb: e.verb,
      outcome: e.error ? (e.error.code ?? e.error.name) : "ok",
      ...(detail && { detail }),
      ...(e.error?.reason && { reason: e.error.reason }),
      ...(e.error?.why && { why: e.error.why }),
      moves: movesOf(e),
    });
    if (!e.error && e.method === "listen") id.listening = true;
    if (!e.error && e.method === "destroy") id.destroyed = true;
  }

  const view = (s: IdState): CmIdView => {
    const route = (s.props.route ?? {}) as Props;
    const local = sockAddrText(route.src_addr);
    const remote = sockAddrText(route.dst_addr);
    const channel = refOf(s.props.channel);
    const n = names(s.handle);
    return {
      handle: n?.label ?? `#${s.handle}`,
      name: n?.name ?? `#${s.handle}`,
      ps: nameOf(rdma_port_space, Number(s.props.ps)),
      ...(channel && { channel: nameOfHandle(channel.$handle) }),
      ...(local && { local }),
      ...(remote && { remote }),
      listening: s.listening,
      ...(s.parent && { parent: { name: nameOfHandle(s.parent.handle), seq: s.parent.seq } }),
      destroyed: s.destroyed,
      rows: s.rows,
      children: s.children.map((c) => view(ids.get(c)!)),
    };
  };
  return [...ids.values()].filter((s) => !s.parent).map(view);
}
