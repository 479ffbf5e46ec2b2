import { describe, expect, it } from "vitest";
import {
  IBV_SEND_SIGNALED,
  IBV_WC_SUCCESS,
  IBV_WR_RDMA_READ,
  IBV_WR_RDMA_WRITE,
  IBV_WR_SEND,
} from "../verbs/constants.js";
import { createSimBackend } from "./index.js";
import { ALL_ACCESS, connectRc, makeEnd } from "./testing.js";

/** Multi-packet WRITEs are copied as blocks; these check the bytes are exactly what per-packet copies give. */
describe("RDMA WRITE data", () => {
  it("a 64 KiB WRITE followed in the same post by a SEND of the written bytes delivers the new bytes", () => {
    const b = createSimBackend({ packetLog: false });
    const a = makeEnd(b.openDevice("rxe0"));
    const z = makeEnd(b.openDevice("rxe1"));
    connectRc(a, z);
    connectRc(z, a);
    const src = a.pd.regMr(65536, ALL_ACCESS);
    const dst = z.pd.regMr(65536, ALL_ACCESS);
    for (let i = 0; i < src.length; i++) src.bytes[i] = (i * 7) & 0xff;
    a.qp.postRecv({ wr_id: 5, sg_list: [a.mr.sge(0, 4096)] });
    z.qp.postSend({ wr_id: 6, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [dst.sge(60000, 100)] });
    // z's SEND waits for nothing; now the WRITE lands and a second SEND reads it back.
    a.qp.postRecv({ wr_id: 7, sg_list: [a.mr.sge(4096, 4096)] });
    a.qp.postSend([
      {
        wr_id: 1,
        opcode: IBV_WR_RDMA_WRITE,
        send_flags: IBV_SEND_SIGNALED,
        sg_list: [src.sge()],
        rdma: { remote_addr: dst.addr, rkey: dst.rkey },
      },
      // In the same instant: READ back what the WRITE just wrote.
      {
        wr_id: 2,
        opcode: IBV_WR_RDMA_READ,
        send_flags: IBV_SEND_SIGNALED,
        sg_list: [a.mr.sge(6000, 100)],
        rdma: { remote_addr: dst.addr + 60000, rkey: dst.rkey },
      },
    ]);
    // Nothing has crossed the wire before a poll: the READ's target still holds its old bytes.
    expect(Array.from(a.mr.bytes.subarray(6000, 6100))).not.toEqual(Array.from(src.bytes.subarray(60000, 60100)));
    const first = a.cq.poll(8);
    expect(Array.from(a.mr.bytes.subarray(6000, 6100))).toEqual(Array.from(src.bytes.subarray(60000, 60100)));
    z.qp.postSend({ wr_id: 8, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [dst.sge(60000, 100)] });
    expect(Buffer.from(dst.bytes).equals(Buffer.from(src.bytes))).toBe(true);
    const all = [...first, ...a.cq.poll(8)];
    expect(all.length).toBeGreaterThan(first.length);
    expect(all.every((w) => w.status === IBV_WC_SUCCESS)).toBe(true);
    expect(Array.from(a.mr.bytes.subarray(4096, 4196))).toEqual(Array.from(src.bytes.subarray(60000, 60100)));
    expect(a.mr.bytes[0]).toBe(0); // the first SEND went out before the WRITE
  });

  it("WRITEs of one post that overwrite each other's sources or read each other's targets land in order", () => {
    const b = createSimBackend({ packetLog: false });
    const a = makeEnd(b.openDevice("rxe0"));
    const z = makeEnd(b.openDevice("rxe1"));
    connectRc(a, z);
    connectRc(z, a);
    // Three buffers, each registered on both sides (so a WRITE can read one a later WRITE writes).
    const K = 20_000; // not a multiple of the MTU: the window's edge splits WRITEs unevenly
    const bufs = [0, 1, 2].map((k) => Uint8Array.from({ length: 3 * K }, (_, i) => (i * (k + 3)) & 0xff));
    const src = bufs.map((x) => a.pd.regMr(x, ALL_ACCESS));
    const dst = bufs.map((x) => z.pd.regMr(x, ALL_ACCESS));
    const write = (from: number, fromOff: number, to: number, toOff: number, wr_id: number) => ({
      wr_id,
      opcode: IBV_WR_RDMA_WRITE,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [src[from].sge(fromOff, K)],
      rdma: { remote_addr: dst[to].addr + toOff, rkey: dst[to].rkey },
    });
    const plan: [number, number, number, number][] = [
      [0, 0, 1, 0], // buffer 0 → 1
      [2, 0, 0, 0], // then overwrite what the first WRITE read
      [1, 0, 2, K], // then read what the first WRITE wrote
      [0, 0, 1, K], // and what the second wrote
      [1, K, 0, 2 * K],
    ];
    const expected = bufs.map((x) => x.slice());
    for (const [f, fo, t, to] of plan) expected[t].set(expected[f].slice(fo, fo + K), to);
    a.qp.postSend(plan.map(([f, fo, t, to], i) => write(f, fo, t, to, i)));
    expect(a.cq.poll(8).map((w) => w.status)).toEqual(plan.map(() => IBV_WC_SUCCESS));
    for (let k = 0; k < 3; k++) expect(Buffer.from(bufs[k]).equals(Buffer.from(expected[k])), `buffer ${k}`).toBe(true);
  });

  it("a loopback WRITE within one buffer behaves like packet-by-packet copies (overlap)", () => {
    const b = createSimBackend({ packetLog: false });
    const ctx = b.openDevice("rxe0");
    const a = makeEnd(ctx);
    const z = makeEnd(ctx);
    connectRc(a, z);
    connectRc(z, a);
    const buf = new Uint8Array(8192);
    for (let i = 0; i < 4096; i++) buf[i] = i & 0xff;
    const mrA = a.pd.regMr(buf, ALL_ACCESS);
    const mrZ = z.pd.regMr(buf, ALL_ACCESS);
    // Source [0, 3000) to destination [1024, 4024): packet k reads bytes packet k-1 already wrote.
    a.qp.postSend({
      wr_id: 1,
      opcode: IBV_WR_RDMA_WRITE,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [mrA.sge(0, 3000)],
      rdma: { remote_addr: mrZ.addr + 1024, rkey: mrZ.rkey },
    });
    const expected = new Uint8Array(8192);
    for (let i = 0; i < 4096; i++) expected[i] = i & 0xff;
    for (let p = 0; p < 3000; p += 1024) {
      const n = Math.min(1024, 3000 - p);
      expected.set(expected.slice(p, p + n), 1024 + p);
    }
    expect(Buffer.from(buf).equals(Buffer.from(expected))).toBe(true);
  });
});
