import { describe, expect, it } from "vitest";
import { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPT_UD } from "../../../../verbs/constants.js";
import { connection, pairQps } from "./oob.js";
import { qpView } from "./fixtures.test-util.js";
import type { DeviceView } from "./view.js";

const devices: DeviceView[] = [
  {
    handle: "ctx0",
    name: "rxe0",
    ports: [{ port_num: 1, state: 4, active_mtu: 3, link_layer: 2, gids: [{ index: 1, gid: "::ffff:10.0.0.1" }] }],
  },
];

describe("pairQps", () => {
  it("pairs QPs whose dest_qp_num names each other, ignoring UD", () => {
    const a = qpView(17, {}, { dest_qp_num: 18 });
    const u = qpView(20, { qp_type: IBV_QPT_UD });
    const b = qpView(18, {}, { dest_qp_num: 17 });
    expect(pairQps([a, u, b]).map(([x, y]) => [x.qp_num, y.qp_num])).toEqual([[17, 18]]);
  });
  it("pairs fresh RC QPs in creation order", () => {
    expect(pairQps([qpView(1), qpView(2), qpView(3)]).map(([x, y]) => [x.qp_num, y.qp_num])).toEqual([[1, 2]]);
  });
});

describe("connection", () => {
  const rtr = {
    qp_state: IBV_QPS_RTR,
    ah_attr: {
      ...qpView(0).query!.attr.ah_attr,
      grh: { dgid: "::ffff:10.0.0.1", flow_label: 0, sgid_index: 1, hop_limit: 1, traffic_class: 0 },
    },
  };
  it("agrees when each side names the other", () => {
    const a = qpView(
      17,
      { state: IBV_QPS_RTS },
      { ...rtr, qp_state: IBV_QPS_RTS, dest_qp_num: 18, sq_psn: 5, rq_psn: 9 },
    );
    const b = qpView(
      18,
      { state: IBV_QPS_RTS },
      { ...rtr, qp_state: IBV_QPS_RTS, dest_qp_num: 17, sq_psn: 9, rq_psn: 5 },
    );
    const c = connection(a, b, devices, []);
    expect(c.mismatches).toEqual([]);
    expect(c.a.gid).toBe("::ffff:10.0.0.1");
  });
  it("flags a dest_qp_num and a PSN that do not match the peer", () => {
    const a = qpView(
      17,
      { state: IBV_QPS_RTS },
      { ...rtr, qp_state: IBV_QPS_RTS, dest_qp_num: 99, sq_psn: 5, rq_psn: 9 },
    );
    const b = qpView(
      18,
      { state: IBV_QPS_RTS },
      { ...rtr, qp_state: IBV_QPS_RTS, dest_qp_num: 17, sq_psn: 7, rq_psn: 5 },
    );
    const m = connection(a, b, devices, []).mismatches;
    expect(m).toContainEqual({ field: "dest_qp_num", side: "a", expected: "18", actual: "99" });
    expect(m).toContainEqual({ field: "rq_psn", side: "a", expected: "7", actual: "9" });
    expect(m.filter((x) => x.side === "b")).toEqual([]);
  });
  it("says nothing about a side still in INIT", () => {
    const a = qpView(17, { state: IBV_QPS_INIT }, { qp_state: IBV_QPS_INIT });
    const b = qpView(18, { state: IBV_QPS_INIT }, { qp_state: IBV_QPS_INIT });
    expect(connection(a, b, devices, []).mismatches).toEqual([]);
  });
});
