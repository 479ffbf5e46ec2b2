/**
 * What a learner's server tells the instructor service after each checked run: which step,
 * whether it passed, the first goal that failed and the error the program threw, and the
 * session's transcript (Markdown, for the instructor's read-only view). Who the learner is
 * is never in the event: the service takes it from the Hub, from the token the event came with.
 */
import { s, type Infer } from "../bridge/schema.js";

/** A transcript larger than this is cut (the view says so); a lesson run's is a few kB. */
export const MAX_TRANSCRIPT_CHARS = 2_000_000;

export const progressEventSchema = s.object({
  lessonId: s.string({ min: 1, max: 100 }),
  step: s.number({ integer: true, min: 1, max: 1000 }),
  passed: s.boolean(),
  /** The first failed goal, as the goal list words it (English). */
  failingGoal: s.optional(s.string({ max: 2000 })),
  /** What that goal saw instead. */
  failingDetail: s.optional(s.string({ max: 2000 })),
  /** The error the program threw that no goal expected ("ibv_modify_qp: EINVAL …"). */
  error: s.optional(s.string({ max: 2000 })),
  /** When the run was checked, ms since the epoch (the learner server's clock). */
  at: s.number({ integer: true, min: 0 }),
  transcript: s.optional(s.string({ max: MAX_TRANSCRIPT_CHARS })),
});

export type ProgressEvent = Infer<typeof progressEventSchema>;
