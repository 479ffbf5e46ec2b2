/**
 * The "generic" device profile answers differently from rxe wherever the verbs specification
 * lets a device choose, and the default stays rxe's in every one of those answers.
 */
import { describe, expect, it } from "vitest";
import {
  IBV_QPT_RC,
  IBV_SEND_SIGNALED,
  IBV_WC_GRH,
  IBV_WC_RECV,
  IBV_WC_SUCCESS,
  IBV_WC_WR_FLUSH_ERR,
  IBV_WR_SEND,
  IBV_QPS_ERR,
  IBV_QP_STATE,
} from "../verbs/constants.js";
import { readCounter, RXE_COUNTER_NAMES } from "../verbs/types.js";
import { createSimBackend, type SimProfileName } from "./index.js";
import { connectRc, makeEnd } from "./testing.js";

/** One RC SEND from rxe0 to rxe1 and a flushed receive: what a lesson looks at, per profile. */
function observe(profile?: SimProfileName) {
  const b = createSimBackend(profile === undefined ? {} : { profile });
  const c0 = b.openDevice("rxe0");
  const pd = c0.allocPd();
  const cq = c0.createCq(16);
  const qp = pd.createQp({
    send_cq: cq,
    recv_cq: cq,
    qp_type: IBV_QPT_RC,
    cap: { max_send_wr: 10, max_recv_wr: 5, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
  });
  const a = makeEnd(c0);
  const z = makeEnd(b.openDevice("rxe1"));
  connectRc(a, z);
  connectRc(z, a);
  z.qp.postRecv([{ wr_id: 2, sg_list: [z.mr.sge(0, 64)] }]);
  a.qp.postSend([{ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 8)] }]);
  const recv = z.cq.poll(4).find((wc) => wc.opcode === IBV_WC_RECV)!;
  // A receive flushed by the move to ERR: an error completion.
  z.qp.postRecv([{ wr_id: 3, sg_list: [z.mr.sge(0, 64)] }]);
  z.qp.modify({ qp_state: IBV_QPS_ERR }, IBV_QP_STATE);
  const flushed = z.cq.poll(4).find((wc) => wc.wr_id === 3)!;
  return {
    driver: c0.device.driver,
    cqe: cq.cqe,
    createSendWr: qp.cap.max_send_wr,
    querySendWr: qp.query().attr.cap.max_send_wr,
    inline: qp.query().attr.cap.max_inline_data,
    recv,
    flushed,
    counters: c0.queryCounters(),
    device: c0.device,
  };
}

describe("sim device profiles", () => {
  it("the default is rxe: its rounding, inline size, GRH on RC receives, zeroed error completions, its counters", () => {
    const o = observe();
    expect(o).toMatchObject({ driver: "rxe", cqe: 31, createSendWr: 10, querySendWr: 15, inline: 16 });
    expect(o.recv.status).toBe(IBV_WC_SUCCESS);
    expect(o.recv.wc_flags & IBV_WC_GRH).toBe(IBV_WC_GRH);
    expect(o.flushed).toMatchObject({ status: IBV_WC_WR_FLUSH_ERR, opcode: 0, byte_len: 0 });
    expect(Object.keys(o.counters)).toEqual([...RXE_COUNTER_NAMES]);
    expect(readCounter(o.counters, o.device, "sent_pkts")).toBe(o.counters.sent_pkts);
    expect(createSimBackend({ profile: "rxe" }).getDeviceList()).toEqual(createSimBackend().getDeviceList());
    const c = createSimBackend().openDevice("rxe0");
    expect(c.queryDevice()).toMatchObject({ max_qp_wr: 1048576, max_sge: 32 });
    expect(c.queryPort(1).active_mtu).toBe(3);
  });

  it("generic: powers of two, the real depth written back, another max_inline_data, no GRH on RC, a non-zero error opcode, mlx5's counter names", () => {
    const o = observe("generic");
    expect(o).toMatchObject({ driver: "generic", cqe: 16, createSendWr: 16, querySendWr: 16, inline: 28 });
    expect(o.recv.status).toBe(IBV_WC_SUCCESS);
    expect(o.recv.wc_flags & IBV_WC_GRH).toBe(0);
    expect(o.flushed.status).toBe(IBV_WC_WR_FLUSH_ERR);
    expect(o.flushed.opcode).not.toBe(0);
    expect(o.counters.sent_pkts).toBeUndefined();
    expect(o.counters.port_xmit_packets).toBeGreaterThan(0);
    expect(readCounter(o.counters, o.device, "sent_pkts")).toBe(o.counters.port_xmit_packets);
    // A NIC's own limits and a jumbo-frame netdev: lessons compare logs with these answers.
    const c = createSimBackend({ profile: "generic" }).openDevice("rxe0");
    expect(c.queryDevice()).toMatchObject({ max_qp_wr: 32768, max_sge: 30 });
    expect(c.queryPort(1).active_mtu).toBe(5);
    // rxe's ack_deferred has no mlx5 counterpart: the device has none of that name.
    expect(readCounter(o.counters, o.device, "ack_deferred")).toBeUndefined();
  });

  it("refuses an unknown profile, naming the ones there are", () => {
    expect(() => createSimBackend({ profile: "mlx9" as SimProfileName })).toThrow(/rxe, generic/);
  });
});
