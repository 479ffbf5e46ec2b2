/** struct ibv_pd: owns MRs, QPs and AHs, and refuses to go while any is alive (EBUSY). */
import type { Pd } from "../verbs/backend.js";
import { fail } from "../verbs/errors.js";
import type { AhAttr, QpInitAttr } from "../verbs/types.js";
import { SimAh } from "./ah.js";
import { alive } from "./check.js";
import type { SimContext } from "./context.js";
import { SimMr, regMr } from "./mr.js";
import { SimQp, createQp } from "./qp.js";

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
    const busy: string[] = [];
    if (this.mrCount) busy.push(`${this.mrCount} MR(s)`);
    if (this.qpCount) busy.push(`${this.qpCount} QP(s)`);
    if (this.ahCount) busy.push(`${this.ahCount} AH(s)`);
    if (busy.length)
      fail("ibv_dealloc_pd", "EBUSY", {
        reason: `the PD still has ${busy.join(", ")}; destroy them first`,
        attribute: "pd",
      });
    this.destroyed = true;
  }
}
