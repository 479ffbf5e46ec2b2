/**
 * The instructor service (a JupyterHub service at `/services/instructor/`): one page listing
 * every learner's lesson and step, attempts, time on the step, the last failing goal and
 * error, each with a link to the learner's transcript (read-only: nothing here changes a
 * learner's work). Who gets in is the Hub's to say, by its scopes (`access:services`): the
 * `instructors` group by the role in jupyterhub_config.py, and admins.
 *
 * Learners' servers post progress events to `api/events` with their own Hub token; the event
 * is stored under the name the Hub gives for that token, never one the request claims.
 *
 *   GET  <prefix>                      the page (refreshes itself every 5 s)
 *   GET  <prefix>api/learners          the same as JSON
 *   GET  <prefix>transcript/<name>     one learner's latest transcript
 *   POST <prefix>api/events            a progress event (app/classroom/progress-event.ts)
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { contentSecurityPolicy } from "../bridge/csp.js";
import { BridgeValidationError } from "../bridge/schema.js";
import type { HubAuth } from "./hub-auth.js";
import { progressEventSchema, MAX_TRANSCRIPT_CHARS } from "./progress-event.js";
import type { LearnerRow, Store } from "./store.js";

export interface InstructorOptions {
  auth: HubAuth;
  store: Store;
  host: string;
  port: number;
  /** Now, ms (tests move it). */
  now?: () => number;
}

export interface InstructorService {
  readonly port: number;
  close(): Promise<void>;
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** "42 s", "3 min 12 s", "1 h 05 min". */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`;
}

/** Time on the step: from its first run to its pass, or to now while it is not passed. */
export const timeOnStep = (row: LearnerRow, now: number) => (row.passed ? row.lastAt : now) - row.firstAt;

const HEADERS = {
  "Content-Security-Policy": contentSecurityPolicy(),
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
};

function page(title: string, body: string, refresh = false): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">${refresh ? '<meta http-equiv="refresh" content="5">' : ""}
<title>${escapeHtml(title)}</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #1d2330; }
table { border-collapse: collapse; } th, td { text-align: left; padding: .35em .8em; border-bottom: 1px solid #d8dce4; vertical-align: top; }
.passed { color: #17692f; } .failing { color: #a3261b; } pre { white-space: pre-wrap; background: #f5f6f8; padding: 1em; }
</style></head><body>${body}</body></html>
`;
}

function learnersPage(rows: LearnerRow[], now: number, viewer: string): string {
  const line = (r: LearnerRow) => {
    const status = r.passed ? '<td class="passed">passed</td>' : '<td class="failing">not yet</td>';
    const failure =
      (r.failingGoal ?? r.error) ? escapeHtml([r.failingGoal, r.failingDetail].filter(Boolean).join(": ")) : "";
    return `<tr data-learner="${escapeHtml(r.learner)}"><td>${escapeHtml(r.learner)}</td><td>${escapeHtml(r.lessonId)}</td>
<td>${r.step}</td>${status}<td>${r.attempts}</td><td>${formatDuration(timeOnStep(r, now))}</td>
<td class="goal">${failure}</td><td class="error">${escapeHtml(r.error ?? "")}</td>
<td><a href="transcript/${encodeURIComponent(r.learner)}">transcript</a></td></tr>`;
  };
  const table = rows.length
    ? `<table><thead><tr><th>Learner</th><th>Lesson</th><th>Step</th><th>Step status</th><th>Attempts</th>
<th>Time on step</th><th>Last failing goal</th><th>Last error</th><th></th></tr></thead>
<tbody>${rows.map(line).join("\n")}</tbody></table>`
    : "<p>No learner has run a lesson step yet.</p>";
  return page(
    "VerbsLab: the classroom",
    `<h1>The classroom</h1><p>Signed in as ${escapeHtml(viewer)}. ${rows.length} learner(s); refreshed every 5 s.</p>${table}`,
    true,
  );
}

/** Starts the service's HTTP server under the Hub's prefix. */
export async function startInstructorService(options: InstructorOptions): Promise<InstructorService> {
  const { auth, store } = options;
  const prefix = auth.env.prefix;
  const now = options.now ?? Date.now;

  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, { ...HEADERS, "Content-Type": type });
    res.end(body);
  };
  const text = (res: ServerResponse, status: number, body: string) =>
    send(res, status, "text/plain; charset=utf-8", body + "\n");
  const json = (res: ServerResponse, status: number, body: unknown) =>
    send(res, status, "application/json; charset=utf-8", JSON.stringify(body));

  async function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
    let size = 0;
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) return null;
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString("utf8");
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://service.invalid");
    if (url.pathname === prefix.slice(0, -1)) {
      res.writeHead(302, { Location: prefix, "Cache-Control": "no-store" });
      return void res.end();
    }
    if (!url.pathname.startsWith(prefix)) return text(res, 404, "Not found.");
    const path = url.pathname.slice(prefix.length);
    if (url.pathname === auth.env.callbackPath) return auth.finishLogin(req, res, url);

    if (path === "api/events") {
      if (req.method !== "POST") return text(res, 405, "Method not allowed: post progress events here.");
      // A learner's server, with its own token: only a header, so a page cannot post with a cookie.
      if (!/^(token|bearer) /i.test(req.headers.authorization ?? ""))
        return text(
          res,
          401,
          "Unauthorized: progress events need the learner server's Hub token (Authorization: token …).",
        );
      const who = await auth.identify(req);
      if (!who.ok && who.status === 401) return text(res, 401, `Unauthorized: ${who.reason}.`);
      const user = who.user;
      if (user.kind !== "user") return text(res, 403, `Forbidden: ${user.kind} ${user.name} is not a learner.`);
      const body = await readBody(req, MAX_TRANSCRIPT_CHARS * 2 + 64 * 1024);
      if (body === null) return text(res, 413, "Payload too large: a progress event is at most a few MB.");
      let event;
      try {
        event = progressEventSchema.parse(JSON.parse(body), "event");
      } catch (err) {
        const why = err instanceof BridgeValidationError ? err.message : "not JSON";
        return text(res, 400, `Bad request: ${why}.`);
      }
      await store.record(user.name, event);
      return json(res, 201, { recorded: true, learner: user.name });
    }

    if (req.method !== "GET" && req.method !== "HEAD") return text(res, 405, "Method not allowed.");
    const who = await auth.identify(req);
    if (!who.ok) {
      if (who.status === 401 && !req.headers.authorization) return auth.startLogin(req, res, url.pathname + url.search);
      return text(
        res,
        who.status,
        who.status === 403
          ? `Forbidden: the instructor view is for the instructors group and admins; ${who.user.name} is neither.`
          : `Unauthorized: ${who.reason}.`,
      );
    }
    if (path === "")
      return send(res, 200, "text/html; charset=utf-8", learnersPage(await store.learners(), now(), who.user.name));
    if (path === "api/learners")
      return json(
        res,
        200,
        (await store.learners()).map((r) => ({ ...r, timeOnStepMs: timeOnStep(r, now()) })),
      );
    if (path.startsWith("transcript/")) {
      let learner: string;
      try {
        learner = decodeURIComponent(path.slice("transcript/".length));
      } catch {
        return text(res, 400, "Bad request: the learner's name is not valid URL encoding.");
      }
      const t = await store.transcript(learner);
      if (!t) return text(res, 404, `Not found: no transcript from ${learner}.`);
      return send(
        res,
        200,
        "text/html; charset=utf-8",
        page(
          `${learner}: transcript`,
          `<p><a href="../">← the classroom</a></p><h1>${escapeHtml(learner)}</h1>
<p>${escapeHtml(t.lessonId)} step ${t.step}, ${escapeHtml(new Date(t.at).toISOString())} (read-only)</p>
<pre class="transcript">${escapeHtml(t.content)}</pre>`,
        ),
      );
    }
    return text(res, 404, "Not found.");
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      console.error(`instructor: ${req.method} ${req.url}: ${err.message}`);
      if (!res.headersSent) text(res, 500, "The instructor service failed to answer; its log says why.");
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
