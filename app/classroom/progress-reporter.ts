/**
 * The learner server's half of the instructor view: a HostCore that answers exactly as the
 * one it wraps and, after each `lessons.check` of a step (not a break-it, which fails on
 * purpose), posts a progress event to the instructor service with the server's own Hub token.
 * Posting never delays or fails the learner's request: events go out one at a time, in order,
 * and one the service could not take is logged and dropped.
 */
import { describeCheck, type Verdict } from "../../lessons/checks.js";
import type { HostCore } from "../backend/host.js";
import { decodeValue, type WireValue } from "../session/wire.js";
import { MAX_TRANSCRIPT_CHARS, type ProgressEvent } from "./progress-event.js";

export interface ProgressReporterOptions {
  /** The instructor service's events endpoint (`http://127.0.0.1:10101/services/instructor/api/events`). */
  eventsUrl: string;
  /** This server's Hub API token (JUPYTERHUB_API_TOKEN). */
  token: string;
}

/** The event a check's verdict makes. */
export function progressEventOf(lessonId: string, step: number, verdict: Verdict, at: number): ProgressEvent {
  const failed = verdict.results.find((r) => !r.passed);
  const error = verdict.unexpectedError;
  return {
    lessonId,
    step,
    passed: verdict.passed,
    ...(failed && {
      failingGoal: describeCheck(failed.check, "en", "", verdict).slice(0, 2000),
      failingDetail: failed.detail.slice(0, 2000),
    }),
    ...(error && {
      error: [error.verb, error.code, error.message].filter(Boolean).join(": ").slice(0, 2000),
    }),
    at,
  };
}

/** Wraps `core`; returns it with `idle()` (resolves when every event so far has been posted). */
export function reportProgress(core: HostCore, options: ProgressReporterOptions): HostCore & { idle(): Promise<void> } {
  let queue: Promise<void> = Promise.resolve();
  const post = async (event: ProgressEvent) => {
    const res = await fetch(options.eventsUrl, {
      method: "POST",
      headers: { Authorization: `token ${options.token}`, "Content-Type": "application/json" },
      body: JSON.stringify(event),
    });
    if (!res.ok) throw new Error(`${res.status} ${(await res.text()).trim()}`);
  };
  const report = async (lessonId: string, step: number, verdict: Verdict) => {
    const event = progressEventOf(lessonId, step, verdict, Date.now());
    const md = decodeValue(await core.handle("transcript.export", { format: "md" })) as {
      ok: boolean;
      result?: { content: string };
    };
    if (md.ok && md.result) event.transcript = md.result.content.slice(0, MAX_TRANSCRIPT_CHARS);
    await post(event);
  };
  return {
    ...core,
    async handle(method, params) {
      const envelope = await core.handle(method, params);
      if (method === "lessons.check") {
        const p = decodeValue(params as WireValue) as { lessonId?: string; step?: number; breakIt?: string };
        const answer = decodeValue(envelope) as { ok: boolean; result?: Verdict };
        if (
          answer.ok &&
          answer.result &&
          p.breakIt === undefined &&
          typeof p.lessonId === "string" &&
          typeof p.step === "number"
        ) {
          const { lessonId, step } = p;
          const verdict = answer.result;
          queue = queue
            .then(() => report(lessonId, step, verdict))
            .catch((err: Error) =>
              console.error(`verbslab: the instructor service did not take a progress event: ${err.message}`),
            );
        }
      }
      return envelope;
    },
    onEvent: core.onEvent,
    idle: () => queue,
  };
}
