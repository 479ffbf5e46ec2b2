import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import {
  IBV_LINK_LAYER_ETHERNET,
  IBV_LINK_LAYER_INFINIBAND,
  IBV_MTU_1024,
  IBV_MTU_4096,
  IBV_QPS_ERR,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_RC,
  IBV_QPT_UC,
  IBV_QPT_UD,
  IBV_QP_AV,
  IBV_QP_DEST_QPN,
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
  IBV_WC_LOC_QP_OP_ERR,
  IBV_WR_RDMA_READ,
  IBV_WR_SEND,
  IBV_ACCESS_LOCAL_WRITE,
} from "../verbs/constants.js";
import { goodModify, shortestPathsToEveryState } from "./qp-paths.js";
import { predictModify, predictPostSend, qpMachine, snapshotQpState } from "./qp.js";

const peer = { dgid: "fe80::1", dest_qp_num: 0x12 };
const rtr = goodModify(IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, peer)!;

describe("predictModify", () => {
  it("predicts the new state for a complete mask", () => {
    const p = predictModify(IBV_QPT_RC, IBV_QPS_INIT, rtr.attr, rtr.mask);
    expect(p).toMatchObject({ ok: true, from: IBV_QPS_INIT, to: IBV_QPS_RTR });
  });

  it("names the missing attributes on INIT → RTR", () => {
    const p = predictModify(IBV_QPT_RC, IBV_QPS_INIT, rtr.attr, rtr.mask & ~(IBV_QP_DEST_QPN | IBV_QP_RQ_PSN));
    expect(p.ok).toBe(false);
    if (p.ok) return;
    expect(p.code).toBe("EINVAL");
    expect(p.missing).toEqual(["IBV_QP_RQ_PSN", "IBV_QP_DEST_QPN"]);
    expect(p.reason).toMatch(/^INIT → RTR needs .*missing: IBV_QP_RQ_PSN, IBV_QP_DEST_QPN$/);
    expect(p.attribute).toBe("IBV_QP_RQ_PSN");
  });

  it("refuses an illegal transition and a bit the transition does not allow", () => {
    const p = predictModify(IBV_QPT_RC, IBV_QPS_RESET, { qp_state: IBV_QPS_RTS }, IBV_QP_STATE);
    expect(p).toMatchObject({ ok: false, code: "EINVAL", reason: "RESET → RTS is not a legal transition" });
    const q = predictModify(IBV_QPT_RC, IBV_QPS_INIT, rtr.attr, rtr.mask | IBV_QP_SQ_PSN);
    expect(q).toMatchObject({ ok: false, code: "EINVAL", notAllowed: ["IBV_QP_SQ_PSN"] });
  });

  it("fails ah_attr.is_global = 0 on RoCE with EINVAL, and accepts it on InfiniBand", () => {
    const attr = { ...rtr.attr, ah_attr: { ...rtr.attr.ah_attr, is_global: 0 } };
    const roce = predictModify(IBV_QPT_RC, IBV_QPS_INIT, attr, rtr.mask, { link_layer: IBV_LINK_LAYER_ETHERNET });
    expect(roce).toMatchObject({ ok: false, code: "EINVAL", attribute: "ah_attr.is_global" });
    const ib = predictModify(IBV_QPT_RC, IBV_QPS_INIT, attr, rtr.mask, { link_layer: IBV_LINK_LAYER_INFINIBAND });
    expect(ib.ok).toBe(true);
  });

  it("fails an sgid_index outside the GID table with ENODATA", () => {
    const attr = { ...rtr.attr, ah_attr: { ...rtr.attr.ah_attr, grh: { dgid: "fe80::1", sgid_index: 3 } } };
    const p = predictModify(IBV_QPT_RC, IBV_QPS_INIT, attr, rtr.mask, { gid_indices: [0, 1] });
    expect(p).toMatchObject({ ok: false, code: "ENODATA", attribute: "ah_attr.grh.sgid_index" });
  });

  it("warns (but succeeds) when path_mtu is above the active MTU, and fails above max_mtu", () => {
    const attr = { ...rtr.attr, path_mtu: IBV_MTU_4096 };
    const p = predictModify(IBV_QPT_RC, IBV_QPS_INIT, attr, rtr.mask, { active_mtu: IBV_MTU_1024, max_mtu: 5 });
    expect(p.ok).toBe(true);
    expect(p.warnings.map((w) => w.id)).toEqual(["path_mtu_above_active"]);
    const q = predictModify(IBV_QPT_RC, IBV_QPS_INIT, { ...rtr.attr, path_mtu: 6 }, rtr.mask, { max_mtu: 5 });
    expect(q).toMatchObject({ ok: false, code: "EINVAL", attribute: "path_mtu" });
  });

  it("warns about max_dest_rd_atomic 0 and a dest_qp_num that is no QP here", () => {
    const attr = { ...rtr.attr, max_dest_rd_atomic: 0, dest_qp_num: 0x99 };
    const p = predictModify(IBV_QPT_RC, IBV_QPS_INIT, attr, rtr.mask, { known_qpns: [0x11, 0x12] });
    expect(p.ok).toBe(true);
    expect(p.warnings.map((w) => w.id).sort()).toEqual(["dest_qp_num_unknown", "max_dest_rd_atomic_zero"]);
  });

  it("warns when the QP named by dest_qp_num points at a third QP", () => {
    const p = predictModify(IBV_QPT_RC, IBV_QPS_INIT, { ...rtr.attr, dest_qp_num: 0x12 }, rtr.mask, {
      qp_num: 0x11,
      peers: [{ qp_num: 0x12, dest_qp_num: 0x13 }],
    });
    expect(p.ok).toBe(true);
    expect(p.warnings.map((w) => w.id)).toEqual(["dest_qp_num_not_mutual"]);
    const q = predictModify(IBV_QPT_RC, IBV_QPS_INIT, { ...rtr.attr, dest_qp_num: 0x12 }, rtr.mask, {
      qp_num: 0x11,
      peers: [{ qp_num: 0x12, dest_qp_num: 0x11 }],
    });
    expect(q.warnings).toEqual([]);
  });

  it("uses the UD row (no AV needed for RTR)", () => {
    const m = goodModify(IBV_QPT_UD, IBV_QPS_INIT, IBV_QPS_RTR, peer)!;
    expect(m.mask & IBV_QP_AV).toBe(0);
    expect(predictModify(IBV_QPT_UD, IBV_QPS_INIT, m.attr, m.mask).ok).toBe(true);
  });
});

describe("predictPostSend", () => {
  const read = {
    opcode: IBV_WR_RDMA_READ,
    sg_list: [{ addr: 0, length: 8, lkey: 1 }],
    rdma: { remote_addr: 0, rkey: 1 },
  };
  it("warns that a READ to a peer with max_dest_rd_atomic 0 ends in REM_INV_REQ_ERR", () => {
    const w = predictPostSend(IBV_QPT_RC, [read], {
      max_rd_atomic: 1,
      peer: { max_dest_rd_atomic: 0, qp_access_flags: 7 },
    });
    expect(w.map((x) => x.id)).toEqual(["peer_max_dest_rd_atomic_zero"]);
  });
  it("warns that a READ from a QP with max_rd_atomic 0 never completes, and a READ without REMOTE_READ", () => {
    const w = predictPostSend(IBV_QPT_RC, [read], {
      max_rd_atomic: 0,
      peer: { max_dest_rd_atomic: 1, qp_access_flags: IBV_ACCESS_LOCAL_WRITE },
    });
    expect(w.map((x) => x.id)).toEqual(["max_rd_atomic_zero", "qp_access_no_remote_read"]);
  });
  it("says nothing about a SEND", () => {
    expect(predictPostSend(IBV_QPT_RC, [{ opcode: IBV_WR_SEND }], { max_rd_atomic: 0 })).toEqual([]);
  });
});

describe("the QP machine", () => {
  it("moves only on modifies the table accepts", () => {
    const a = createActor(qpMachine, { input: { qp_type: IBV_QPT_RC } }).start();
    expect(a.getSnapshot().value).toBe("RESET");
    a.send({ type: "MODIFY", attr: { qp_state: IBV_QPS_RTS }, mask: IBV_QP_STATE });
    expect(a.getSnapshot().value).toBe("RESET");
    a.send({ type: "MODIFY", ...goodModify(IBV_QPT_RC, IBV_QPS_RESET, IBV_QPS_INIT, peer)! });
    expect(a.getSnapshot().value).toBe("INIT");
    a.send({ type: "MODIFY", attr: rtr.attr, mask: rtr.mask & ~IBV_QP_DEST_QPN });
    expect(a.getSnapshot().value).toBe("INIT");
    a.send({ type: "MODIFY", ...rtr });
    expect(snapshotQpState(a.getSnapshot().value)).toBe(IBV_QPS_RTR);
  });

  it("goes to ERR on an error completion or a fatal event, and follows an observed state", () => {
    const a = createActor(qpMachine, { input: { qp_type: IBV_QPT_RC } }).start();
    a.send({ type: "OBSERVED", state: IBV_QPS_RTS });
    expect(a.getSnapshot().value).toBe("RTS");
    a.send({ type: "COMPLETION_ERROR", status: IBV_WC_LOC_QP_OP_ERR });
    expect(a.getSnapshot().value).toBe("ERR");
    expect(a.getSnapshot().context.lastCause).toContain("status 2");
    a.send({ type: "OBSERVED", state: IBV_QPS_INIT });
    a.send({ type: "FATAL" });
    expect(snapshotQpState(a.getSnapshot().value)).toBe(IBV_QPS_ERR);
  });

  it.each([IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD] as const)(
    "reaches every state but SQE by paths xstate/graph generates (type %i)",
    (qpType) => {
      const paths = shortestPathsToEveryState(qpType, peer);
      expect([...paths.keys()].sort()).toEqual(["ERR", "INIT", "RESET", "RTR", "RTS", "SQD"]);
      expect(paths.get("RTS")!.length).toBe(3);
    },
  );
});
