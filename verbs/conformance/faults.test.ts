/**
 * sim/RXE-FACTS.md §11: faults on the lab link (verbs/lab.ts), on both backends: loss (RC's
 * go-back-N still delivers every byte, in order, and the same counters rise), an MTU
 * mismatch, UDP 4791 blocked, delay, and that a device's traffic to itself never meets them.
 * On native this runs only in the lab VM (elsewhere `lab.setLink` refuses, and the suite
 * skips saying so). Messages stay small: the VM is 50–100× slower.
 */
import { afterEach, beforeAll, expect, it } from "vitest";
import type { Context } from "../backend.js";
import {
  IBV_MTU_1024,
  IBV_MTU_4096,
  IBV_WC_RETRY_EXC_ERR,
  IBV_WC_SUCCESS,
  IBV_WC_WR_FLUSH_ERR,
  IBV_QPS_ERR,
  IBV_QPS_RTS,
  IBV_QP_STATE,
  IBV_WR_RDMA_WRITE,
  IBV_WR_SEND,
  ibv_wc_status,
  nameOf,
} from "../constants.js";
import { VerbsError } from "../errors.js";
import type { LabLink } from "../lab.js";
import { CLEAN_LINK } from "../lab.js";
import {
  B,
  BACKEND_KIND,
  CROSS,
  LOOPBACK,
  PAIRINGS,
  expectState,
  toState,
  SLACK_MS,
  ackTimeoutMs,
  expectBetween,
  expectErrorWc,
  expectVerbsError,
  fill,
  pair,
  scope,
  suite,
  waitWc,
} from "./harness.js";

/** The lab link, or why this backend cannot fault it (the tests then skip, loudly). */
let lab: LabLink | undefined;
let noLab: string | undefined;

/** Counter deltas since this call (after the sysfs copy's 10 ms lifespan). */
function counters(ctx: Context) {
  const before = ctx.queryCounters(1);
  return async () => {
    await B().sleep(25);
    const now = ctx.queryCounters(1);
    const d: Record<string, number> = {};
    for (const k of Object.keys(now)) if (now[k] !== before[k]) d[k] = now[k] - before[k];
    return d;
  };
}

/** Prints a measurement where the run's log keeps it (sim/RXE-FACTS.md §11 was written from these). */
function measured(what: string, data: unknown) {
  console.log(`[faults ${BACKEND_KIND}] ${what}: ${JSON.stringify(data)}`);
}

const WRITE_BYTES = 32 * 1024;
const WRITES = 4;
const SENDS = 8;
const SEND_BYTES = 2000;

suite("Faults on the lab link (§11)", () => {
  beforeAll(() => {
    lab = B().lab;
    if (!lab) {
      noLab = "this backend has no lab link";
      return;
    }
    try {
      lab.clearLink();
    } catch (e) {
      if (!(e instanceof VerbsError) || e.code !== "EPERM") throw e;
      noLab = e.reason;
      lab = undefined;
    }
    if (noLab) console.warn(`[conformance] faults SKIPPED on ${BACKEND_KIND}: ${noLab}`);
  });
  afterEach(() => {
    lab?.clearLink();
  });

  it("setLink names the bad field (EINVAL) and changes nothing; getLink reads back; clearLink resets", (ctx) => {
    if (!lab) return ctx.skip();
    const l = lab;
    expect(expectVerbsError(() => l.setLink({ loss: 1.5 }), "EINVAL").attribute).toBe("loss");
    expect(expectVerbsError(() => l.setLink({ mtu: { rxe2: 1500 } } as never), "EINVAL").attribute).toBe("mtu.rxe2");
    expect(expectVerbsError(() => l.setLink({ los: 0.1 } as never), "EINVAL").attribute).toBe("los");
    expect(expectVerbsError(() => l.setLink({ reorder: 0.2 }), "EINVAL").attribute).toBe("reorder");
    expect(l.getLink()).toEqual(CLEAN_LINK);
    expect(l.setLink({ loss: 0.01 })).toEqual({ ...CLEAN_LINK, loss: 0.01 });
    expect(l.clearLink()).toEqual(CLEAN_LINK);
  });

  for (const loss of [0.001, 0.01, 0.05])
    it(`loss ${loss} on rxe0 ↔ rxe1: every WRITE and SEND completes in order with every byte; go-back-N's counters rise`, async (ctx) => {
      if (!lab) return ctx.skip();
      const s = scope();
      const { a, b } = pair(s, CROSS, {
        mrSize: WRITE_BYTES * WRITES,
        cap: { max_send_wr: 16, max_recv_wr: 16 },
        a_rts: { timeout: 14, retry_cnt: 7 },
        b_rts: { timeout: 14, retry_cnt: 7 },
      });
      const want = fill(a.mr.bytes, Math.round(loss * 1000));
      const ca = counters(a.ctx);
      const cb = counters(b.ctx);
      lab.setLink({ loss });
      const t0 = B().now();
      let progress = "writes";
      let da: Record<string, number> = {};
      let db: Record<string, number> = {};
      try {
        for (let i = 0; i < WRITES; i++)
          a.qp.postSend({
            wr_id: i,
            opcode: IBV_WR_RDMA_WRITE,
            sg_list: [a.mr.sge(i * WRITE_BYTES, WRITE_BYTES)],
            rdma: { remote_addr: b.mr.addr + i * WRITE_BYTES, rkey: b.mr.rkey },
          });
        const wcs = await waitWc(a.scq, WRITES, 60_000);
        expect(wcs.map((w) => [w.wr_id, nameOf(ibv_wc_status, w.status)])).toEqual(
          Array.from({ length: WRITES }, (_, i) => [i, "IBV_WC_SUCCESS"]),
        );
        expect(Buffer.from(b.mr.bytes).equals(Buffer.from(want))).toBe(true);
        progress = "sends";
        // SENDs: each receive gets the next message, whole.
        for (let i = 0; i < SENDS; i++) b.qp.postRecv({ wr_id: i, sg_list: [b.mr.sge(i * SEND_BYTES, SEND_BYTES)] });
        for (let i = 0; i < SENDS; i++)
          a.qp.postSend({ wr_id: 100 + i, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(i * 1000, SEND_BYTES)] });
        await waitWc(a.scq, SENDS, 60_000);
        const recvs = await waitWc(b.rcq, SENDS, 60_000);
        expect(recvs.map((w) => [w.wr_id, w.status, w.byte_len])).toEqual(
          Array.from({ length: SENDS }, (_, i) => [i, IBV_WC_SUCCESS, SEND_BYTES]),
        );
        for (let i = 0; i < SENDS; i++)
          expect(b.mr.bytes.subarray(i * SEND_BYTES, (i + 1) * SEND_BYTES)).toEqual(
            want.subarray(i * 1000, i * 1000 + SEND_BYTES),
          );
        progress = "done";
      } finally {
        const l = lab;
        const elapsed = B().now() - t0;
        l.clearLink();
        da = await ca();
        db = await cb();
        measured(`loss ${loss}`, { progress, elapsed: Math.round(elapsed), requester: da, responder: db });
      }
      const sent = da.sent_pkts ?? 0;
      const base = WRITES * (WRITE_BYTES / 1024) + SENDS * Math.ceil(SEND_BYTES / 1024);
      // Measured (sim/RXE-FACTS.md §11): a lost request makes the responder NAK the next one
      // (out_of_seq_request) and the requester go back (rcvd_seq_err, completer_retry_err);
      // a lost last packet or ACK, a timeout (completer_retry_err). Retransmissions show in
      // sent_pkts above the 144 packets the messages take; with no loss nothing rises.
      const recovered = (db.out_of_seq_request ?? 0) + (da.rcvd_seq_err ?? 0) + (da.completer_retry_err ?? 0);
      expect(sent).toBeGreaterThanOrEqual(base);
      expect(recovered > 0, JSON.stringify({ sent, da, db })).toBe(sent > base);
      // At 5% of ~150+ packets, a run without loss is a 1-in-1000 event: the counters must rise.
      if (loss >= 0.05) {
        expect(da.rcvd_seq_err ?? 0).toBeGreaterThan(0);
        expect(db.out_of_seq_request ?? 0).toBeGreaterThan(0);
      }
      // One NAK per burst of loss: never more NAKs than packets that could have been lost.
      expect(da.rcvd_seq_err ?? 0).toBeLessThanOrEqual(db.out_of_seq_request ?? 0);
      expect(da.rcvd_seq_err ?? 0).toBeLessThanOrEqual(Math.ceil(loss * sent * 3) + 2);
      expect(da.completer_retry_err ?? 0).toBeGreaterThanOrEqual(da.rcvd_seq_err ?? 0);
      expect(da.retry_exceeded_err ?? 0).toBe(0);
    }, 150_000);

  it("loss 1 (every packet): rxe0 ↔ rxe1 fails with RETRY_EXC_ERR, while rxe0 to itself still works", async (ctx) => {
    if (!lab) return ctx.skip();
    const s = scope();
    const cross = pair(s, CROSS, { a_rts: { timeout: 12, retry_cnt: 1 } });
    const loop = pair(s, LOOPBACK);
    lab.setLink({ loss: 1 });
    loop.b.qp.postRecv({ wr_id: 1, sg_list: [loop.b.mr.sge(0, 64)] });
    loop.a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, sg_list: [loop.a.mr.sge(0, 64)] });
    expect((await waitWc(loop.a.scq, 1, 5000))[0].status).toBe(IBV_WC_SUCCESS);
    cross.b.qp.postRecv({ wr_id: 1, sg_list: [cross.b.mr.sge(0, 64)] });
    cross.a.qp.postSend({ wr_id: 3, opcode: IBV_WR_SEND, sg_list: [cross.a.mr.sge(0, 64)] });
    const [wc] = await waitWc(cross.a.scq, 1, 5000 + SLACK_MS);
    expectErrorWc(wc, IBV_WC_RETRY_EXC_ERR, cross.a.qp, 3);
  });

  // dropPsn: one chosen packet lost, the same on every run (a lossy run the pcap comparison can
  // hold packet for packet: app/session/export/pcap-programs/lossy.ts).
  async function writeDroppingOne(l: LabLink, dropAt: number) {
    const s = scope();
    const { a, b } = pair(s, CROSS, { a_psn: 100, a_rts: { timeout: 14, retry_cnt: 7 } });
    const want = fill(a.mr.bytes, 9, 0, 4096);
    const ca = counters(a.ctx);
    const cb = counters(b.ctx);
    l.setLink({ dropPsn: 100 + dropAt });
    const t0 = B().now();
    try {
      a.qp.postSend({
        wr_id: 7,
        opcode: IBV_WR_RDMA_WRITE,
        sg_list: [a.mr.sge(0, 4096)],
        rdma: { remote_addr: b.mr.addr, rkey: b.mr.rkey },
      });
      const [wc] = await waitWc(a.scq, 1, 5000 + SLACK_MS);
      expect(nameOf(ibv_wc_status, wc.status)).toBe("IBV_WC_SUCCESS");
    } finally {
      l.clearLink();
    }
    const elapsed = B().now() - t0;
    expect(Buffer.from(b.mr.bytes.subarray(0, 4096)).equals(Buffer.from(want))).toBe(true);
    const r = { elapsed, requester: await ca(), responder: await cb() };
    measured(`dropPsn ${100 + dropAt} of a 4-packet WRITE (PSNs 100-103)`, { ...r, elapsed: Math.round(elapsed) });
    return r;
  }

  it("dropPsn the last packet of a 4-packet WRITE: after one local ACK timeout go-back-N resends all four; each duplicate is ACKed", async (ctx) => {
    if (!lab) return ctx.skip();
    const { elapsed, requester, responder } = await writeDroppingOne(lab, 3);
    // Nothing answers packets 100-102 (only a message's last packet asks for an ACK), so only
    // the retransmit timer notices: one completer retry, no NAK, then the whole message again.
    expect(elapsed).toBeGreaterThanOrEqual(ackTimeoutMs(14) * 0.9);
    expect(requester).toMatchObject({ sent_pkts: 8, completer_retry_err: 1 });
    expect(requester.rcvd_seq_err ?? 0).toBe(0);
    // rxe ACKs every duplicate SEND/WRITE packet, not only those asking for one (duplicate_request,
    // C9-105), with the last PSN it has: three ACKs of 102, then the WRITE's own ACK of 103.
    expect(responder).toMatchObject({ duplicate_request: 3, sent_pkts: 4, rcvd_pkts: 7 });
    expect(responder.out_of_seq_request ?? 0).toBe(0);
  });

  it("dropPsn a middle packet: the responder NAKs the next one (out of sequence) and the requester goes back to the lost PSN", async (ctx) => {
    if (!lab) return ctx.skip();
    const { requester, responder } = await writeDroppingOne(lab, 1);
    expect(requester).toMatchObject({ rcvd_seq_err: 1, completer_retry_err: 1 });
    expect(responder).toMatchObject({ out_of_seq_request: 1 });
    expect(responder.duplicate_request ?? 0).toBe(0);
    // 100, 101 (lost), 102 (NAKed), perhaps 103 (on real rxe the NAK races the requester), then 101-103 again.
    expect(requester.sent_pkts).toBeGreaterThanOrEqual(6);
    expect(requester.sent_pkts).toBeLessThanOrEqual(7);
  });

  it("blockRoceUdp: RETRY_EXC_ERR after ≈ timeout × (retry_cnt + 1); retry_exceeded_err +1 on the requester", async (ctx) => {
    if (!lab) return ctx.skip();
    const s = scope();
    const timeout = 14;
    const retry_cnt = 2;
    const { a, b } = pair(s, CROSS, { a_rts: { timeout, retry_cnt } });
    const ca = counters(a.ctx);
    const cb = counters(b.ctx);
    lab.setLink({ blockRoceUdp: true });
    b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(0, 64)] });
    const t0 = B().now();
    a.qp.postSend({ wr_id: 4, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 64)] });
    const [wc] = await waitWc(a.scq, 1, 3000 + SLACK_MS);
    const elapsed = B().now() - t0;
    expectErrorWc(wc, IBV_WC_RETRY_EXC_ERR, a.qp, 4);
    const T = ackTimeoutMs(timeout);
    expectBetween(elapsed, 0.9 * (retry_cnt + 1) * T, 3 * (retry_cnt + 1) * (T + 8) + SLACK_MS);
    const da = await ca();
    const db = await cb();
    measured("blockRoceUdp", { elapsed: Math.round(elapsed), requester: da, responder: db });
    expect(da.retry_exceeded_err).toBe(1);
    expect(da.sent_pkts).toBe(retry_cnt + 1);
    expect(db.rcvd_pkts ?? 0).toBe(0);
  });

  // On real rxe (Linux 6.1) a full-size packet over the smaller side's MTU makes the requester
  // retry in the kernel for ever: measured once as a soft lockup of the posting thread that hung
  // the lab VM for 15 minutes (it passed in two earlier boots). The simulator keeps the scenario;
  // on native it is not run until it can be run without risking the VM.
  for (const pairing of [CROSS, PAIRINGS[3]])
    it.skipIf(BACKEND_KIND === "native")(
      `MTU 9000 on rxe0, 1500 on rxe1 (${pairing.name}): active_mtu follows each netdev; path_mtu 4096 from rxe0: a packet that fits passes; a full one never leaves (send_err for ever, no completion)`,
      async (ctx) => {
        if (!lab) return ctx.skip();
        const s = scope();
        lab.setLink({ mtu: { rxe0: 9000 } });
        const { a, b } = pair(s, pairing, { path_mtu: IBV_MTU_4096, a_rts: { timeout: 12, retry_cnt: 1 } });
        expect(a.ctx.queryPort(1).active_mtu).toBe(IBV_MTU_4096);
        expect(b.ctx.queryPort(1).active_mtu).toBe(IBV_MTU_1024);
        const ca = counters(a.ctx);
        const cb = counters(b.ctx);
        b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(0, 8192)] });
        b.qp.postRecv({ wr_id: 2, sg_list: [b.mr.sge(0, 8192)] });
        // 1400 bytes of payload: one packet that fits a 1500-byte MTU with its headers.
        a.qp.postSend({ wr_id: 5, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 1400)] });
        const small = await a.scq.pollWait(1, 5000);
        a.qp.postSend({ wr_id: 6, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 4096)] });
        const big = await a.scq.pollWait(1, 3000);
        const da = await ca();
        const db = await cb();
        measured(`mtu rxe0 9000 / rxe1 1500, 4096 from rxe0, ${pairing.name}`, {
          small: small.map((w) => nameOf(ibv_wc_status, w.status)),
          big: big.map((w) => nameOf(ibv_wc_status, w.status)),
          a_state: a.qp.query().attr.qp_state,
          requester: da,
          responder: db,
          recvs: (await b.rcq.pollWait(2, 10)).map((w) => [nameOf(ibv_wc_status, w.status), w.byte_len]),
        });
        expect(small.map((w) => w.status)).toEqual([IBV_WC_SUCCESS]);
        // Measured: the veth's drop reaches rxe as a failed send (-EAGAIN): the requester
        // tries again and again (send_err), never times out, never completes; the QP stays RTS.
        expect(big).toEqual([]);
        expectState(a.qp, IBV_QPS_RTS);
        expect(da.send_err).toBeGreaterThan(10);
        expect(da.sent_pkts).toBe(1);
        expect(da.retry_exceeded_err ?? 0).toBe(0);
        expect(db.rcvd_pkts).toBe(1);
        toState(a.qp, IBV_QPS_ERR);
        expect((await a.scq.pollWait(1, 3000)).map((w) => w.status)).toEqual([IBV_WC_WR_FLUSH_ERR]);
      },
    );

  it("MTU 9000 on rxe0, 1500 on rxe1 with path_mtu 1024: every size gets through", async (ctx) => {
    if (!lab) return ctx.skip();
    const s = scope();
    lab.setLink({ mtu: { rxe0: 9000 } });
    const { a, b } = pair(s, CROSS, { path_mtu: IBV_MTU_1024 });
    b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(0, 8192)] });
    a.qp.postSend({ wr_id: 7, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 8192)] });
    expect((await waitWc(a.scq, 1, 5000))[0].status).toBe(IBV_WC_SUCCESS);
    expect((await waitWc(b.rcq, 1, 5000))[0].byte_len).toBe(8192);
  });

  it("delay 20 ms: a SEND rxe0 → rxe1 completes after ≥ one round trip (40 ms)", async (ctx) => {
    if (!lab) return ctx.skip();
    const s = scope();
    const { a, b } = pair(s, CROSS);
    lab.setLink({ delay: 20 });
    b.qp.postRecv({ wr_id: 1, sg_list: [b.mr.sge(0, 64)] });
    const t0 = B().now();
    a.qp.postSend({ wr_id: 8, opcode: IBV_WR_SEND, sg_list: [a.mr.sge(0, 64)] });
    await waitWc(a.scq, 1, 5000);
    const elapsed = B().now() - t0;
    measured("delay 20", { elapsed });
    expectBetween(elapsed, 40, 3 * 40 + SLACK_MS);
  });
});

suite("Faults on the lab link: an oversized packet at its sender (§11)", () => {
  // The same kernel retry loop as above (a packet above the sender's own MTU): simulator only.
  it.skipIf(BACKEND_KIND === "native")(
    "path_mtu 4096 from rxe1 (MTU 1500) to rxe0 (MTU 9000): what the sender does with a packet above its own MTU",
    async (ctx) => {
      const l = B().lab;
      if (!l || noLab) return ctx.skip();
      const s = scope();
      l.setLink({ mtu: { rxe0: 9000 } });
      try {
        const { a, b } = pair(s, CROSS, { path_mtu: IBV_MTU_4096, b_rts: { timeout: 12, retry_cnt: 1 } });
        const ca = counters(a.ctx);
        const cb = counters(b.ctx);
        a.qp.postRecv({ wr_id: 1, sg_list: [a.mr.sge(0, 8192)] });
        b.qp.postSend({ wr_id: 9, opcode: IBV_WR_SEND, sg_list: [b.mr.sge(0, 4096)] });
        const wcs = await b.scq.pollWait(1, 3000);
        const da = await ca();
        const db = await cb();
        measured("mtu rxe1 1500 sends 4096", {
          wcs: wcs.map((w) => nameOf(ibv_wc_status, w.status)),
          receiver: da,
          sender: db,
          b_state: b.qp.query().attr.qp_state,
        });
        // Stop it: ERR flushes the WQE the requester keeps trying to send.
        b.qp.modify({ qp_state: IBV_QPS_ERR }, IBV_QP_STATE);
        const flushed = await b.scq.pollWait(1, 3000);
        measured("mtu rxe1 1500 sends 4096, then ERR", {
          wcs: flushed.map((w) => nameOf(ibv_wc_status, w.status)),
          sender: await counters(b.ctx)(),
        });
        expect(wcs).toEqual([]);
        expect(db.send_err).toBeGreaterThan(10);
        expect(db.sent_pkts ?? 0).toBe(0);
        expect(flushed.map((w) => w.status)).toEqual([IBV_WC_WR_FLUSH_ERR]);
      } finally {
        l.clearLink();
      }
    },
  );
});
