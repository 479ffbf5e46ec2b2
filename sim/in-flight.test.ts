import { describe, expect, it } from "vitest";
import { IBV_QP_SQ_PSN, IBV_SEND_SIGNALED, IBV_WC_SUCCESS, IBV_WR_RDMA_WRITE } from "../verbs/constants.js";
import { createSimBackend } from "./index.js";
import { ALL_ACCESS, connectRc, makeEnd } from "./testing.js";

/**
 * rxe_requester stops with more than RXE_INFLIGHT_SKBS_PER_QP_HIGH (64) of its packets not
 * yet received, and goes on once fewer than 16 are left (sim/RXE-FACTS.md §12). 128 packets
 * fit the PSN window (128), so only the in-flight limit stops the requester at 65.
 */
describe("the requester's in-flight limit (rxe_req.c skb_out)", () => {
  for (const packetLog of [true, false])
    it(`between the devices, 65 packets leave at once, the rest as the first arrive (log ${packetLog ? "on" : "off"})`, async () => {
      const b = createSimBackend({ packetLog });
      const a = makeEnd(b.openDevice("rxe0"));
      const z = makeEnd(b.openDevice("rxe1"));
      connectRc(a, z);
      connectRc(z, a);
      const src = a.pd.regMr(4 * 32768, ALL_ACCESS);
      const dst = z.pd.regMr(4 * 32768, ALL_ACCESS);
      const sq0 = a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn;
      for (let i = 0; i < 4; i++)
        a.qp.postSend({
          wr_id: i,
          opcode: IBV_WR_RDMA_WRITE,
          send_flags: IBV_SEND_SIGNALED,
          sg_list: [src.sge(i * 32768, 32768)],
          rdma: { remote_addr: dst.addr + i * 32768, rkey: dst.rkey },
        });
      const sent = () => (a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn - sq0) & 0xffffff;
      expect(sent()).toBe(65);
      expect(a.ctx.queryCounters().sent_pkts).toBe(65);
      // Once the 50th has arrived (15 left), the requester sends 50 more: packet 50 is the 18th
      // of the second WRITE, so the link has held 50 packets and one message's work before it.
      const w = b.wire;
      const hold = w.perPacketNs + Math.round(((1024 + w.headerBytes) * 8) / w.gbps);
      const arrival50 = (50 * hold + w.perMessageNs + w.latencyNs) / 1e6;
      await b.sleep(arrival50 - 0.001);
      expect(sent()).toBe(65);
      await b.sleep(0.002);
      expect(sent()).toBe(115);
      const wcs = await a.cq.pollWait(4, 10_000);
      expect(wcs.map((w) => [w.wr_id, w.status])).toEqual([0, 1, 2, 3].map((i) => [i, IBV_WC_SUCCESS]));
      expect(sent()).toBe(128);
    });

  it("one device's packets to itself never count (rxe_loopback): 128 leave one after the other, none held back", async () => {
    const b = createSimBackend({ packetLog: false });
    const ctx = b.openDevice("rxe0");
    const a = makeEnd(ctx);
    const z = makeEnd(ctx);
    connectRc(a, z);
    connectRc(z, a);
    const src = a.pd.regMr(4 * 32768, ALL_ACCESS);
    const dst = z.pd.regMr(4 * 32768, ALL_ACCESS);
    for (let i = 0; i < 4; i++)
      a.qp.postSend({
        wr_id: i,
        opcode: IBV_WR_RDMA_WRITE,
        send_flags: IBV_SEND_SIGNALED,
        sg_list: [src.sge(i * 32768, 32768)],
        rdma: { remote_addr: dst.addr + i * 32768, rkey: dst.rkey },
      });
    expect((await a.cq.pollWait(4, 10_000)).map((w) => w.status)).toEqual([0, 0, 0, 0]);
    expect(a.ctx.queryCounters().sent_pkts).toBe(128 + 4); // the WRITEs, and z's 4 ACKs on the same device
  });
});
