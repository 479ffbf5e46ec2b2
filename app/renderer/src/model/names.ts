/**
 * The one name each object has in every pane (status bar, diagram, tables, transcript, log,
 * editor): the learner's variable where the program names it (`const a = await
 * pd.createQp(…)` → "a"), and for a QP its number, as the learner meets it in dest_qp_num:
 * "a (QP 0x11)". Objects the program did not name fall back to what identifies them: a QP's
 * number, a context's device, else the kind and its creation index ("cq0").
 */
import { hex } from "./format.js";

/** What naming needs to know of an object. */
export interface Nameable {
  type: string;
  /** Index among objects of its type, in creation order. */
  index: number;
  /** The learner's variable for it, from the line of its creating call. */
  variable?: string;
  /** A QP's number. */
  qp_num?: number;
  /** A context's device ("rxe0"); for a QP, set only when a QP on another device has its number. */
  device?: string;
}

const KIND: Record<string, string> = {
  context: "ctx",
  pd: "pd",
  mr: "mr",
  cq: "cq",
  qp: "qp",
  channel: "ch",
  ah: "ah",
  cmChannel: "cm_channel",
  cmId: "cm_id",
  cmEvent: "cm_event",
};

/**
 * A QP by its number, with the learner's variable if known: "a (QP 0x11)", "QP 0x11"; with its
 * device where another device has a QP of that number: "a (QP 0x11, rxe0)".
 */
export const qpName = (qpNum: number, variable?: string, device?: string): string => {
  const qp = `QP ${hex(qpNum)}${device ? `, ${device}` : ""}`;
  return variable ? `${variable} (${qp})` : qp;
};

/** The object's name, the same in every pane. */
export function objectName(o: Nameable): string {
  if (o.type === "qp" && o.qp_num !== undefined) return qpName(o.qp_num, o.variable, o.device);
  if (o.type === "context" && o.device) return o.variable ? `${o.variable} (${o.device})` : o.device;
  return o.variable ?? objectLabel(o);
}

/** An object's short label by kind and creation index ("qp0", "ctx1"): where no variable names it. */
export const objectLabel = (o: { type: string; index: number }): string => `${KIND[o.type] ?? o.type}${o.index}`;
