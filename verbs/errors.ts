/** Linux errno values that verbs calls return, by name. */
export const errnos = {
  EPERM: 1,
  ENOENT: 2,
  EINTR: 4,
  EIO: 5,
  ENXIO: 6,
  EBADF: 9,
  EAGAIN: 11,
  ENOMEM: 12,
  EACCES: 13,
  EFAULT: 14,
  EBUSY: 16,
  EEXIST: 17,
  ENODEV: 19,
  EINVAL: 22,
  ENOSPC: 28,
  ENOSYS: 38,
  ENODATA: 61,
  EPROTO: 71,
  EOPNOTSUPP: 95,
  ENETUNREACH: 101,
  ETIMEDOUT: 110,
  ECONNREFUSED: 111,
} as const;

export type ErrnoName = keyof typeof errnos;

/** The errno name for a number (22 → "EINVAL"); unknown numbers come back as "E<n>". */
export function errnoName(errno: number): string {
  for (const [name, n] of Object.entries(errnos)) if (n === errno) return name;
  return `E${errno}`;
}

export interface VerbsErrorDetails {
  /** What was wrong, in words a learner can act on ("RTR needs IBV_QP_DEST_QPN"). */
  reason?: string;
  /** The attribute, mask bit or argument at fault, spelled as in verbs.h (`IBV_QP_DEST_QPN`, `sg_list[1].lkey`). */
  attribute?: string;
  /** For ibv_post_send/ibv_post_recv: the index of the first work request not posted (C's bad_wr). */
  badWrIndex?: number;
}

/**
 * A verbs call failed the way a C program would see a non-zero return or NULL.
 * `code` is the errno name (`EINVAL`), `errno` its number, `verb` the C function
 * (`ibv_modify_qp`). Wrong JavaScript argument types are TypeErrors instead.
 */
export class VerbsError extends Error {
  readonly verb: string;
  readonly code: string;
  readonly errno: number;
  readonly reason?: string;
  readonly attribute?: string;
  readonly badWrIndex?: number;

  constructor(verb: string, errno: number, details: VerbsErrorDetails = {}) {
    const code = errnoName(errno);
    super(`${verb}: ${code} (${errno})${details.reason ? `: ${details.reason}` : ""}`);
    this.name = "VerbsError";
    this.verb = verb;
    this.code = code;
    this.errno = errno;
    if (details.reason !== undefined) this.reason = details.reason;
    if (details.attribute !== undefined) this.attribute = details.attribute;
    if (details.badWrIndex !== undefined) this.badWrIndex = details.badWrIndex;
  }

  /** A plain object that survives structured clone and JSON (for the bridge and transcripts). */
  toJSON(): { name: string; verb: string; code: string; errno: number; message: string } & VerbsErrorDetails {
    return {
      name: this.name,
      verb: this.verb,
      code: this.code,
      errno: this.errno,
      message: this.message,
      ...(this.reason !== undefined && { reason: this.reason }),
      ...(this.attribute !== undefined && { attribute: this.attribute }),
      ...(this.badWrIndex !== undefined && { badWrIndex: this.badWrIndex }),
    };
  }
}

/** Throws a VerbsError for `errno` by name: `fail("ibv_reg_mr", "EINVAL", { reason })`. */
export function fail(verb: string, code: ErrnoName, details?: VerbsErrorDetails): never {
  throw new VerbsError(verb, errnos[code], details);
}
