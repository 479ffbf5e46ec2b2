import { describe, expect, it } from "vitest";
import {
  IBV_SEND_SIGNALED,
  IBV_WR_ATOMIC_FETCH_AND_ADD,
  IBV_WR_RDMA_READ,
  IBV_WR_RDMA_WRITE_WITH_IMM,
  IBV_WR_SEND,
} from "../verbs/constants.js";
import { createSimBackend } from "./index.js";
import { connectRc, makeEnd } from "./testing.js";
import { formatGid, parseGid } from "./gid.js";

function pair(packetLog = true) {
  const b = createSimBackend({ packetLog });
  const a = makeEnd(b.openDevice("rxe0"));
  const z = makeEnd(b.openDevice("rxe1"));
  connectRc(a, z, { min_rnr_timer: 14, rnr_retry: 7 });
  connectRc(z, a, { min_rnr_timer: 14 });
  return { b, a, z };
}

describe("packet log", () => {
  it("logs each packet with opcode name, PSN, QPNs and headers", async () => {
    const { b, a, z } = pair();
    z.qp.postRecv({ wr_id: 1, sg_list: [z.mr.sge(0, 4096)] });
    a.qp.postSend({
      wr_id: 9,
      opcode: IBV_WR_RDMA_WRITE_WITH_IMM,
      imm_data: 0xdeadbeef,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [a.mr.sge(0, 1500)],
      rdma: { remote_addr: z.mr.addr, rkey: z.mr.rkey },
    });
    a.qp.postSend({
      wr_id: 10,
      opcode: IBV_WR_RDMA_READ,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [a.mr.sge(0, 2000)],
      rdma: { remote_addr: z.mr.addr, rkey: z.mr.rkey },
    });
    a.qp.postSend({
      wr_id: 11,
      opcode: IBV_WR_ATOMIC_FETCH_AND_ADD,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [a.mr.sge(0, 8)],
      atomic: { remote_addr: z.mr.addr + 8, rkey: z.mr.rkey, compare_add: 3n },
    });
    // Logged as they go onto the wire (a capture on veth0 sees them then): the FETCH_ADD waits
    // for the READ's credit (max_rd_atomic 1), and no answer has come back yet.
    expect(b.packets.map((p) => p.opcode)).toEqual([
      "RC_RDMA_WRITE_FIRST",
      "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
      "RC_RDMA_READ_REQUEST",
    ]);
    await b.sleep(20);
    const lines = b.packets.map((p) => [p.src, p.dst, p.opcode, p.psn]);
    expect(lines).toEqual([
      ["rxe0", "rxe1", "RC_RDMA_WRITE_FIRST", 0],
      ["rxe0", "rxe1", "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", 1],
      ["rxe0", "rxe1", "RC_RDMA_READ_REQUEST", 2],
      ["rxe1", "rxe0", "RC_ACKNOWLEDGE", 1],
      ["rxe1", "rxe0", "RC_RDMA_READ_RESPONSE_FIRST", 2],
      ["rxe1", "rxe0", "RC_RDMA_READ_RESPONSE_LAST", 3],
      ["rxe0", "rxe1", "RC_FETCH_ADD", 4],
      ["rxe1", "rxe0", "RC_ATOMIC_ACKNOWLEDGE", 4],
    ]);
    const [first, last, , ack] = b.packets;
    expect(first.reth).toEqual({ va: z.mr.addr, rkey: z.mr.rkey, len: 1500 });
    expect(first.wr_id).toBe(9);
    expect(first.src_qpn).toBe(a.qp.qp_num);
    expect(first.dest_qpn).toBe(z.qp.qp_num);
    expect(first.payload_len).toBe(1024);
    expect(last.imm_data).toBe(0xdeadbeef);
    expect(last.ack_req).toBe(true);
    expect(ack.aeth?.text).toBe("ACK");
    expect(b.packets[6].atomic_eth?.swap_add).toBe(3n);
    expect(b.packets[7].atomic_ack_eth?.orig).toBe(0n);
  });

  it("shows RNR NAKs with the responder's timer, and drops with their reason", async () => {
    const { b, a, z } = pair();
    a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 8)] });
    await b.sleep(1);
    expect(b.packets[1].aeth?.text).toBe("RNR NAK (timer 14)");
    await b.sleep(4);
    expect(b.packets.length).toBe(2);
    await b.sleep(5);
    expect(b.packets.length).toBeGreaterThan(2);
    // Each is logged as it is sent: the SEND at 0, the NAK once the SEND has crossed the wire
    // (sim/wire.ts), the retried SEND once the NAK has crossed back and the RNR wait (1.28 ms
    // → 1 jiffy, plus a tick) is over.
    const w = b.wire;
    const oneWay = (payload: number) =>
      (w.perPacketNs + Math.round(((payload + w.headerBytes) * 8) / w.gbps) + w.latencyNs) / 1e6;
    expect(b.packets[0].time).toBe(0);
    expect(b.packets[1].time).toBeCloseTo(oneWay(8), 9);
    // The wait itself: 1.28 ms as jiffies on Linux's timer wheel (clock.ts timerFireAt), 4–8 ms.
    const wait = b.packets[2].time - (oneWay(8) + oneWay(0));
    expect(wait).toBeGreaterThanOrEqual(4);
    expect(wait).toBeLessThanOrEqual(8);
    z.qp.destroy();
    await b.sleep(50);
    expect(b.packets.some((p) => p.dropped?.startsWith("no QP"))).toBe(true);
  });

  it("is empty when turned off, and the traffic is the same", () => {
    const { b, a, z } = pair(false);
    z.qp.postRecv({ wr_id: 1, sg_list: [z.mr.sge(0, 64)] });
    a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 8)] });
    expect(a.cq.poll(1)).toHaveLength(1);
    expect(b.packets).toHaveLength(0);
    expect(a.ctx.queryCounters().sent_pkts).toBe(1);
    expect(z.ctx.queryCounters().sent_pkts).toBe(1);
  });
});

describe("GID text", () => {
  it("parses and prints IPv6 and IPv4-mapped GIDs canonically", () => {
    for (const t of ["fe80::1", "::ffff:10.77.0.1", "::", "2001:db8::1:0:0:1", "fe80::a82d:d8ff:fe5b:6312"])
      expect(formatGid(parseGid(t)!)).toBe(t);
    expect(parseGid("fe80:::1")).toBeNull();
    expect(parseGid("::ffff:300.1.1.1")).toBeNull();
  });
});
