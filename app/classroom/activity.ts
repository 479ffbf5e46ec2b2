/**
 * Activity for the Hub's idle culler: the learner server notes every request and socket
 * message it lets in, and tells the Hub (`POST /api/users/:name/activity`, with its own
 * token) at most once an interval, and only when something happened since it last did —
 * what jupyterhub-singleuser does, so `jupyterhub-idle-culler` stops forgotten servers.
 */
import type { HubAuth } from "./hub-auth.js";

export interface ActivityReporter {
  /** Something happened now. */
  touch(): void;
  /** Reports now if anything happened since the last report (also run every interval). */
  flush(): Promise<void>;
  stop(): void;
}

/** `intervalMs`: JUPYTERHUB_ACTIVITY_INTERVAL seconds (default 300, as jupyterhub-singleuser). */
export function startActivityReporter(auth: HubAuth, intervalMs: number): ActivityReporter {
  const url = auth.env.activityUrl;
  let last: Date | null = null;
  let reported: Date | null = null;
  const flush = async () => {
    if (!url || !last || last === reported) return;
    const at = last;
    const stamp = at.toISOString();
    const res = await fetch(url, {
      method: "POST",
      headers: { Authorization: `token ${auth.env.apiToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({ last_activity: stamp, servers: { [auth.env.serverName]: { last_activity: stamp } } }),
    }).catch((err: Error) => ({ ok: false, status: err.message }) as const);
    if (res.ok) reported = at;
    else console.error(`verbslab: reporting activity to the Hub failed (${res.status})`);
  };
  const timer = setInterval(() => void flush(), intervalMs);
  timer.unref();
  return {
    touch: () => void (last = new Date()),
    flush,
    stop: () => clearInterval(timer),
  };
}
