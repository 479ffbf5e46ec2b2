import { expect, it } from "vitest";
import {
  IBV_QPT_RC,
  IBV_SEND_SIGNALED,
  IBV_WC_REM_ACCESS_ERR,
  IBV_WC_WR_FLUSH_ERR,
  IBV_WR_RDMA_WRITE,
} from "../verbs/constants.js";
import { createSimBackend } from "./index.js";
import { ALL_ACCESS, connectRc, makeEnd, type End } from "./testing.js";

// Measured on rxe in the lab VM (app/session/export/fixtures/when-it-breaks.rxe.txt): when both
// QPs of a loopback pair share one CQ, the requester's REM_ACCESS_ERR is polled before the
// responder's flushes, because rxe flushes in a later task run, after the NAK went out.
it("a bad rkey on a pair sharing one CQ: the requester's REM_ACCESS_ERR comes before the responder's flush", () => {
  const b = createSimBackend({ seed: 3, packetLog: false });
  const a = makeEnd(b.openDevice("rxe0"));
  const qp = a.pd.createQp({
    send_cq: a.cq,
    recv_cq: a.cq,
    qp_type: IBV_QPT_RC,
    cap: { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
  });
  const z: End = { ...a, qp, mr: a.pd.regMr(4096, ALL_ACCESS) };
  connectRc(a, z);
  connectRc(z, a);
  z.qp.postRecv({ wr_id: 20, sg_list: [z.mr.sge(0, 64)] });
  a.qp.postSend({
    wr_id: 10,
    opcode: IBV_WR_RDMA_WRITE,
    send_flags: IBV_SEND_SIGNALED,
    sg_list: [a.mr.sge(0, 64)],
    rdma: { remote_addr: z.mr.addr, rkey: (z.mr.rkey ^ 0xff) >>> 0 },
  });
  const wcs = a.cq.poll(4);
  expect(wcs.map((w) => [w.wr_id, w.status])).toEqual([
    [10, IBV_WC_REM_ACCESS_ERR],
    [20, IBV_WC_WR_FLUSH_ERR],
  ]);
});
