/** sim/RXE-FACTS.md §4.1: atomics return the original remote value; byte_len is the SGE length. */
import { describe, expect, it } from "vitest";
import {
  IBV_WC_COMP_SWAP,
  IBV_WC_FETCH_ADD,
  IBV_WC_SUCCESS,
  IBV_WR_ATOMIC_CMP_AND_SWP,
  IBV_WR_ATOMIC_FETCH_AND_ADD,
} from "../constants.js";
import type { Mr } from "../backend.js";
import { CROSS, LOOPBACK, type Endpoint, pair, scope, suite, waitWc } from "./harness.js";

const u64 = (mr: Mr, off: number) => new DataView(mr.bytes.buffer, mr.bytes.byteOffset).getBigUint64(off, true);
const setU64 = (mr: Mr, off: number, v: bigint) =>
  new DataView(mr.bytes.buffer, mr.bytes.byteOffset).setBigUint64(off, v, true);

function fetchAdd(a: Endpoint, b: Endpoint, add: bigint, local = 0, len = 8) {
  a.qp.postSend({
    wr_id: 1,
    opcode: IBV_WR_ATOMIC_FETCH_AND_ADD,
    sg_list: [a.mr.sge(local, len)],
    atomic: { remote_addr: b.mr.addr + 64, rkey: b.mr.rkey, compare_add: add },
  });
}
function cmpSwap(a: Endpoint, b: Endpoint, compare: bigint, swap: bigint) {
  a.qp.postSend({
    wr_id: 2,
    opcode: IBV_WR_ATOMIC_CMP_AND_SWP,
    sg_list: [a.mr.sge(0, 8)],
    atomic: { remote_addr: b.mr.addr + 64, rkey: b.mr.rkey, compare_add: compare, swap },
  });
}

suite("Atomics (§4.1)", () => {
  for (const p of [LOOPBACK, CROSS]) {
    describe(p.name, () => {
      it("FETCH_ADD +5 on 100: local gets 100, remote becomes 105; WC FETCH_ADD, byte_len 8", async () => {
        const s = scope();
        const { a, b } = pair(s, p);
        setU64(b.mr, 64, 100n);
        fetchAdd(a, b, 5n);
        expect((await waitWc(a.scq))[0]).toMatchObject({
          status: IBV_WC_SUCCESS,
          opcode: IBV_WC_FETCH_ADD,
          byte_len: 8,
          wc_flags: 0,
        });
        expect(u64(a.mr, 0)).toBe(100n);
        expect(u64(b.mr, 64)).toBe(105n);
      });

      it("CMP_AND_SWP matching (105 → 7): local gets 105, remote 7; non-matching leaves 7 and returns 7", async () => {
        const s = scope();
        const { a, b } = pair(s, p);
        setU64(b.mr, 64, 105n);
        cmpSwap(a, b, 105n, 7n);
        expect((await waitWc(a.scq))[0]).toMatchObject({
          status: IBV_WC_SUCCESS,
          opcode: IBV_WC_COMP_SWAP,
          byte_len: 8,
        });
        expect(u64(a.mr, 0)).toBe(105n);
        expect(u64(b.mr, 64)).toBe(7n);
        cmpSwap(a, b, 1n, 9n);
        expect((await waitWc(a.scq))[0].status).toBe(IBV_WC_SUCCESS);
        expect(u64(a.mr, 0)).toBe(7n);
        expect(u64(b.mr, 64)).toBe(7n);
      });
    });
  }

  it("64-bit operands wider than 2^53 are exact (bigint)", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK);
    setU64(b.mr, 64, 0xfffffffffffffff0n);
    fetchAdd(a, b, 0x20n);
    await waitWc(a.scq);
    expect(u64(a.mr, 0)).toBe(0xfffffffffffffff0n);
    expect(u64(b.mr, 64)).toBe(0x10n); // wraps modulo 2^64
  });

  it("a 16-byte SGE: SUCCESS with byte_len 16 (the SGE length)", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK);
    fetchAdd(a, b, 1n, 0, 16);
    expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, byte_len: 16 });
  });

  it("an unaligned local SGE (offset 3): SUCCESS with byte_len 8", async () => {
    const s = scope();
    const { a, b } = pair(s, LOOPBACK);
    setU64(b.mr, 64, 42n);
    fetchAdd(a, b, 1n, 3, 8);
    expect((await waitWc(a.scq))[0]).toMatchObject({ status: IBV_WC_SUCCESS, byte_len: 8 });
    expect(u64(a.mr, 3)).toBe(42n);
  });
});
