/**
 * Port counters as the session records them: each device is read once when it is first
 * opened (the baseline) and then after every call that may move traffic, and each event
 * carries what changed since the previous read. The deltas therefore chain: added up over
 * a run they are exactly the last read minus the baseline, so a packet counted while the
 * program was between two verbs (rxe sends and receives from kernel tasks, not only inside
 * a verb) lands in the next event instead of in no event at all. On the simulator traffic
 * moves only inside verbs, so the same deltas come out either way.
 */
import type { Context } from "../../verbs/backend.js";

/** An open context, by the session handle its events name it with. */
export interface WatchedContext {
  handle: number;
  ctx: Context;
}

export interface CounterDelta {
  context: number;
  delta: Record<string, number>;
}

function read(ctx: Context): Record<string, number> | null {
  try {
    return { ...ctx.queryCounters() };
  } catch {
    // Counters are a nicety: a backend or device without them still records every verb.
    return null;
  }
}

export function counterWatch() {
  /** Device name → its counters at the last read. */
  const last = new Map<string, Record<string, number>>();
  return {
    /** A context was opened: the first one on a device takes the baseline. */
    opened(ctx: Context): void {
      if (last.has(ctx.device.name)) return;
      const now = read(ctx);
      if (now) last.set(ctx.device.name, now);
    },
    /**
     * After a traffic call: each watched device read through its first open context (the
     * handle the delta is keyed by), compared with the previous read. A device none of whose
     * contexts is open any more is forgotten; opening it again takes a new baseline.
     */
    changes(open: WatchedContext[]): CounterDelta[] {
      const out: CounterDelta[] = [];
      const seen = new Set<string>();
      for (const { handle, ctx } of open) {
        const device = ctx.device.name;
        if (seen.has(device)) continue;
        seen.add(device);
        const before = last.get(device);
        if (!before) continue;
        const now = read(ctx);
        if (!now) continue;
        last.set(device, now);
        const delta: Record<string, number> = {};
        for (const [k, v] of Object.entries(now)) if (v !== (before[k] ?? 0)) delta[k] = v - (before[k] ?? 0);
        if (Object.keys(delta).length) out.push({ context: handle, delta });
      }
      for (const device of last.keys()) if (!seen.has(device)) last.delete(device);
      return out;
    },
  };
}
