/**
 * Session.release() ends what a run left behind, as the end of a process does: one backend serves
 * many sessions (lessons:check replays on native, the app's runs), so a QP still retrying would
 * keep sending into the next run's counters.
 */
import { expect, it } from "vitest";
import { createSimBackend } from "../../sim/index.js";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_RC,
  IBV_SEND_SIGNALED,
  IBV_WR_SEND,
} from "../../verbs/constants.js";
import { readCounter } from "../../verbs/types.js";
import { goodModify } from "../../state-machines/qp-paths.js";
import { createSession } from "./session.js";

const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };

it("a QP a run left retrying for ever (a wrong dest_qp_num, retry_cnt 7) stops sending when its session is released", async () => {
  const backend = createSimBackend({ seed: 2 });
  const s = createSession({ backend });
  await s.run(async (v) => {
    const ctx = await v.openDevice("rxe0");
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(4);
    const mr = await pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
    const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    const dgid = await (await v.openDevice("rxe1")).queryGid(1, 1);
    for (const [from, to] of [
      [IBV_QPS_RESET, IBV_QPS_INIT],
      [IBV_QPS_INIT, IBV_QPS_RTR],
      [IBV_QPS_RTR, IBV_QPS_RTS],
    ] as const) {
      const m = goodModify(IBV_QPT_RC, from, to, { dgid, dest_qp_num: 0x7fff })!;
      if (to === IBV_QPS_RTS) Object.assign(m.attr, { timeout: 14, retry_cnt: 7 });
      await qp.modify(m.attr, m.mask);
    }
    await qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 8)] });
    // The program ends here, its SEND still being retried.
  });
  const rxe0 = backend.openDevice("rxe0");
  const sent = () => readCounter(rxe0.queryCounters(), rxe0.device, "sent_pkts") ?? 0;
  await backend.sleep(1000);
  const before = sent();
  await backend.sleep(1000);
  expect(sent(), "still retrying before release").toBeGreaterThan(before);
  s.release();
  const released = sent();
  await backend.sleep(2000);
  expect(sent()).toBe(released);
});
