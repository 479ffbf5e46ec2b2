/** The packet log is a ring: once it holds MAX_LOG packets each new one replaces the oldest, at the same cost as before. */
import { describe, expect, it } from "vitest";
import { IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE } from "../verbs/constants.js";
import { createSimBackend } from "./index.js";
import { connectRc, makeEnd } from "./testing.js";
import { MAX_LOG } from "./world.js";

describe("packet log ring", () => {
  it("keeps the last MAX_LOG packets in order, and a full log costs no more per packet than an empty one", () => {
    const b = createSimBackend({ seed: 2, packetLog: true });
    const a = makeEnd(b.openDevice("rxe0"));
    const z = makeEnd(b.openDevice("rxe1"));
    connectRc(a, z);
    connectRc(z, a);
    // Signaled and polled: on the timed wire a WQE's slot is free once its ACK has arrived.
    const write = () => {
      a.qp.postSend({
        wr_id: 1,
        opcode: IBV_WR_RDMA_WRITE,
        send_flags: IBV_SEND_SIGNALED,
        sg_list: [a.mr.sge(0, 8192)],
        rdma: { remote_addr: z.mr.addr, rkey: z.mr.rkey },
      });
      a.cq.poll(1);
    };
    const logged = () => {
      const p = b.packets;
      return p.length ? p[p.length - 1]!.seq + 1 : 0;
    };
    /** Writes per second over `n` writes (each logs the same packets; the log is not read meanwhile). */
    const rate = (n: number) => {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) write();
      return n / ((performance.now() - t0) / 1000);
    };
    const empty = rate(2000);
    while (logged() < MAX_LOG) for (let i = 0; i < 1000; i++) write();
    const full = rate(2000);
    // Trimming the front of an array per packet made a full log 4-11k packets/s, against ~700k.
    expect(full).toBeGreaterThan(empty / 4);

    const p = b.packets;
    expect(p).toHaveLength(MAX_LOG);
    const total = logged();
    expect(p[0]!.seq).toBe(total - MAX_LOG);
    expect(p.every((e, i) => i === 0 || e.seq === p[i - 1]!.seq + 1)).toBe(true);
    b.clearPackets();
    expect(b.packets).toHaveLength(0);
    write();
    expect(b.packets[0]!.seq).toBe(total);
  }, 60_000);
});
