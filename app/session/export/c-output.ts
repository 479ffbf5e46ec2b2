/**
 * Reads what an exported C program printed (on real rxe, in the lab VM) and compares it
 * with the transcript it came from: each step's outcome (ok or the errno), the QP state
 * after each modify, and the completions (wr_id, status, opcode, byte_len, which QP).
 * QPNs are compared through the objects' names, since numbers may differ per run (and per
 * device: two devices may give the same number). For rdma_cm programs also each event (its
 * name and status, event->param and its private data bytes) and the state of every QP
 * librdmacm moved.
 */
import { rdmaEventStr } from "../../../verbs/cm.js";
import { errnos } from "../../../verbs/errors.js";
import { objectName, objectsOf } from "../symbols.js";
import type { Transcript, VerbEvent } from "../transcript.js";
import type { WireValue } from "../wire.js";

interface StepOutput {
  seq: number;
  verb: string;
  text: string;
  /** The indented lines printed after the step's line. */
  lines: string[];
  states: Map<string, string>;
  wcs: { wr_id: number; status: number; opcode: number; byte_len: number; qp_num: number }[];
}

const STATE_NAMES = ["RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR", "UNKNOWN"];

export function parseCOutput(output: string): Map<number, StepOutput> {
  const steps = new Map<number, StepOutput>();
  let cur: StepOutput | undefined;
  for (const line of output.split("\n")) {
    let m = /^(\d+)\. (\w+): (.*)$/.exec(line);
    if (m) {
      cur = { seq: Number(m[1]), verb: m[2]!, text: m[3]!, lines: [], states: new Map(), wcs: [] };
      steps.set(cur.seq, cur);
      continue;
    }
    if (!cur) continue;
    if (line.startsWith("  ")) cur.lines.push(line.slice(2));
    m = /^ {2}(qp\d+) state (\w+)$/.exec(line);
    if (m) cur.states.set(m[1]!, m[2]!);
    m = /^ {2}cq\d+: wr_id (\d+), status .* \((\d+)\), opcode (\d+), byte_len (\d+), qp_num 0x([0-9a-f]+)$/.exec(line);
    if (m)
      cur.wcs.push({
        wr_id: Number(m[1]),
        status: Number(m[2]),
        opcode: Number(m[3]),
        byte_len: Number(m[4]),
        qp_num: parseInt(m[5]!, 16),
      });
  }
  return steps;
}

/** The differences between a transcript and its C program's output; empty when they agree. */
export function compareCOutput(t: Transcript, output: string): string[] {
  const steps = parseCOutput(output);
  const out: string[] = [];
  // QP numbers → names, on each side, per device (the context's handle).
  const contextOf = contexts(t);
  const recordedQpn = new Map<string, string>();
  const realQpn = new Map<string, string>();
  for (const e of t.events) {
    if (e.kind !== "verb") continue;
    for (const r of e.created ?? [])
      if (r.type === "qp") recordedQpn.set(`${contextOf(r.$handle)}:${r.props?.qp_num}`, objectName(r));
    const s = steps.get(e.seq);
    const m = s && [s.text, ...s.lines].map((l) => /^qp_num 0x([0-9a-f]+)/.exec(l)).find(Boolean);
    const qp = e.created?.find((r) => r.type === "qp");
    if (m && qp) realQpn.set(`${contextOf(qp.$handle)}:${parseInt(m[1]!, 16)}`, objectName(qp));
  }
  for (const e of t.events) {
    if (e.kind !== "verb") continue;
    const s = steps.get(e.seq);
    const silent = ["write", "ackEvents", "sleep", "now", "queryCounters"].includes(e.method);
    if (!s) {
      if (!silent) out.push(`#${e.seq} ${e.verb}: the program printed nothing for it`);
      continue;
    }
    const err = /^error (\d+)/.exec(s.text) ?? /failed: /.exec(s.text);
    if (e.error && !err) out.push(`#${e.seq} ${e.verb}: recorded ${e.error.code}, the program succeeded`);
    if (!e.error && err) out.push(`#${e.seq} ${e.verb}: recorded success, the program printed "${s.text}"`);
    if (e.error?.code && err?.[1] && errnos[e.error.code as keyof typeof errnos] !== Number(err[1]))
      out.push(`#${e.seq} ${e.verb}: recorded ${e.error.code}, the program got errno ${err[1]}`);
    if (e.method === "read" && !e.error) {
      const want = ((e.result as { $bytes?: string } | undefined)?.$bytes ?? "").replace(/(..)(?!$)/g, "$1 ");
      if (s.text.trim() !== want)
        out.push(`#${e.seq} ${e.verb}: recorded bytes ${want}, the program read ${s.text.trim()}`);
    }
    if (e.method === "modify") {
      const q = e.qps.find((x) => x.qp === e.target.$handle);
      const want = q?.after ? STATE_NAMES[q.after.qp_state] : undefined;
      const got = s.states.get(objectName(e.target));
      if (want !== got) out.push(`#${e.seq} ${e.verb}: recorded state ${want}, the program printed ${got}`);
    }
    if (e.method === "poll" || e.method === "pollWait") {
      // A completion's qp_num is a QP of the CQ's own device.
      const dev = contextOf(e.target.$handle);
      const want = (e.completions ?? []).map(
        (c) =>
          `${c.wc.wr_id}/${c.wc.status}/${c.wc.opcode}/${c.wc.byte_len}/${recordedQpn.get(`${dev}:${c.wc.qp_num}`) ?? c.wc.qp_num}`,
      );
      const got = s.wcs.map(
        (w) => `${w.wr_id}/${w.status}/${w.opcode}/${w.byte_len}/${realQpn.get(`${dev}:${w.qp_num}`) ?? w.qp_num}`,
      );
      if (want.join() !== got.join())
        out.push(`#${e.seq} ${e.verb}: recorded completions [${want.join(", ")}], the program got [${got.join(", ")}]`);
    }
    if (e.method === "getEvent" && !e.error) out.push(...compareCmEvent(e, s));
    // The QPs librdmacm moved in this call: each in the state of its last move.
    const last = new Map<number, number>();
    for (const m of e.librdmacm ?? []) last.set(m.qp, m.to);
    for (const [qp, to] of last) {
      const name = objectName({ $handle: qp, type: "qp" });
      const got = s.states.get(name);
      if (got !== STATE_NAMES[to])
        out.push(`#${e.seq} ${e.verb}: librdmacm moved ${name} to ${STATE_NAMES[to]}, the program printed ${got}`);
    }
  }
  return out;
}

/** Each object's device: the handle of the context it belongs to (cq, pd, qp; a context itself). */
function contexts(t: Transcript): (handle: number) => number | undefined {
  const objects = objectsOf(t);
  const handleOf = (v: WireValue | undefined) =>
    v && typeof v === "object" && "$handle" in v ? (v as { $handle: number }).$handle : undefined;
  const of = (handle: number, depth = 0): number | undefined => {
    const o = objects.get(handle);
    if (!o || depth > 3) return undefined;
    if (o.type === "context") return handle;
    if (o.type === "pd" || o.type === "cq") return handleOf(o.props.context);
    if (o.type === "qp") {
      const pd = o.props.pd as { $handle?: number; props?: { context?: WireValue } } | undefined;
      return (pd?.$handle !== undefined ? of(pd.$handle, depth + 1) : undefined) ?? handleOf(pd?.props?.context);
    }
    return undefined;
  };
  return (handle) => of(handle);
}

/** A CM event as printed ("event NAME status N", event->param) against the one recorded. */
function compareCmEvent(e: VerbEvent, s: StepOutput): string[] {
  const out: string[] = [];
  const at = `#${e.seq} ${e.verb}`;
  const props = e.created?.[0]?.props as
    | { event?: number; status?: number; param?: { conn?: Record<string, WireValue>; ud?: Record<string, WireValue> } }
    | undefined;
  if (!props) {
    if (s.text !== "no event") out.push(`${at}: recorded no event, the program printed "${s.text}"`);
    return out;
  }
  const want = `event ${rdmaEventStr(props.event ?? -1)} status ${props.status}`;
  if (s.text !== want) out.push(`${at}: recorded "${want}", the program printed "${s.text}"`);
  const param = props.param?.conn ?? props.param?.ud;
  const line = s.lines.find((l) => /^(conn|ud): /.test(l));
  if (!param || !line) return out;
  // Numbers that name the peer's QP differ per run; the rest must agree.
  const fields = ["private_data_len", "responder_resources", "initiator_depth", "flow_control", "retry_count"];
  for (const k of [...fields, "rnr_retry_count", "srq", "qkey"]) {
    const m = new RegExp(`\\b${k} (0x[0-9a-f]+|\\d+)`).exec(line);
    if (!m || param[k] === undefined) continue;
    if (Number(m[1]) !== param[k]) out.push(`${at}: recorded ${k} ${String(param[k])}, the program printed ${m[1]}`);
  }
  const bytes = (param.private_data as { $bytes?: string } | undefined)?.$bytes ?? "";
  const printed =
    s.lines
      .find((l) => l.startsWith("private_data:"))
      ?.slice("private_data:".length)
      .trim() ?? "";
  const wantBytes = bytes.replace(/(..)(?!$)/g, "$1 ");
  if (printed !== wantBytes)
    out.push(`${at}: recorded private_data ${wantBytes || "(none)"}, the program printed ${printed || "(none)"}`);
  return out;
}
