/**
 * The QP state diagram's geometry, drawn from the one transition table (verbs/qp-transitions.ts):
 * every legal edge the table has, with fixed positions for the seven states.
 */
import { ibv_qp_state } from "../../../../verbs/constants.js";
import { QP_TRANSITIONS } from "../../../../verbs/qp-transitions.js";

const { IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPS_SQE, IBV_QPS_ERR } = ibv_qp_state;

export interface GraphNode {
  state: number;
  x: number;
  y: number;
}

export interface GraphEdge {
  from: number;
  to: number;
  /** The bring-up path and the SQD/SQE loops: always drawn; the rest only from the current state. */
  primary: boolean;
  path: string;
  /** Where to put the arrow label. */
  mid: { x: number; y: number };
}

export const NODE_W = 74;
export const NODE_H = 34;

export const NODES: GraphNode[] = [
  { state: IBV_QPS_RESET, x: 60, y: 50 },
  { state: IBV_QPS_INIT, x: 190, y: 50 },
  { state: IBV_QPS_RTR, x: 320, y: 50 },
  { state: IBV_QPS_RTS, x: 450, y: 50 },
  { state: IBV_QPS_SQE, x: 320, y: 150 },
  { state: IBV_QPS_SQD, x: 450, y: 150 },
  { state: IBV_QPS_ERR, x: 190, y: 150 },
];

const PRIMARY = new Set([
  `${IBV_QPS_RESET}>${IBV_QPS_INIT}`,
  `${IBV_QPS_INIT}>${IBV_QPS_RTR}`,
  `${IBV_QPS_RTR}>${IBV_QPS_RTS}`,
  `${IBV_QPS_RTS}>${IBV_QPS_SQD}`,
  `${IBV_QPS_SQD}>${IBV_QPS_RTS}`,
  `${IBV_QPS_SQE}>${IBV_QPS_RTS}`,
  `${IBV_QPS_ERR}>${IBV_QPS_RESET}`,
]);

const node = (s: number) => NODES.find((n) => n.state === s)!;

/** A curve from one box's edge to another's, bent to one side so opposite edges do not overlap. */
function curve(a: GraphNode, b: GraphNode): { path: string; mid: { x: number; y: number } } {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const len = Math.hypot(dx, dy) || 1;
  const ux = dx / len;
  const uy = dy / len;
  // Leave the box along the direction of travel (clipped to the rectangle).
  const clip = (ux2: number, uy2: number) => {
    const tx = ux2 === 0 ? Infinity : NODE_W / 2 / Math.abs(ux2);
    const ty = uy2 === 0 ? Infinity : NODE_H / 2 / Math.abs(uy2);
    return Math.min(tx, ty) + 3;
  };
  const s = clip(ux, uy);
  const x1 = a.x + ux * s;
  const y1 = a.y + uy * s;
  const x2 = b.x - ux * s;
  const y2 = b.y - uy * s;
  const bend = len > 140 ? 28 : 12;
  const cx = (x1 + x2) / 2 - uy * bend;
  const cy = (y1 + y2) / 2 + ux * bend;
  const mid = { x: (x1 + 2 * cx + x2) / 4, y: (y1 + 2 * cy + y2) / 4 };
  return {
    path: `M${x1.toFixed(1)},${y1.toFixed(1)} Q${cx.toFixed(1)},${cy.toFixed(1)} ${x2.toFixed(1)},${y2.toFixed(1)}`,
    mid,
  };
}

/** Every legal transition between two different states, per the table. */
export const EDGES: GraphEdge[] = Object.entries(QP_TRANSITIONS).flatMap(([from, targets]) =>
  Object.keys(targets)
    .map(Number)
    .filter((to) => to !== Number(from))
    .map((to) => ({
      from: Number(from),
      to,
      primary: PRIMARY.has(`${from}>${to}`),
      ...curve(node(Number(from)), node(to)),
    })),
);
