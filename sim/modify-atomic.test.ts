/** A failed ibv_modify_qp changes nothing: every attribute is read once and checked before any is stored. */
import { describe, expect, it } from "vitest";
import {
  IBV_QPS_INIT,
  IBV_QPS_RTR,
  IBV_QPT_RC,
  IBV_QP_AV,
  IBV_QP_DEST_QPN,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_PATH_MTU,
  IBV_QP_RQ_PSN,
  IBV_QP_STATE,
} from "../verbs/constants.js";
import { goodModify } from "../state-machines/qp-paths.js";
import { createSimBackend } from "./index.js";
import { makeEnd } from "./testing.js";

function initQp() {
  const b = createSimBackend({ seed: 8 });
  const ctx = b.openDevice("rxe0");
  const a = makeEnd(ctx);
  const z = makeEnd(b.openDevice("rxe1"));
  const peer = { dgid: ctx.queryGid(1, 0), dest_qp_num: z.qp.qp_num };
  const init = goodModify(IBV_QPT_RC, 0, IBV_QPS_INIT, peer)!;
  a.qp.modify(init.attr, init.mask);
  const rtr = goodModify(IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, peer)!;
  return { qp: a.qp, rtr };
}

describe("ibv_modify_qp is all or nothing", () => {
  it("a wrongly typed attribute (min_rnr_timer: '12') leaves path_mtu, rq_psn and the AV as they were", () => {
    const { qp, rtr } = initQp();
    const before = qp.query().attr;
    const attr = { ...rtr.attr, path_mtu: 3, rq_psn: 0x1234, min_rnr_timer: "12" };
    expect(() => qp.modify(attr as never, rtr.mask | IBV_QP_MIN_RNR_TIMER)).toThrow(TypeError);
    expect(qp.query().attr).toEqual(before);
    // The same call with the right type then works.
    qp.modify({ ...attr, min_rnr_timer: 12 }, rtr.mask | IBV_QP_MIN_RNR_TIMER);
    expect(qp.query().attr).toMatchObject({ qp_state: IBV_QPS_RTR, path_mtu: 3, rq_psn: 0x1234, min_rnr_timer: 12 });
  });

  it("a getter is read once: it cannot pass the range check with one value and store another", () => {
    const { qp, rtr } = initQp();
    let reads = 0;
    const attr = { ...rtr.attr };
    Object.defineProperty(attr, "path_mtu", {
      enumerable: true,
      get: () => (reads++ === 0 ? 3 : 1_000_000),
    });
    qp.modify(attr, rtr.mask);
    expect(reads).toBe(1);
    expect(qp.query().attr.path_mtu).toBe(3);
  });

  it("an AV that fails after other fields were checked changes nothing", () => {
    const { qp, rtr } = initQp();
    const before = qp.query().attr;
    const attr = { ...rtr.attr, ah_attr: { ...rtr.attr.ah_attr, grh: { dgid: "not a gid", sgid_index: 0 } } };
    expect(() =>
      qp.modify(
        attr as never,
        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC,
      ),
    ).toThrow();
    expect(qp.query().attr).toEqual(before);
  });
});
