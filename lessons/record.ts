/**
 * Builds the facts checks look at (`RunRecord`) from a session transcript, and nothing
 * else: the app judges a learner's run from the transcript it already has, the replay
 * (lessons/replay.ts) from the one it just recorded. Browser-safe.
 */
import type { TranscriptEvent, VerbEvent } from "../app/session/transcript.js";
import { decodeValue, type Ref, type WireValue } from "../app/session/wire.js";
import type { QpAttr } from "../verbs/types.js";
import type { VerbFailure } from "../verbs/verb-failure.js";
import type { RunError, RunRecord, RunWc } from "./checks.js";

const plain = (w: WireValue | undefined): unknown => (w === undefined ? undefined : decodeValue(w, (r) => r));

/** `verbs.log("key", value)` is written as `key <value>`; the value is JSON when it parses as JSON. */
export function parseLog(message: string): { key: string; value: unknown } {
  const space = message.indexOf(" ");
  if (space === -1) return { key: message, value: undefined };
  const key = message.slice(0, space);
  const rest = message.slice(space + 1);
  try {
    return { key, value: plain(JSON.parse(rest) as WireValue) };
  } catch {
    return { key, value: rest };
  }
}

function createdOf(e: VerbEvent, type: Ref["type"]): Ref | undefined {
  return e.created?.find((r) => r.type === type);
}

export function recordFromTranscript(events: readonly TranscriptEvent[]): RunRecord {
  const record: RunRecord = { calls: [], wcs: [], qps: [], mrs: [], logs: [], counters: {} };
  const qpIndex = new Map<number, number>(); // handle → index in record.qps
  const mrIndex = new Map<number, number>();
  const deviceOfContext = new Map<number, string>();
  const contextOfPd = new Map<number, number>();
  const qpCqs: (number | undefined)[][] = []; // per QP index: its send and recv CQ handles

  for (const e of events) {
    if (e.kind === "log") {
      record.logs.push(parseLog(e.message));
      continue;
    }
    if (e.kind === "end") {
      if (e.outcome === "error" && e.error) record.thrown = runError(e.error, undefined);
      if (e.outcome === "stopped") record.thrown = { message: "the program was stopped (it did not finish in time)" };
      continue;
    }
    // A wait for an event that timed out (null) returned, but it did not do what it is for.
    const timedOut = (e.method === "getCqEvent" || e.method === "getAsyncEvent") && e.result === null;
    record.calls.push({
      verb: e.verb,
      ok: e.error === undefined && !timedOut,
      ...(e.error !== undefined && { error: runError(e.error, e.verb) }),
      // What the device answered to a query: checks compare logged values with it.
      ...(e.verb.startsWith("ibv_query_") && e.result !== undefined && { result: plain(e.result) }),
    });
    const ctxRef = e.method === "openDevice" ? createdOf(e, "context") : undefined;
    if (ctxRef && typeof e.args[0] === "string") {
      deviceOfContext.set(ctxRef.$handle, e.args[0]);
      record.counters[e.args[0]] ??= {};
      const driver = (plain(ctxRef.props?.device) as { driver?: unknown } | undefined)?.driver;
      if (typeof driver === "string") (record.drivers ??= {})[e.args[0]] = driver;
    }
    const pdRef = e.target.type === "context" ? createdOf(e, "pd") : undefined;
    if (pdRef) contextOfPd.set(pdRef.$handle, e.target.$handle);
    const qpRef = createdOf(e, "qp");
    if (qpRef) {
      qpIndex.set(qpRef.$handle, record.qps.length);
      const variable = e.source?.variable;
      const pd = e.target.type === "pd" ? e.target.$handle : (e.args[0] as Ref | null)?.$handle;
      const device = deviceOfContext.get(contextOfPd.get(pd ?? -1) ?? -1);
      record.qps.push({
        qp_num: Number(plain(qpRef.props?.qp_num) ?? -1),
        ...(variable && { variable }),
        ...(device && { device }),
      });
      // pd.createQp(init), or cmId.createQp(pd, init) (rdma_create_qp).
      const init = e.args[e.target.type === "cmId" ? 1 : 0] as { send_cq?: Ref; recv_cq?: Ref } | null;
      qpCqs.push([init?.send_cq?.$handle, init?.recv_cq?.$handle]);
    }
    const mrRef = createdOf(e, "mr");
    if (mrRef) {
      mrIndex.set(mrRef.$handle, record.mrs.length);
      const variable = e.source?.variable;
      record.mrs.push({ reads: [], ...(variable && { variable }) });
    }
    if (e.method === "read" && e.target.type === "mr" && e.error === undefined) {
      const i = mrIndex.get(e.target.$handle);
      const bytes = plain(e.result);
      if (i !== undefined && bytes instanceof Uint8Array)
        record.mrs[i]!.reads.push({ offset: typeof e.args[0] === "number" ? e.args[0] : 0, bytes });
    }
    // The latest snapshot of each QP is its state as of the last verb call.
    for (const s of e.qps) {
      const i = qpIndex.get(s.qp);
      if (i === undefined) continue;
      const qp = record.qps[i]!;
      if (s.after) qp.attr = plain(s.after as unknown as WireValue) as QpAttr;
      else delete qp.attr;
    }
    for (const c of e.completions ?? []) {
      const wc = plain(c.wc as unknown as WireValue) as RunWc;
      const i = record.qps.findIndex((q, j) => q.qp_num === wc.qp_num && qpCqs[j]!.includes(c.cq));
      record.wcs.push(i === -1 ? wc : { ...wc, qp_index: i });
    }
    for (const c of e.counters ?? []) {
      const dev = deviceOfContext.get(c.context);
      if (!dev) continue;
      const acc = (record.counters[dev] ??= {});
      for (const [name, d] of Object.entries(c.delta)) acc[name] = (acc[name] ?? 0) + d;
    }
  }
  return record;
}

function runError(
  e: { name: string; message: string; verb?: string; code?: string; attribute?: string; why?: VerbFailure },
  verb: string | undefined,
): RunError {
  const out: RunError = { message: e.message };
  const v = e.verb ?? (e.code ? verb : undefined);
  if (v !== undefined) out.verb = v;
  if (e.code !== undefined) out.code = e.code;
  else if (e.name !== "Error") out.name = e.name;
  if (e.attribute !== undefined) out.attribute = e.attribute;
  if (e.why !== undefined) out.why = e.why;
  return out;
}
