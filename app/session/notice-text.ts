/**
 * The English of the session's notices (transcript.ts `SessionNotice`): the lookout fills each
 * notice's `text` with it, which the transcript exports print; the renderer's i18n.ts words the
 * same data in the learner's language. Browser-safe, pure.
 */
import { ibv_wr_opcode, nameOf } from "../../verbs/constants.js";
import { qpName } from "../renderer/src/model/names.js";
import type { CqOverflow, CqRoundedUp, LateRearm, ReadBeforePoll } from "./transcript.js";

/** The WR opcode without its prefix ("RDMA_WRITE"). */
export const shortWrOpcode = (op: number) => nameOf(ibv_wr_opcode, op).replace("IBV_WR_", "");

const count = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** A CQ that fits its QPs' WRs only because rxe rounded its cqe up. */
export function cqRoundedUpText(n: Omit<CqRoundedUp, "id" | "text">): string {
  const users = n.users.map((u) => {
    const parts = [...(u.send ? [count(u.send, "send")] : []), ...(u.recv ? [count(u.recv, "receive")] : [])];
    return `${qpName(u.qpn, u.variable)}: ${parts.join(" + ")}`;
  });
  return (
    `A CQ was created with cqe ${n.asked}, and ${n.device} returned cqe ${n.actual} (rxe rounds up to 2^k − 1). ` +
    `${n.wrs} WRs can complete into it (${users.join(", ")}): more than the ${n.asked} asked for, so it works only ` +
    `because of the rounding. A device that gives exactly what is asked overflows (IBV_EVENT_CQ_ERR). ` +
    `Ask for cqe ≥ ${n.wrs}.`
  );
}

/** More completions on their way into a CQ than it holds, with no poll in between. */
export function cqOverflowText(n: Omit<CqOverflow, "id" | "text">): string {
  return (
    `${n.pending} completions are on their way into ${n.cq}, which holds ${n.cqe} (its cqe), and no poll ` +
    `has made room: when a CQ is full the device drops the next completion and raises IBV_EVENT_CQ_ERR ` +
    `(rxe_cq_post), so a completion the program waits for never comes. Poll as you post, or create the ` +
    `CQ with cqe ≥ ${n.pending}.`
  );
}

/** A CQ re-armed only after the drain that followed its event. */
export function lateRearmText(n: Omit<LateRearm, "id" | "text">): string {
  return (
    `${n.cq}.reqNotify() re-arms the CQ after the poll that drained it (that poll returned ${n.lastPoll}). ` +
    `A completion that landed between that poll and this re-arm raises no event: a program that now ` +
    `waits in getCqEvent may sleep for ever with work in the CQ. Re-arm first, then poll until empty.`
  );
}

/** An MR read of bytes a WR in flight changes, before its completion was polled. */
export function readBeforePollText(n: Omit<ReadBeforePoll, "id" | "text">): string {
  const wr = n.recv ? "a posted RECV" : `an ${shortWrOpcode(n.opcode ?? 0)}`;
  return (
    `${n.mr}.read(${n.offset}, ${n.length}) reads bytes that ${wr} ` +
    `(wr_id ${n.wr_id} on ${qpName(n.qpn, n.variable)}) changes, before its completion was polled: until then they may be ` +
    `the old bytes, the new ones or some of each (on one device the simulator, as rxe's loopback, writes ` +
    `them at once, so they look final). ` +
    `Poll its completion first${n.signaled ? "" : " (it is unsignaled: poll a later signaled WR of that QP)"}.`
  );
}
