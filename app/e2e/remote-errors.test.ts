/**
 * A remote failure explained on the main view: an RDMA WRITE past the end of the peer's MR
 * completes with IBV_WC_REM_ACCESS_ERR, and under the QP diagram (no tab to open) the learner
 * reads the status, the WR and why (the simulator's responder: the range outside the MR);
 * the Connection tab does not claim the sides agree. The CQ in the same program fits its WRs
 * only because rxe rounds 10 up to 15, which earns a notice on the main view too.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  closeLab,
  hasChromium,
  openLab,
  runAndWait,
  screenshot,
  selectLesson,
  setEditorCode,
  type Lab,
} from "./harness.js";

const WRITE_PAST_THE_END = `import {
  IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE, IBV_MTU_1024, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
  IBV_QPT_RC, IBV_QP_ACCESS_FLAGS, IBV_QP_AV, IBV_QP_DEST_QPN, IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER, IBV_QP_PATH_MTU, IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY,
  IBV_QP_RQ_PSN, IBV_QP_SQ_PSN, IBV_QP_STATE, IBV_QP_TIMEOUT, IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE, type Verbs,
} from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(10);
  const mr = await pd.regMr(256, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  // 5 + 5 sends and 1 + 4 receives can complete into the CQ: 15 > 10.
  const cap = { max_send_wr: 5, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap: { ...cap, max_recv_wr: 4 }, qp_type: IBV_QPT_RC });
  for (const [qp, peer] of [[a, b], [b, a]] as const) {
    await qp.modify({ qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: IBV_ACCESS_REMOTE_WRITE },
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    await qp.modify({ qp_state: IBV_QPS_RTR, path_mtu: IBV_MTU_1024, dest_qp_num: peer.qp_num, rq_psn: 0,
      max_dest_rd_atomic: 1, min_rnr_timer: 12,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid: gid, sgid_index: 0, hop_limit: 1 } } },
      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    await qp.modify({ qp_state: IBV_QPS_RTS, timeout: 14, retry_cnt: 7, rnr_retry: 7, sq_psn: 0, max_rd_atomic: 1 },
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
  }
  // 64 bytes at 16 before the end of the 256-byte MR: 48 of them past it.
  await a.postSend({ wr_id: 7, opcode: IBV_WR_RDMA_WRITE, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 64)],
    rdma: { remote_addr: mr.addr + 240, rkey: mr.rkey } });
  await cq.pollWait(1, 1000);
}
`;

describe.skipIf(!hasChromium)("a remote error explained on the main view", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ lab, browser, page, errors } = await openLab(7));
    await selectLesson(page, "one-sided-writes");
  }, 240_000);

  afterAll(() => closeLab(lab, browser));

  it("REM_ACCESS_ERR: its reason under the diagram and on the failing row; the Connection tab claims no agreement", async () => {
    await setEditorCode(page, WRITE_PAST_THE_END);
    await runAndWait(page);
    const failure = page.locator("[data-testid=wc-failure]");
    await failure.waitFor();
    expect(await failure.getAttribute("data-status")).toBe("IBV_WC_REM_ACCESS_ERR");
    const text = (await failure.textContent()) ?? "";
    expect(text).toMatch(/QP 0x[0-9a-f]+\)?: IBV_WC_REM_ACCESS_ERR \(wr_id 7, RDMA_WRITE\)/);
    expect(text).toMatch(/\(64 bytes\) is outside the MR/);
    expect(text).toContain("exact: the simulator's responder");
    expect(await page.locator("[data-testid=wc-failure-badge]").textContent()).toBe("✗ REM_ACCESS_ERR");
    // The CQ of 10 holds the 10 WRs only because rxe made it 15.
    const notice = page.locator("[data-testid=session-notice][data-notice=cq_rounded_up]");
    expect(await notice.textContent()).toMatch(/cqe 10, and rxe0 returned cqe 15/);
    await screenshot(page, "40-remote-access-error");
    // The goal the write fails names the learner's QP it looks at, as the panes do (not "QP #0").
    expect(await page.locator("[data-testid=checks] li").first().textContent()).toMatch(
      /^✗A work completion on a \(QP 0x11\): IBV_WC_SUCCESS, opcode IBV_WC_RDMA_WRITE/,
    );

    // The failing row carries the same reason, and rxe's opcode 0 is explained where it is shown.
    await page.click("[data-tab=cq]");
    const row = page.locator(".wc[data-status=IBV_WC_REM_ACCESS_ERR]").first();
    expect(await row.locator("[data-testid=wc-why]").textContent()).toMatch(/is outside the MR/);
    expect(await row.locator("[data-testid=error-opcode]").getAttribute("title")).toMatch(
      /rxe sets only wr_id, status and qp_num.*IBV_WR_RDMA_WRITE/,
    );

    await page.click("[data-tab=connection]");
    const connection = page.locator(".connection").first();
    await connection.waitFor();
    expect(await connection.textContent()).not.toMatch(/agree/);
    expect(await page.locator("[data-testid=connection-failure]").first().textContent()).toMatch(
      /a WR failed with IBV_WC_REM_ACCESS_ERR/,
    );
    await screenshot(page, "41-remote-access-error-connection");
    expect(errors).toEqual([]);
  }, 120_000);
});
