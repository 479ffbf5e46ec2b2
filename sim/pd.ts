/** struct ibv_pd: owns MRs, QPs and AHs, and refuses to go while any is alive (EBUSY). */
import type { Pd } from "../verbs/backend.js";
import { fail } from "../verbs/errors.js";
import type { AhAttr, QpInitAttr } from "../verbs/types.js";
import { SimAh } from "./ah.js";
import { alive } from "./check.js";
import type { SimContext } from "./context.js";
import { SimMr, regMr } from "./mr.js";
import { SimQp, createQp } from "./qp.js";
import { because } from "../verbs/verb-failure.js";

export class SimPd implements Pd {
  destroyed = false;
  /** Live children: MRs, QPs, AHs. */
  mrCount = 0;
  qpCount = 0;
  ahCount = 0;

  constructor(readonly context: SimContext) {}

  regMr(memory: ArrayBuffer | ArrayBufferView | number, access: number): SimMr {
    alive("ibv_reg_mr", "PD", this);
    return regMr(this, memory, access);
  }

  createQp(init: QpInitAttr): SimQp {
    alive("ibv_create_qp", "PD", this);
    return createQp(this, init);
  }

  createAh(attr: Partial<Omit<AhAttr, "grh">> & { grh?: Partial<AhAttr["grh"]> }): SimAh {
    alive("ibv_create_ah", "PD", this);
    return new SimAh(this, attr);
  }

  dealloc(): void {
    alive("ibv_dealloc_pd", "PD", this);
    if (this.mrCount || this.qpCount || this.ahCount)
      fail(
        "ibv_dealloc_pd",
        "EBUSY",
        because({ kind: "pd-busy", mrs: this.mrCount, qps: this.qpCount, ahs: this.ahCount }, { attribute: "pd" }),
      );
    this.destroyed = true;
  }
}
