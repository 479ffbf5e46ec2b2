/** What each work-completion status means for a learner, and the colour class it is drawn in. */
import { ibv_wc_status } from "../../../../verbs/constants.js";
import type { WcWhy } from "../../../session/explain-wc.js";
import type { PolledWc } from "./view.js";
import type { Strings } from "../i18n.js";

/** What a status means, in the learner's language (the table is i18n.ts `wcStatus`). */
export function explainStatus(status: number, t: Strings): string {
  const name = Object.entries(ibv_wc_status).find(([, v]) => v === status)?.[0];
  return (name && t.wcStatus[name]) ?? t.wcStatusOther(status);
}

/** success (green), flush (amber: a consequence, not a cause) or error (red). */
export function statusTone(status: number): "ok" | "flush" | "error" {
  if (status === ibv_wc_status.IBV_WC_SUCCESS) return "ok";
  if (status === ibv_wc_status.IBV_WC_WR_FLUSH_ERR) return "flush";
  return "error";
}

/** How the app knows why a completion failed, for the label beside the reason. */
export function whySource(why: WcWhy, t: Strings): string {
  return why.source === "simulator" ? t.whySimulator : t.whyInferred;
}

/**
 * What the opcode of a failed completion means: rxe fills only wr_id, status and qp_num of an
 * error (or flush) completion, so its opcode reads 0 (IBV_WC_SEND) whatever the WR was.
 */
export function errorOpcodeNote(wc: PolledWc, t: Strings): string {
  return t.errorOpcodeNote(wc.opcode, wc.why?.posted);
}
