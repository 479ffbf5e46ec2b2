import { describe, expect, it } from "vitest";
import { IBV_QPS_ERR, IBV_QPS_INIT, IBV_QPS_RESET, IBV_QPS_RTS } from "../../../../verbs/constants.js";
import { legalTargets } from "../../../../verbs/qp-transitions.js";
import { EDGES, NODES } from "./qp-graph.js";

describe("the diagram's geometry", () => {
  it("has one node per state and an edge for every legal transition in the table", () => {
    expect(NODES.map((n) => n.state).sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    for (const n of NODES)
      for (const to of legalTargets(n.state).filter((t) => t !== n.state))
        expect(EDGES.some((e) => e.from === n.state && e.to === to)).toBe(true);
  });
  it("draws no illegal edge", () => {
    expect(EDGES.some((e) => e.from === IBV_QPS_RESET && e.to === IBV_QPS_RTS)).toBe(false);
    expect(EDGES.find((e) => e.from === IBV_QPS_RESET && e.to === IBV_QPS_INIT)?.primary).toBe(true);
    expect(EDGES.find((e) => e.from === IBV_QPS_RTS && e.to === IBV_QPS_ERR)?.primary).toBe(false);
  });
});
