/**
 * ibv_destroy_cq with completion events read and not acknowledged. libibverbs destroys the
 * CQ in the kernel and then waits, for ever, until every event got from the channel has been
 * acknowledged (ibv_cmd_destroy_cq's wait on comp_events_completed): a C program hangs there.
 * VerbsLab refuses instead, on both backends and in the session before any backend is called,
 * with this one error, so the mistake is named and the CQ stays usable (acknowledge, retry).
 */
import { VerbsError, errnos } from "./errors.js";
import { because } from "./verb-failure.js";

/** Whether a recorded error (VerbsError or its JSON) is this refusal: a replay or a C export must not call the real destroy. */
export function isUnackedEventsRefusal(e: { verb?: string; code?: string; attribute?: string } | undefined): boolean {
  return e?.verb === "ibv_destroy_cq" && e.code === "EBUSY" && e.attribute === "ibv_ack_cq_events";
}

/** The error ibv_destroy_cq gets while `unacked` completion events are not acknowledged. */
export function unackedEventsError(unacked: number): VerbsError {
  return new VerbsError(
    "ibv_destroy_cq",
    errnos.EBUSY,
    because({ kind: "unacked-events", n: unacked }, { attribute: "ibv_ack_cq_events" }),
  );
}
