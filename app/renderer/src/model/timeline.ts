/**
 * The packet timeline's rows from the transcript and the snapshot's packet log: for each
 * verb, the WQEs it posted, the packets that went on the wire during it (each tagged by the
 * backend with the event it happened during) and the CQEs it polled, in that order. Pure.
 */
import type { WcWhy } from "../../../session/explain-wc.js";
import type { PacketLog, PacketRecord } from "../../../bridge/contract.js";
import type { TranscriptEvent, VerbEvent } from "../../../session/transcript.js";
import {
  IBV_SEND_SIGNALED,
  IBV_WC_SUCCESS,
  ibv_wc_opcode,
  ibv_wc_status,
  ibv_wr_opcode,
  nameOf,
} from "../../../../verbs/constants.js";
import type { Wc } from "../../../../verbs/types.js";
import type { PacketClass, TimelineLane, TimelineRow, TimelineView } from "./view.js";
import { hex } from "./format.js";

/** Most rows the pane draws (the newest); the renderer keeps PACKET_WINDOW packets in all. */
export const TIMELINE_ROWS = 300;
/** A clock step this long (ms) between two rows is drawn as a wait: a timer fired, or a sleep. */
const WAIT_MS = 0.001;

export interface TimelineInputs {
  events: readonly TranscriptEvent[];
  packets?: PacketLog | undefined;
  /** The session's live QPs, in creation order: one lane each. */
  lanes: TimelineLane[];
  /** A QP by its handle: its number, its device, and whether it signals every send (sq_sig_all). */
  qp(handle: number): { qp_num: number; device: string; sigAll: boolean } | undefined;
  /** The device of a CQ by its handle (a completion's QP is on its CQ's device). */
  cqDevice(handle: number): string | undefined;
  maxRows?: number;
}

interface Wr {
  wr_id?: number;
  opcode?: number;
  send_flags?: number;
  sg_list?: { length?: number }[];
}

/** A lane's key: QP numbers repeat across devices, so a lane is a number on a device. */
export const laneKey = (device: string, qpn: number) => `${device}/${qpn}`;

const stripTransport = (op: string) => op.replace(/^(RC|UC|UD)_/, "");

/** What kind of packet, by opcode and AETH syndrome (rxe_hdr.h: 0x00 ACK, 0x20 RNR NAK, 0x60 NAK). */
export function packetClass(p: Pick<PacketRecord, "opcode" | "aeth">): PacketClass {
  if (p.opcode.includes("READ_RESPONSE")) return "response";
  if (!p.opcode.includes("ACKNOWLEDGE")) return "request";
  const type = (p.aeth?.syndrome ?? 0) & 0xe0;
  return type === 0x20 ? "rnr" : type === 0x60 ? "nak" : "ack";
}

/** The words on a packet's arrow. */
export function packetLabel(p: Pick<PacketRecord, "opcode" | "aeth">): string {
  const k = packetClass(p);
  if (k === "ack") return p.opcode.includes("ATOMIC") ? "ATOMIC_ACK" : "ACK";
  if (k === "rnr" || k === "nak") return p.aeth?.text ?? "NAK";
  return stripTransport(p.opcode);
}

/** Every header of a packet in one line (the row's tooltip). */
/** The Packets tab's row tooltip in English: every header field (Chinese: i18n/packet-detail-zh.ts). */
export function packetDetail(p: PacketRecord): string {
  const parts = [
    p.opcode,
    `${p.src} QP ${p.src_qpn} → ${p.dst} QP ${p.dest_qpn}`,
    `PSN ${hex(p.psn)}`,
    `${p.len} B payload`,
  ];
  if (p.ack_req) parts.push("AckReq");
  if (p.wr_id !== undefined) parts.push(`wr_id ${p.wr_id}`);
  if (p.reth) parts.push(`RETH va ${hex(p.reth.va)} rkey ${hex(p.reth.rkey)} len ${p.reth.len}`);
  if (p.aeth) parts.push(`AETH ${p.aeth.text} (syndrome ${hex(p.aeth.syndrome)}) MSN ${p.aeth.msn}`);
  if (p.imm_data !== undefined) parts.push(`ImmDt ${hex(p.imm_data)}`);
  if (p.dropped) parts.push(`dropped: ${p.dropped}`);
  parts.push(`t = ${p.time.toFixed(3)} ms`);
  return parts.join(" · ");
}

const wrsOf = (e: VerbEvent): Wr[] => {
  const a = e.args[0];
  return (Array.isArray(a) ? a : a ? [a] : []) as Wr[];
};

// Events never change once written: a post's rows are made once (for the QP number and
// signalling they were made with), a completion's row once.
const wqeCache = new WeakMap<VerbEvent, { lane: string; sigAll: boolean; rows: TimelineRow[] }>();
const cqeCache = new WeakMap<object, TimelineRow>();

function wqeRows(e: VerbEvent, qp: TimelineInputs["qp"]): TimelineRow[] {
  if (e.method !== "postSend" && e.method !== "postRecv") return [];
  const q = qp(e.target.$handle);
  if (!q) return [];
  const lane = laneKey(q.device, q.qp_num);
  const hit = wqeCache.get(e);
  if (hit && hit.lane === lane && hit.sigAll === q.sigAll) return hit.rows;
  const rows = makeWqeRows(e, q, lane);
  wqeCache.set(e, { lane, sigAll: q.sigAll, rows });
  return rows;
}

function makeWqeRows(e: VerbEvent, q: { qp_num: number; sigAll: boolean }, lane: string): TimelineRow[] {
  const send = e.method === "postSend";
  // A refused post: the WRs before the bad one were posted (libibverbs' bad_wr), the bad one shows the errno.
  const bad = e.error ? (e.error.badWrIndex ?? 0) : Infinity;
  return wrsOf(e)
    .slice(0, bad + 1)
    .map((w, i) => ({
      kind: "wqe" as const,
      key: `w${e.seq}.${i}`,
      t: e.clock,
      qp_num: q.qp_num,
      lane,
      queue: send ? ("SQ" as const) : ("RQ" as const),
      opcode: send ? nameOf(ibv_wr_opcode, Number(w?.opcode ?? 0)).replace("IBV_WR_", "") : "RECV",
      wr_id: Number(w?.wr_id ?? 0),
      bytes: (w?.sg_list ?? []).reduce((n, s) => n + Number(s?.length ?? 0), 0),
      ...(send && { signaled: q.sigAll || !!(Number(w?.send_flags ?? 0) & IBV_SEND_SIGNALED) }),
      ...(i === bad && { refused: e.error!.code ?? e.error!.name }),
    }));
}

// Packet records are kept as they are across snapshots (the fold appends): their rows are made once.
const packetRows = new WeakMap<PacketRecord, TimelineRow>();
function packetRow(p: PacketRecord): TimelineRow {
  let row = packetRows.get(p);
  if (!row) packetRows.set(p, (row = makePacketRow(p)));
  return row;
}

function makePacketRow(p: PacketRecord): TimelineRow {
  return {
    kind: "packet",
    key: `p${p.seq}`,
    t: p.time,
    from: laneKey(p.src, p.src_qpn),
    to: laneKey(p.dst, p.dest_qpn),
    opcode: stripTransport(p.opcode),
    label: packetLabel(p),
    klass: packetClass(p),
    psn: p.psn,
    len: p.len,
    ...(p.wr_id !== undefined && { wr_id: p.wr_id }),
    ...(p.dropped !== undefined && { dropped: p.dropped }),
    ...(p.drop !== undefined && { drop: p.drop }),
    ...(packetClass(p) === "rnr" && p.aeth && { rnrTimer: p.aeth.syndrome & 0x1f }),
    detail: p,
  };
}

function cqeRow(e: VerbEvent, c: { wc: Wc; why?: WcWhy }, i: number, device: string): TimelineRow {
  let row = cqeCache.get(c);
  if (!row) cqeCache.set(c, (row = makeCqeRow(e, c.wc, i, laneKey(device, c.wc.qp_num), c.why)));
  return row;
}

function makeCqeRow(e: VerbEvent, wc: Wc, i: number, lane: string, why?: WcWhy): TimelineRow {
  const ok = wc.status === IBV_WC_SUCCESS;
  return {
    kind: "cqe",
    key: `c${e.seq}.${i}`,
    t: e.clock + e.clockAdvance,
    qp_num: wc.qp_num,
    lane,
    // An error completion's opcode is undefined (rxe leaves it 0): say nothing rather than "SEND".
    opcode: ok ? nameOf(ibv_wc_opcode, wc.opcode).replace("IBV_WC_", "") : "",
    wr_id: Number(wc.wr_id),
    status: nameOf(ibv_wc_status, wc.status).replace("IBV_WC_", ""),
    bytes: wc.byte_len,
    bad: !ok,
    ...(why && { why: why.reason }),
  };
}

/** How many rows an event makes, without making them (for the count of rows not drawn). */
function rowCount(e: TranscriptEvent, packets: number): number {
  if (e.kind !== "verb") return packets;
  const posts = e.method === "postSend" || e.method === "postRecv" ? wrsOf(e).length : 0;
  return posts + packets + (e.completions?.length ?? 0);
}

export function buildTimeline({
  events,
  packets,
  lanes,
  qp,
  cqDevice,
  maxRows = TIMELINE_ROWS,
}: TimelineInputs): TimelineView {
  const records = packets?.records ?? [];
  const byAt = new Map<number, PacketRecord[]>();
  for (const r of records) {
    const list = byAt.get(r.at);
    if (list) list.push(r);
    else byAt.set(r.at, [r]);
  }
  // Newest first until enough rows; older events are only counted.
  const groups: TimelineRow[][] = [];
  let kept = 0;
  let hiddenRows = 0;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    const pk = byAt.get(e.seq) ?? [];
    if (kept >= maxRows) {
      hiddenRows += rowCount(e, pk.length);
      continue;
    }
    if (e.kind !== "verb" && pk.length === 0) continue;
    const group =
      e.kind === "verb"
        ? [
            ...wqeRows(e, qp),
            ...pk.map(packetRow),
            ...(e.completions ?? []).map((c, j) => cqeRow(e, c, j, cqDevice(c.cq) ?? "")),
          ]
        : pk.map(packetRow);
    if (group.length === 0) continue;
    groups.push(group);
    kept += group.length;
  }
  let rows = groups.reverse().flat();
  if (rows.length > maxRows) {
    hiddenRows += rows.length - maxRows;
    rows = rows.slice(rows.length - maxRows);
  }

  // Gaps in the packet log (a long burst's middle) and jumps of the clock get rows of their own.
  const out: TimelineRow[] = [];
  let prevSeq: number | undefined;
  let prevT: number | undefined;
  let lastPacket: PacketClass | undefined;
  let lastRnr: { timer: number; t: number } | undefined;
  // Request PSNs sent so far, per sending lane: one sent again is a retry.
  const sentPsns = new Set<string>();
  for (const r of rows) {
    if (r.kind === "packet") {
      const seq = Number(r.key.slice(1));
      if (prevSeq !== undefined && seq > prevSeq + 1)
        out.push({ kind: "gap", key: `g${seq}`, count: seq - prevSeq - 1 });
      prevSeq = seq;
    }
    if ("t" in r) {
      if (prevT !== undefined && r.t - prevT >= WAIT_MS) {
        // A request sent again right after the clock moved was sent by a timer: after an RNR NAK,
        // the RNR wait; else the ACK timeout. Any other packet then is one the wire's time let
        // through (an ACK for a request that crossed, the next message's first packet).
        const again = r.kind === "packet" && r.klass === "request" && sentPsns.has(`${r.from}#${r.psn}`);
        const why = r.kind !== "packet" ? "program" : !again ? "wire" : lastPacket === "rnr" ? "rnr" : "retransmit";
        out.push({
          kind: "wait",
          key: `t${r.key}`,
          t: r.t,
          ms: Math.round((r.t - prevT) * 1000) / 1000,
          why,
          ...(why === "rnr" &&
            lastRnr && { rnrTimer: lastRnr.timer, sinceNakMs: Math.round((r.t - lastRnr.t) * 1000) / 1000 }),
        });
      }
      prevT = r.t;
    }
    if (r.kind === "packet") {
      lastPacket = r.klass;
      if (r.klass === "request") sentPsns.add(`${r.from}#${r.psn}`);
      if (r.rnrTimer !== undefined) lastRnr = { timer: r.rnrTimer, t: r.t };
    }
    out.push(r);
  }

  // Lanes: the session's QPs, then any QP seen only on the wire or in a completion.
  const all = [...lanes];
  const known = new Set(all.map((l) => l.key));
  const see = (key: string) => {
    if (known.has(key)) return;
    known.add(key);
    const cut = key.lastIndexOf("/");
    all.push({ key, qp_num: Number(key.slice(cut + 1)), handle: "", device: key.slice(0, cut) });
  };
  for (const r of out) {
    if (r.kind === "packet") {
      see(r.from);
      see(r.to);
    } else if (r.kind === "wqe" || r.kind === "cqe") see(r.lane);
  }
  return {
    ...(packets && { observable: packets.observable }),
    lanes: all,
    rows: out,
    hiddenRows,
    earlierPackets: records[0]?.seq ?? 0,
  };
}
