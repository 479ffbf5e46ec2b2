import { describe, expect, it } from "vitest";
import { IBV_SEND_SIGNALED, IBV_WR_RDMA_READ, IBV_WR_RDMA_WRITE, IBV_WR_SEND } from "../verbs/constants.js";
import { createSimBackend } from "./index.js";
import { connectRc, makeEnd } from "./testing.js";

/** One scripted session; everything observable, as JSON. */
async function session(seed: number): Promise<string> {
  const b = createSimBackend({ seed });
  const a = makeEnd(b.openDevice("rxe0"));
  const z = makeEnd(b.openDevice("rxe1"));
  connectRc(a, z, { rnr_retry: 7, min_rnr_timer: 1 });
  connectRc(z, a, { min_rnr_timer: 1 });
  a.mr.bytes.set([1, 2, 3]);
  // An RNR wait, then the receive arrives later in virtual time.
  a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 3000)] });
  await b.sleep(20);
  z.qp.postRecv({ wr_id: 2, sg_list: [z.mr.sge(0, 4096)] });
  const wcs = await a.cq.pollWait(1, 1000);
  a.qp.postSend({
    wr_id: 3,
    opcode: IBV_WR_RDMA_WRITE,
    send_flags: IBV_SEND_SIGNALED,
    sg_list: [a.mr.sge(0, 100)],
    rdma: { remote_addr: z.mr.addr + 5000, rkey: z.mr.rkey },
  });
  a.qp.postSend({
    wr_id: 4,
    opcode: IBV_WR_RDMA_READ,
    send_flags: IBV_SEND_SIGNALED,
    sg_list: [a.mr.sge(4096, 100)],
    rdma: { remote_addr: z.mr.addr + 5000, rkey: z.mr.rkey },
  });
  wcs.push(...a.cq.poll(4), ...z.cq.poll(4));
  const seen = {
    devices: b.getDeviceList(),
    gids: [a.ctx.queryGidTable(), z.ctx.queryGidTable()],
    keys: [a.mr.lkey, a.mr.rkey, a.mr.addr, z.mr.lkey, z.mr.rkey, z.mr.addr],
    qpns: [a.qp.qp_num, z.qp.qp_num],
    wcs,
    packets: b.packets,
    counters: [a.ctx.queryCounters(), z.ctx.queryCounters()],
    bytes: Array.from(z.mr.bytes.subarray(0, 16)),
    now: b.now(),
  };
  return JSON.stringify(seen, (_k, v) => (typeof v === "bigint" ? `${v}n` : v));
}

describe("determinism", () => {
  it("the same seed and the same calls give byte-identical results", async () => {
    const one = await session(42);
    const two = await session(42);
    expect(two).toBe(one);
    expect(one).toContain("RC_ACKNOWLEDGE");
  });

  it("another seed gives other MACs, GUIDs, key bytes and addresses (but the same protocol)", async () => {
    const one = JSON.parse(await session(1));
    const two = JSON.parse(await session(2));
    expect(two.devices[0].node_guid).not.toBe(one.devices[0].node_guid);
    expect(two.keys).not.toEqual(one.keys);
    expect(two.packets.map((p: { opcode: string; psn: number }) => [p.opcode, p.psn])).toEqual(
      one.packets.map((p: { opcode: string; psn: number }) => [p.opcode, p.psn]),
    );
  });

  it("key formats: lkey = index << 8 | byte, first user MR index 2, indices never reused; QPNs from 0x11", () => {
    const b = createSimBackend({ seed: 3 });
    const ctx = b.openDevice("rxe1");
    const pd = ctx.allocPd();
    const m1 = pd.regMr(64, 0);
    const m2 = pd.regMr(64, 4);
    m1.dereg();
    const m3 = pd.regMr(64, 0);
    expect([m1.lkey >>> 8, m2.lkey >>> 8, m3.lkey >>> 8]).toEqual([2, 3, 4]);
    expect(m1.rkey).toBe(0);
    expect(m2.rkey).toBe(m2.lkey);
    const cq = ctx.createCq(1);
    const cap = { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    const q1 = pd.createQp({ send_cq: cq, recv_cq: cq, qp_type: 2, cap });
    q1.destroy();
    const q2 = pd.createQp({ send_cq: cq, recv_cq: cq, qp_type: 4, cap });
    expect([q1.qp_num, q2.qp_num]).toEqual([0x11, 0x12]);
  });
});
