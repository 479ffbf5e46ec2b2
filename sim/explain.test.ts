/**
 * Every remote failure carries the responder's exact reason (sim/explain.ts): the status a
 * learner polls and why, with the packet log on and off (the fast paths fall back to the
 * reference path on every error, so the reason must survive both).
 */
import { wcReasonText } from "../verbs/wc-reason.js";
import { describe, expect, it } from "vitest";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_READ,
  IBV_MTU_1024,
  IBV_QPS_INIT,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_AV,
  IBV_QP_DEST_QPN,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_PATH_MTU,
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_RETRY_CNT,
  IBV_QP_RNR_RETRY,
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
  IBV_QP_TIMEOUT,
  IBV_SEND_SIGNALED,
  IBV_WC_LOC_PROT_ERR,
  IBV_WC_LOC_QP_OP_ERR,
  IBV_WC_REM_ACCESS_ERR,
  IBV_WC_REM_INV_REQ_ERR,
  IBV_WC_REM_OP_ERR,
  IBV_WC_RETRY_EXC_ERR,
  IBV_WC_RNR_RETRY_EXC_ERR,
  IBV_WC_SUCCESS,
  IBV_WR_RDMA_WRITE,
  IBV_WR_SEND,
} from "../verbs/constants.js";
import type { Mr } from "../verbs/backend.js";
import type { Wc } from "../verbs/types.js";
import { createSimBackend, type SimBackend } from "./index.js";
import { ALL_ACCESS, makeEnd, type End } from "./testing.js";

interface Bring {
  access?: number;
  /** dest_qp_num = the peer's QPN plus this (a wrong QPN). */
  destOffset?: number;
  rq_psn?: number;
  sq_psn?: number;
  retry_cnt?: number;
  rnr_retry?: number;
}

function bringUp(x: End, peer: End, o: Bring = {}): void {
  x.qp.modify(
    { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: o.access ?? ALL_ACCESS },
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
  );
  x.qp.modify(
    {
      qp_state: IBV_QPS_RTR,
      path_mtu: IBV_MTU_1024,
      dest_qp_num: peer.qp.qp_num + (o.destOffset ?? 0),
      rq_psn: o.rq_psn ?? 0,
      max_dest_rd_atomic: 1,
      min_rnr_timer: 1,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid: peer.ctx.queryGid(1, 1), sgid_index: 1, hop_limit: 1 } },
    },
    IBV_QP_STATE |
      IBV_QP_AV |
      IBV_QP_PATH_MTU |
      IBV_QP_DEST_QPN |
      IBV_QP_RQ_PSN |
      IBV_QP_MAX_DEST_RD_ATOMIC |
      IBV_QP_MIN_RNR_TIMER,
  );
  x.qp.modify(
    {
      qp_state: IBV_QPS_RTS,
      timeout: 8,
      retry_cnt: o.retry_cnt ?? 1,
      rnr_retry: o.rnr_retry ?? 1,
      sq_psn: o.sq_psn ?? 0,
      max_rd_atomic: 1,
    },
    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
  );
}

function pair(packetLog: boolean, a: Bring = {}, b: Bring = {}): { sim: SimBackend; x: End; y: End } {
  const sim = createSimBackend({ packetLog });
  const x = makeEnd(sim.openDevice("rxe0"));
  const y = makeEnd(sim.openDevice("rxe1"));
  bringUp(x, y, a);
  bringUp(y, x, b);
  return { sim, x, y };
}

const write = (x: End, remote: Mr | { addr: number; rkey: number }, length: number, offset = 0) =>
  x.qp.postSend({
    wr_id: 7,
    opcode: IBV_WR_RDMA_WRITE,
    send_flags: IBV_SEND_SIGNALED,
    sg_list: [x.mr.sge(0, length)],
    rdma: { remote_addr: remote.addr + offset, rkey: remote.rkey },
  });

async function failed(sim: SimBackend, x: End): Promise<{ wc: Wc; reason: string | undefined }> {
  const [wc] = await x.cq.pollWait(1, 10_000);
  expect(wc).toBeDefined();
  const r = sim.completionReason(wc!);
  return { wc: wc!, reason: r && wcReasonText(r) };
}

describe.each([true, false])("remote failures carry the responder's reason (packet log %s)", (log) => {
  it("a WRITE past the end of the peer's MR: REM_ACCESS_ERR, the range outside the MR", async () => {
    const { sim, x, y } = pair(log);
    write(x, y.mr, 64, y.mr.length - 32);
    const { wc, reason } = await failed(sim, x);
    expect(wc.status).toBe(IBV_WC_REM_ACCESS_ERR);
    expect(reason).toContain(`QP ${y.qp.qp_num} on rxe1`);
    expect(reason).toContain("outside the MR");
    expect(reason).toContain(`0x${(y.mr.addr + y.mr.length).toString(16)}`);
  });

  it("a WRITE with rkey 0: REM_ACCESS_ERR, rkey 0 names no MR", async () => {
    const { sim, x, y } = pair(log);
    write(x, { addr: y.mr.addr, rkey: 0 }, 16);
    const { wc, reason } = await failed(sim, x);
    expect(wc.status).toBe(IBV_WC_REM_ACCESS_ERR);
    expect(reason).toMatch(/rkey 0 names no MR/);
  });

  it("a WRITE with the lkey of a local-only MR as rkey: REM_ACCESS_ERR, that it is an lkey and why", async () => {
    const { sim, x, y } = pair(log);
    const local = y.pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
    write(x, { addr: local.addr, rkey: local.lkey }, 16);
    const { wc, reason } = await failed(sim, x);
    expect(wc.status).toBe(IBV_WC_REM_ACCESS_ERR);
    expect(reason).toMatch(
      new RegExp(
        `^QP ${y.qp.qp_num} on rxe1: rkey 0x${local.lkey.toString(16)} is the lkey of an MR registered without a REMOTE_\\* access flag: its rkey is 0`,
      ),
    );
  });

  it("a WRITE into an MR registered without REMOTE_WRITE: REM_ACCESS_ERR, the flag it lacks", async () => {
    const { sim, x, y } = pair(log);
    const readOnly = y.pd.regMr(256, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
    write(x, readOnly, 16);
    const { wc, reason } = await failed(sim, x);
    expect(wc.status).toBe(IBV_WC_REM_ACCESS_ERR);
    expect(reason).toMatch(/lacks IBV_ACCESS_REMOTE_WRITE/);
  });

  it("a WRITE to a QP whose qp_access_flags lack REMOTE_WRITE: REM_INV_REQ_ERR on both sides, the QP's flags", async () => {
    const { sim, x, y } = pair(log, {}, { access: IBV_ACCESS_REMOTE_READ });
    write(x, y.mr, 16);
    const { wc, reason } = await failed(sim, x);
    expect(wc.status).toBe(IBV_WC_REM_INV_REQ_ERR);
    expect(reason).toMatch(new RegExp(`QP ${y.qp.qp_num} on rxe1: its qp_access_flags lack IBV_ACCESS_REMOTE_WRITE`));
  });

  it("a wrong dest_qp_num: RETRY_EXC_ERR, the peer device has no such QP", async () => {
    const { sim, x, y } = pair(log, { destOffset: 5 });
    write(x, y.mr, 16);
    const { wc, reason } = await failed(sim, x);
    expect(wc.status).toBe(IBV_WC_RETRY_EXC_ERR);
    expect(reason).toContain(`no QP 0x${(y.qp.qp_num + 5).toString(16)} on rxe1`);
    expect(reason).toMatch(/retry_cnt 1/);
  });

  it("an sq_psn ahead of the peer's rq_psn: RETRY_EXC_ERR, the PSN the responder expected", async () => {
    const { sim, x, y } = pair(log, { sq_psn: 100 });
    write(x, y.mr, 16);
    const { wc, reason } = await failed(sim, x);
    expect(wc.status).toBe(IBV_WC_RETRY_EXC_ERR);
    expect(reason).toMatch(/expected PSN 0x0 and got 0x64/);
  });

  it("an sq_psn behind the peer's rq_psn: RETRY_EXC_ERR, taken for a duplicate", async () => {
    const { sim, x, y } = pair(log, {}, { rq_psn: 100 });
    write(x, y.mr, 16);
    const { wc, reason } = await failed(sim, x);
    expect(wc.status).toBe(IBV_WC_RETRY_EXC_ERR);
    expect(reason).toMatch(/expected PSN 0x64 and got 0x0.*duplicate/);
  });

  it("a SEND with no receive posted: RNR_RETRY_EXC_ERR, no receive WQE", async () => {
    const { sim, x } = pair(log);
    x.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [x.mr.sge(0, 8)] });
    const { wc, reason } = await failed(sim, x);
    expect(wc.status).toBe(IBV_WC_RNR_RETRY_EXC_ERR);
    expect(reason).toMatch(/had no receive WQE posted .*; after 2 tries \(rnr_retry 1\) the requester gave up$/);
  });

  it("a SEND longer than the receive WQE: REM_OP_ERR for the sender, LOC_QP_OP_ERR for the receiver, both say so", async () => {
    const { sim, x, y } = pair(log);
    y.qp.postRecv({ wr_id: 3, sg_list: [y.mr.sge(0, 8)] });
    x.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [x.mr.sge(0, 64)] });
    const sent = await failed(sim, x);
    expect(sent.wc.status).toBe(IBV_WC_REM_OP_ERR);
    expect(sent.reason).toBe(`QP ${y.qp.qp_num} on rxe1: the message is longer than its receive WQE (8 bytes)`);
    const received = await failed(sim, y);
    expect(received.wc.status).toBe(IBV_WC_LOC_QP_OP_ERR);
    expect(received.reason).toBe(sent.reason);
  });

  it("a local SGE with an lkey of no MR: LOC_QP_OP_ERR; one past its MR: LOC_PROT_ERR; each names the SGE", async () => {
    const { sim, x } = pair(log);
    const sge = x.mr.sge(0, 8);
    x.qp.postSend({
      wr_id: 1,
      opcode: IBV_WR_SEND,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [{ ...sge, lkey: sge.lkey ^ 0x40 }],
    });
    const bad = await failed(sim, x);
    expect(bad.wc.status).toBe(IBV_WC_LOC_QP_OP_ERR);
    expect(bad.reason).toMatch(/^the WR's sg_list\[0\]\.lkey 0x[0-9a-f]+ names no MR on rxe0$/);

    const { sim: sim2, x: x2, y: y2 } = pair(log);
    y2.qp.postRecv({ wr_id: 3, sg_list: [y2.mr.sge(0, 64)] });
    x2.qp.postSend({
      wr_id: 1,
      opcode: IBV_WR_SEND,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [{ ...x2.mr.sge(0, 8), addr: x2.mr.addr + x2.mr.length - 4 }],
    });
    const outside = await failed(sim2, x2);
    expect(outside.wc.status).toBe(IBV_WC_LOC_PROT_ERR);
    expect(outside.reason).toMatch(/^the WR's sg_list\[0\] \[0x[0-9a-f]+, 0x[0-9a-f]+\) is outside its MR/);
  });

  it("a success has no reason", async () => {
    const { sim, x, y } = pair(log);
    write(x, y.mr, 16);
    const { wc, reason } = await failed(sim, x);
    expect(wc.status).toBe(IBV_WC_SUCCESS);
    expect(reason).toBeUndefined();
  });
});
