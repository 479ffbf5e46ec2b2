/**
 * Replaying a transcript: the same calls, in order, on a fresh backend, through a new
 * session (so the replay is itself recorded). Handles come out the same because objects
 * are created in the same order; keys, addresses, QPNs and GIDs are rewritten to the new
 * objects' values (symbols.ts). Undo is a replay up to an earlier event; reset is a new
 * session. Where the replay's outcome differs from the recording, it is reported, not hidden.
 */
import type { VerbsBackend } from "../../verbs/backend.js";
import { createSession } from "./session.js";
import type { Session, TranscriptSink } from "./session-types.js";
import { objectsOf, resolveSymbols, symbolize } from "./symbols.js";
import type { ErrorData } from "../../verbs/errors.js";
import type { Transcript, TranscriptEvent, VerbEvent } from "./transcript.js";
import { decodeValue, isRef, type Ref, type WireValue } from "./wire.js";

export interface ReplayOptions {
  /** Replay events with seq ≤ upTo (default: all). */
  upTo?: number;
  sink?: TranscriptSink;
  /** The new session starts paused (step mode) once the replay is done. */
  step?: boolean;
  seed?: number;
  /** Called after each replayed event (for progress). */
  onProgress?: (done: number, total: number) => void;
}

export interface Divergence {
  seq: number;
  verb: string;
  recorded: string;
  replayed: string;
}

export interface ReplayResult {
  session: Session;
  /** Events replayed. */
  replayed: number;
  divergences: Divergence[];
}

const outcomeOf = (e: { error?: ErrorData }) => (e.error ? (e.error.code ?? e.error.name) : "ok");

export async function replayTranscript(
  t: Transcript,
  backend: VerbsBackend,
  options: ReplayOptions = {},
): Promise<ReplayResult> {
  const session = createSession({
    backend,
    ...(options.sink && { sink: options.sink }),
    ...((options.seed ?? t.header.seed) !== undefined && { seed: (options.seed ?? t.header.seed)! }),
    ...(t.header.program !== undefined && { program: t.header.program }),
  });
  const recorded = objectsOf(t);
  const divergences: Divergence[] = [];
  const upTo = options.upTo ?? Infinity;
  const todo = t.events.filter((e) => e.seq <= upTo);
  let replayed = 0;

  const propsNow = (handle: number) => objectsOf(session.transcript()).get(handle)?.props;

  for (const e of todo) {
    if (e.kind === "log") session.log(e.message);
    else if (e.kind === "end") session.end(e.outcome, e.error);
    else await replayVerb(session, e, recorded, propsNow, divergences);
    replayed++;
    options.onProgress?.(replayed, todo.length);
  }
  if (options.step) session.gate.pause();
  return { session, replayed, divergences };
}

async function replayVerb(
  session: Session,
  e: VerbEvent,
  recorded: ReturnType<typeof objectsOf>,
  propsNow: (h: number) => { [key: string]: WireValue } | undefined,
  divergences: Divergence[],
): Promise<void> {
  // The event this call appends, if it reached the backend (seen as it is appended: O(1)).
  let mine: TranscriptEvent | undefined;
  const off = session.subscribe((ev) => (mine = ev));
  let thrown: unknown;
  try {
    // An argument naming an object the replay lacks (its create failed this time) cannot be
    // rebuilt: that is a divergence, reported below like a call the replay could not run.
    const args = e.args.map((a) => {
      const resolved = resolveSymbols(symbolize(a, recorded, e.seq), propsNow) as WireValue;
      // Refs stay refs (the session resolves handles); bigints and bytes become values again.
      return decodeValue(resolved, (r: Ref) => (isRef(r) ? { $handle: r.$handle, type: r.type } : r));
    });
    // The same line of the same program made it: the replay's event keeps it (and the names it gives).
    await session.call(e.target.$handle, e.method, args, e.source);
  } catch (err) {
    thrown = err;
  }
  off();
  if (mine?.kind !== "verb") {
    // The call never reached the backend (a stopped gate, a handle the replay does not have).
    divergences.push({
      seq: e.seq,
      verb: e.verb,
      recorded: outcomeOf(e),
      replayed: `not run: ${(thrown as Error)?.message}`,
    });
    return;
  }
  const want = outcomeOf(e);
  const got = outcomeOf(mine);
  if (want !== got) {
    divergences.push({ seq: e.seq, verb: e.verb, recorded: want, replayed: got });
    return;
  }
  const states = (x: VerbEvent) => x.qps.map((q) => `qp${q.qp}:${q.after?.qp_state ?? "-"}`).join(",");
  if (states(e) !== states(mine))
    divergences.push({ seq: e.seq, verb: e.verb, recorded: states(e), replayed: states(mine) });
  const wcs = (x: VerbEvent) => (x.completions ?? []).map((c) => `${c.wc.wr_id}:${c.wc.status}`).join(",");
  if (wcs(e) !== wcs(mine)) divergences.push({ seq: e.seq, verb: e.verb, recorded: wcs(e), replayed: wcs(mine) });
}
