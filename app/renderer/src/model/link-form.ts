/**
 * The Network panel's form: the lab link's faults as the learner types them (loss and reorder in
 * percent, delay in ms, an MTU per side) and back to the `setLink` argument. Bounds are
 * verbs/lab.ts's; its `applyLinkFaults` has the last word, so the panel refuses exactly what the
 * backend would.
 */
import {
  DELAY_MAX_MS,
  MTU_MAX,
  MTU_MIN,
  applyLinkFaults,
  type LinkFaults,
  type LinkState,
  type WireModel,
} from "../../../../verbs/lab.js";
import type { VerbFailure } from "../../../../verbs/verb-failure.js";

export interface LinkForm {
  loss: string;
  delay: string;
  reorder: string;
  mtu0: string;
  mtu1: string;
  block: boolean;
  /** The simulator's wire model (not a fault: the link's speed). */
  wire: WireModel;
}

export type LinkField = keyof LinkForm;

/** What is wrong with one field: out of its range (`whole`: it takes whole numbers), or the contract's reason. */
export type FieldProblem =
  | { field: LinkField; kind: "range"; min: number; max: number; whole: boolean }
  | { field: LinkField; kind: "reason"; text: string; why?: VerbFailure };

/** A fraction as a percentage without float noise: 0.07 → 7 (0.07 * 100 is 7.000000000000001). */
export const percentOf = (f: number): number => Number((f * 100).toPrecision(12));
const percent = (f: number) => String(percentOf(f));

export function formOf(link: LinkState): LinkForm {
  return {
    loss: percent(link.loss),
    delay: String(link.delay),
    reorder: percent(link.reorder),
    mtu0: String(link.mtu.rxe0),
    mtu1: String(link.mtu.rxe1),
    block: link.blockRoceUdp,
    wire: link.wire,
  };
}

/** The contract's attribute names (VerbsError.attribute) as the form's fields. */
const FIELD_OF: Record<string, LinkField> = {
  loss: "loss",
  delay: "delay",
  reorder: "reorder",
  "mtu.rxe0": "mtu0",
  "mtu.rxe1": "mtu1",
  blockRoceUdp: "block",
  wire: "wire",
};

function number(form: LinkForm, field: Exclude<LinkField, "block" | "wire">, min: number, max: number, whole: boolean) {
  const text = form[field].trim();
  const v = text === "" ? NaN : Number(text);
  if (!Number.isFinite(v) || v < min || v > max || (whole && !Number.isInteger(v)))
    return { field, kind: "range", min, max, whole } as const;
  return v;
}

/**
 * The faults that turn `current` into what the form says (only the fields that differ, so the
 * transcript reads `verbslab_set_link({"blockRoceUdp":true})`), or the first field that is wrong.
 */
export function faultsFromForm(form: LinkForm, current: LinkState): { faults: LinkFaults } | FieldProblem {
  const loss = number(form, "loss", 0, 100, false);
  if (typeof loss !== "number") return loss;
  const delay = number(form, "delay", 0, DELAY_MAX_MS, false);
  if (typeof delay !== "number") return delay;
  const reorder = number(form, "reorder", 0, 100, false);
  if (typeof reorder !== "number") return reorder;
  const rxe0 = number(form, "mtu0", MTU_MIN, MTU_MAX, true);
  if (typeof rxe0 !== "number") return rxe0;
  const rxe1 = number(form, "mtu1", MTU_MIN, MTU_MAX, true);
  if (typeof rxe1 !== "number") return rxe1;
  const faults: LinkFaults = {};
  if (String(loss) !== percent(current.loss)) faults.loss = loss / 100;
  if (delay !== current.delay) faults.delay = delay;
  if (String(reorder) !== percent(current.reorder)) faults.reorder = reorder / 100;
  if (rxe0 !== current.mtu.rxe0 || rxe1 !== current.mtu.rxe1)
    faults.mtu = {
      ...(rxe0 !== current.mtu.rxe0 && { rxe0 }),
      ...(rxe1 !== current.mtu.rxe1 && { rxe1 }),
    };
  if (form.block !== current.blockRoceUdp) faults.blockRoceUdp = form.block;
  if (form.wire !== current.wire) faults.wire = form.wire;
  try {
    applyLinkFaults(current, faults);
  } catch (e) {
    const err = e as { attribute?: string; reason?: string; message: string; why?: VerbFailure };
    return {
      field: FIELD_OF[err.attribute ?? ""] ?? "loss",
      kind: "reason",
      text: err.reason ?? err.message,
      ...(err.why && { why: err.why }),
    };
  }
  return { faults };
}
