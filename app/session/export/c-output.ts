/**
 * Reads what an exported C program printed (on real rxe, in the lab VM) and compares it
 * with the transcript it came from: each step's outcome (ok or the errno), the QP state
 * after each modify, and the completions (wr_id, status, opcode, byte_len, which QP).
 * QPNs are compared through the objects' names, since numbers may differ per run.
 */
import { errnos } from "../../../verbs/errors.js";
import { objectName } from "../symbols.js";
import type { Transcript } from "../transcript.js";

interface StepOutput {
  seq: number;
  verb: string;
  text: string;
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
      cur = { seq: Number(m[1]), verb: m[2]!, text: m[3]!, states: new Map(), wcs: [] };
      steps.set(cur.seq, cur);
      continue;
    }
    if (!cur) continue;
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
  // QP numbers → names, on each side.
  const recordedQpn = new Map<number, string>();
  const realQpn = new Map<number, string>();
  for (const e of t.events) {
    if (e.kind !== "verb") continue;
    for (const r of e.created ?? []) if (r.type === "qp") recordedQpn.set(r.props?.qp_num as number, objectName(r));
    const s = steps.get(e.seq);
    const m = s && /^qp_num 0x([0-9a-f]+)/.exec(s.text);
    if (m && e.created?.[0]) realQpn.set(parseInt(m[1]!, 16), objectName(e.created[0]));
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
      const want = (e.completions ?? []).map(
        (c) =>
          `${c.wc.wr_id}/${c.wc.status}/${c.wc.opcode}/${c.wc.byte_len}/${recordedQpn.get(c.wc.qp_num) ?? c.wc.qp_num}`,
      );
      const got = s.wcs.map(
        (w) => `${w.wr_id}/${w.status}/${w.opcode}/${w.byte_len}/${realQpn.get(w.qp_num) ?? w.qp_num}`,
      );
      if (want.join() !== got.join())
        out.push(`#${e.seq} ${e.verb}: recorded completions [${want.join(", ")}], the program got [${got.join(", ")}]`);
    }
  }
  return out;
}
