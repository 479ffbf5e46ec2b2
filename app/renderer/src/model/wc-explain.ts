/** What each work-completion status means for a learner, and the colour class it is drawn in. */
import { ibv_wc_status } from "../../../../verbs/constants.js";
import type { WcWhy } from "../../../session/explain-wc.js";
import type { PolledWc } from "./view.js";

type StatusName = keyof typeof ibv_wc_status;

const EXPLAIN: Partial<Record<StatusName, string>> = {
  IBV_WC_SUCCESS: "The work request completed.",
  IBV_WC_LOC_LEN_ERR: "A receive buffer was too small for the incoming message, or a send was longer than allowed.",
  IBV_WC_LOC_QP_OP_ERR: "The local QP could not perform the request (bad opcode, or too many SGEs / inline bytes).",
  IBV_WC_LOC_PROT_ERR: "An SGE names memory the lkey does not cover, or the MR lacks LOCAL_WRITE for a write into it.",
  IBV_WC_WR_FLUSH_ERR:
    "Flushed: the QP is in ERR, so every outstanding request completes with this status, unexecuted.",
  IBV_WC_MW_BIND_ERR: "A memory window bind failed.",
  IBV_WC_BAD_RESP_ERR: "The responder sent an unexpected reply.",
  IBV_WC_LOC_ACCESS_ERR: "A local access violation while writing incoming data (e.g. an RDMA READ response).",
  IBV_WC_REM_INV_REQ_ERR: "The remote side rejected the request as invalid (opcode not allowed, message too long).",
  IBV_WC_REM_ACCESS_ERR:
    "The remote side refused access: wrong rkey, an address outside its MR, or the MR lacks the REMOTE_* flag.",
  IBV_WC_REM_OP_ERR: "The remote side could not complete the operation (e.g. its receive buffer was too small).",
  IBV_WC_RETRY_EXC_ERR:
    "No ACK came back after timeout × (retry_cnt + 1): the peer is unreachable or dest_qp_num / PSN / GID is wrong.",
  IBV_WC_RNR_RETRY_EXC_ERR: "Receiver not ready: the peer had no receive posted, and rnr_retry ran out.",
  IBV_WC_REM_INV_RD_REQ_ERR:
    "The remote side refused an RDMA READ or atomic (max_dest_rd_atomic is 0 or access missing).",
  IBV_WC_REM_ABORT_ERR: "The remote side aborted the operation.",
  IBV_WC_FATAL_ERR: "A fatal error on the device.",
  IBV_WC_RESP_TIMEOUT_ERR: "The response timed out.",
  IBV_WC_GENERAL_ERR: "A general error.",
};

export function explainStatus(status: number): string {
  const name = Object.entries(ibv_wc_status).find(([, v]) => v === status)?.[0] as StatusName | undefined;
  return (name && EXPLAIN[name]) ?? `Status ${status}.`;
}

/** success (green), flush (amber: a consequence, not a cause) or error (red). */
export function statusTone(status: number): "ok" | "flush" | "error" {
  if (status === ibv_wc_status.IBV_WC_SUCCESS) return "ok";
  if (status === ibv_wc_status.IBV_WC_WR_FLUSH_ERR) return "flush";
  return "error";
}

/** How the app knows why a completion failed, for the label beside the reason. */
export function whySource(why: WcWhy): string {
  return why.source === "simulator" ? "exact: the simulator's responder" : "inferred from both sides' objects";
}

/**
 * What the opcode of a failed completion means: rxe fills only wr_id, status and qp_num of an
 * error (or flush) completion, so its opcode reads 0 (IBV_WC_SEND) whatever the WR was.
 */
export function errorOpcodeNote(wc: PolledWc): string {
  return (
    `opcode ${wc.opcode} means nothing here: rxe sets only wr_id, status and qp_num on an error completion` +
    (wc.why?.posted ? ` (the WR was ${wc.why.posted})` : "")
  );
}
