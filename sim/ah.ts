/** struct ibv_ah: a resolved address for UD sends. */
import type { Ah } from "../verbs/backend.js";
import { alive } from "./check.js";
import { checkAvPort, resolveAv, type ResolvedAv } from "./av.js";
import type { SimPd } from "./pd.js";

export class SimAh implements Ah {
  destroyed = false;
  readonly av: ResolvedAv;

  constructor(
    readonly pd: SimPd,
    attr: unknown,
  ) {
    const ctx = pd.context;
    checkAvPort("ibv_create_ah", attr, "ah_attr");
    this.av = resolveAv(ctx.world, ctx.dev, attr, "ibv_create_ah", "ah_attr", true);
    pd.ahCount++;
  }

  destroy(): void {
    alive("ibv_destroy_ah", "AH", this);
    this.destroyed = true;
    this.pd.ahCount--;
  }
}
