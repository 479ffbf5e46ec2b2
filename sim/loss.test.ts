/**
 * The paced requester (requester.ts, the rxe wire profile's `paced`): the posting process's run
 * hands the link one packet at a time, so `sent_pkts` counts only what has left, and a NAK stops
 * it where it is; what loss costs then stays near what it costs on rxe (sim/RXE-FACTS.md §11).
 */
import { describe, expect, it } from "vitest";
import { IBV_QP_SQ_PSN, IBV_SEND_SIGNALED, IBV_WC_SUCCESS, IBV_WR_RDMA_WRITE } from "../verbs/constants.js";
import { createSimBackend } from "./index.js";
import { lossRun, median } from "./loss-sweep.js";
import { ALL_ACCESS, connectRc, makeEnd } from "./testing.js";
import { holdNs } from "./wire.js";

/** rxe's figures at 5% (two runs, §11): requester sent_pkts 264 and 291. */
const RXE_5PCT_HIGH = 291;
/** At 1%: 146 and 237. */
const RXE_1PCT_HIGH = 237;

describe("the paced requester (rxe wire, lab link with faults)", () => {
  for (const packetLog of [true, false])
    it(`hands the link one packet at a time; a NIC's queue takes the burst (log ${packetLog ? "on" : "off"})`, async () => {
      const seen: Record<string, number[]> = {};
      for (const wire of ["rxe", "25GbE"] as const) {
        const b = createSimBackend({ packetLog, wire });
        const a = makeEnd(b.openDevice("rxe0"));
        const z = makeEnd(b.openDevice("rxe1"));
        connectRc(a, z);
        connectRc(z, a);
        const src = a.pd.regMr(32768, ALL_ACCESS);
        const dst = z.pd.regMr(32768, ALL_ACCESS);
        // A fault that touches none of these packets (PSN 1000), so that the link has faults.
        b.lab.setLink({ dropPsn: 1000 });
        const sq0 = a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn;
        a.qp.postSend({
          wr_id: 1,
          opcode: IBV_WR_RDMA_WRITE,
          send_flags: IBV_SEND_SIGNALED,
          sg_list: [src.sge(0, 32768)],
          rdma: { remote_addr: dst.addr, rkey: dst.rkey },
        });
        const sent = () => [a.ctx.queryCounters().sent_pkts, (a.qp.query(IBV_QP_SQ_PSN).attr.sq_psn - sq0) & 0xffffff];
        const hold = holdNs(b.wire, 1024) / 1e6;
        seen[wire] = [...sent()];
        await b.sleep(hold * 2.5);
        seen[wire].push(...sent());
        const [wc] = await a.cq.pollWait(1, 10_000);
        expect(wc.status).toBe(IBV_WC_SUCCESS);
        seen[wire].push(...sent());
        b.lab.clearLink();
      }
      // rxe: one packet at the post, the third while the link holds it, 32 in the end.
      expect(seen.rxe).toEqual([1, 1, 3, 3, 32, 32]);
      // A NIC's transmit queue takes the whole message at once.
      expect(seen["25GbE"]).toEqual([32, 32, 32, 32, 32, 32]);
    });

  it("leaves the link's timing as it was: a paced message completes at the instant the FIFO gave it", async () => {
    const at: number[] = [];
    for (const faulted of [false, true]) {
      const b = createSimBackend({ packetLog: false });
      const a = makeEnd(b.openDevice("rxe0"));
      const z = makeEnd(b.openDevice("rxe1"));
      connectRc(a, z);
      connectRc(z, a);
      const src = a.pd.regMr(4 * 32768, ALL_ACCESS);
      const dst = z.pd.regMr(4 * 32768, ALL_ACCESS);
      if (faulted) b.lab.setLink({ dropPsn: 1000 });
      for (let i = 0; i < 4; i++)
        a.qp.postSend({
          wr_id: i,
          opcode: IBV_WR_RDMA_WRITE,
          send_flags: IBV_SEND_SIGNALED,
          sg_list: [src.sge(i * 32768, 32768)],
          rdma: { remote_addr: dst.addr + i * 32768, rkey: dst.rkey },
        });
      const t0 = b.now();
      for (let got = 0; got < 4;) got += (await a.cq.pollWait(4 - got, 10_000)).length;
      at.push(b.now() - t0);
    }
    expect(at[1]).toBe(at[0]);
  });

  it("keeps the resend volume of the conformance scenario's loss near rxe's (seeds 1–15)", async () => {
    for (const [loss, high] of [
      [0.05, RXE_5PCT_HIGH],
      [0.01, RXE_1PCT_HIGH],
    ] as const) {
      const runs = [];
      for (let seed = 1; seed <= 15; seed++) runs.push(await lossRun(seed, loss));
      expect(runs.every((r) => r.ok)).toBe(true);
      const sent = median(runs.map((r) => r.sent_pkts));
      // Before the pacing: a median of 522 at 5% (1.8 × rxe's higher run). Now within 1.5 ×.
      expect(sent, `median sent_pkts at ${loss * 100}%`).toBeLessThanOrEqual(1.5 * high);
      expect(sent).toBeGreaterThan(144);
      // Each NAK is one out-of-sequence request; retries cover the NAKs.
      expect(median(runs.map((r) => r.rcvd_seq_err))).toBeLessThanOrEqual(
        median(runs.map((r) => r.out_of_seq_request)),
      );
    }
  }, 60_000);
});
