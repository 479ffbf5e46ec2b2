/**
 * The Network panel end to end (web mode, simulator): block UDP 4791 from the panel, run a SEND
 * from rxe0 to rxe1 and see IBV_WC_RETRY_EXC_ERR on screen with the set link first in the
 * transcript; clear the faults from the panel and the same program succeeds. A bad field is
 * refused naming it. Screenshots go to test-results/network-*.png.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  closeLab,
  hasChromium,
  openLab,
  rowVerb,
  runAndWait,
  screenshot,
  screenshotOf,
  setEditorCode,
  transcriptRows,
  type Lab,
} from "./harness.js";

/** One RC QP on rxe0 and one on rxe1, connected over their IPv4 GIDs; one SEND with a short retry budget. */
const PROGRAM = `import {
  IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_MTU_1024,
  IBV_QP_STATE, IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_ACCESS_FLAGS,
  IBV_QP_AV, IBV_QP_PATH_MTU, IBV_QP_DEST_QPN, IBV_QP_RQ_PSN, IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MIN_RNR_TIMER,
  IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY, IBV_QP_SQ_PSN, IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_ACCESS_LOCAL_WRITE, IBV_WR_SEND, IBV_SEND_SIGNALED,
  type Verbs,
} from "verbslab";

export default async function main(verbs: Verbs) {
  const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const ends = [];
  for (const dev of ["rxe0", "rxe1"]) {
    const ctx = await verbs.openDevice(dev);
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(8);
    const mr = await pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
    const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    ends.push({ gid: await ctx.queryGid(1, 1), cq, mr, qp });
  }
  const [a, b] = ends;
  for (const [me, peer] of [[a, b], [b, a]]) {
    await me.qp.modify(
      { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: IBV_ACCESS_LOCAL_WRITE },
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
    );
    await me.qp.modify(
      {
        qp_state: IBV_QPS_RTR, path_mtu: IBV_MTU_1024, dest_qp_num: peer.qp.qp_num, rq_psn: 0,
        max_dest_rd_atomic: 1, min_rnr_timer: 12,
        ah_attr: { is_global: 1, port_num: 1, grh: { dgid: peer.gid, sgid_index: 1, hop_limit: 1 } },
      },
      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
    );
    await me.qp.modify(
      { qp_state: IBV_QPS_RTS, timeout: 12, retry_cnt: 1, rnr_retry: 7, sq_psn: 0, max_rd_atomic: 1 },
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
    );
  }
  await b.qp.postRecv({ wr_id: 2, sg_list: [b.mr.sge(0, 64)] });
  await a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 8)] });
  await a.cq.pollWait(1, 5000);
}
`;

const nowText = (page: Page) => page.locator("[data-testid=net-link-now]").textContent();

describe.skipIf(!hasChromium)("the Network panel in Chromium (web mode, simulator)", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ lab, browser, page, errors } = await openLab(9));
  }, 240_000);

  afterAll(() => closeLab(lab, browser));

  it("blocks UDP 4791 from the panel: the SEND ends in RETRY_EXC_ERR; cleared, the same program succeeds", async () => {
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.click("[data-tab=network]");
    await page.waitForSelector("[data-testid=net-link-now]");
    expect(await nowText(page)).toMatch(/no faults/);
    expect(await page.locator("[data-testid=net-where]").textContent()).toMatch(/seeded, on the simulated wire/);

    await page.check("[data-field=block]");
    await page.click("[data-action=net-apply]");
    await page.waitForFunction(() =>
      /UDP 4791 blocked/.test(document.querySelector("[data-testid=net-link-now]")?.textContent ?? ""),
    );
    await screenshotOf(page, ".inspector-tabs", "network-blocked-panel");

    await setEditorCode(page, PROGRAM);
    await runAndWait(page);
    await page.waitForSelector("[data-testid=wc-failure-badge]");
    expect(await page.locator("[data-testid=wc-failure-badge]").textContent()).toBe("✗ RETRY_EXC_ERR");
    // The run's transcript begins with the link it ran on (so an export or replay keeps it).
    await page.click("[data-tab=transcript]");
    const rows = await transcriptRows(page);
    expect(rowVerb(rows[0]!)).toBe("verbslab_set_link");
    expect(rows[0]).toContain("blockRoceUdp");
    // The packets the wire dropped say why.
    await page.click("[data-tab=packets]");
    await page.waitForSelector(".pt-row[data-kind=cqe]");
    expect((await page.locator(".pt-body").textContent()) ?? "").toMatch(/RETRY_EXC_ERR/);
    await screenshot(page, "network-retry-exc-1280x720");

    // The panel still shows the block (kept for the next runs), and clears it.
    await page.click("[data-tab=network]");
    await page.waitForSelector("[data-testid=net-link-now]");
    expect(await nowText(page)).toMatch(/UDP 4791 blocked/);
    await page.click("[data-action=net-clear]");
    await page.waitForFunction(() =>
      /no faults/.test(document.querySelector("[data-testid=net-link-now]")?.textContent ?? ""),
    );
    expect(await page.isChecked("[data-field=block]")).toBe(false);

    await runAndWait(page);
    await page.click("[data-tab=packets]");
    await page.waitForSelector(".pt-row[data-kind=cqe]");
    const cqes = await page.locator(".pt-row[data-kind=cqe]").allTextContents();
    expect(cqes.join(" ")).toMatch(/CQE SEND wr_id 1 · SUCCESS/);
    expect(await page.locator("[data-testid=wc-failure-badge]").count()).toBe(0);
    await page.click("[data-tab=transcript]");
    expect((await transcriptRows(page)).map(rowVerb)).not.toContain("verbslab_set_link");
    await screenshot(page, "network-cleared-1280x720");
    expect(errors).toEqual([]);
  }, 180_000);

  it("a bad value is refused naming the field, and nothing is set", async () => {
    await page.click("[data-tab=network]");
    await page.waitForSelector("[data-field=mtu1]");
    await page.fill("[data-field=mtu1]", "100");
    await page.click("[data-action=net-apply]");
    const msg = page.locator("[data-testid=net-message]");
    await msg.waitFor();
    expect(await msg.textContent()).toBe("MTU rxe1: enter a whole number of bytes from 576 to 9000.");
    expect(await page.getAttribute("[data-field=mtu1]", "aria-invalid")).toBe("true");
    // Said where it is seen: the short tab body (1280×720) scrolls to the answer.
    const seen = await msg.evaluate((el) => {
      const r = el.getBoundingClientRect();
      const body = el.closest(".panel-body")!.getBoundingClientRect();
      return r.top >= body.top - 0.5 && r.bottom <= body.bottom + 0.5;
    });
    expect(seen).toBe(true);
    expect(await nowText(page)).toMatch(/no faults · MTU rxe0 1500 · rxe1 1500/);
    await screenshotOf(page, ".inspector-tabs", "network-bad-field");
  }, 60_000);

  // After the refused value above: the fixed form applies (a message going away once blanked the app).
  it("the wire model: 25GbE chosen in the panel, the top bar and the run's transcript say so; cleared, back to rxe's model", async () => {
    await page.click("[data-tab=network]");
    await page.fill("[data-field=mtu1]", "1500");
    const badge = page.locator("[data-testid=wire-model]");
    expect(await badge.textContent()).toBe("wire: rxe model");
    await page.selectOption("[data-field=wire]", "25GbE");
    await page.click("[data-action=net-apply]");
    await page.waitForFunction(() =>
      /25GbE NIC model/.test(document.querySelector("[data-testid=net-link-now]")?.textContent ?? ""),
    );
    expect(await badge.textContent()).toBe("wire: 25GbE NIC model");
    await setEditorCode(page, PROGRAM);
    await runAndWait(page);
    await page.click("[data-tab=transcript]");
    const rows = await transcriptRows(page);
    expect(rowVerb(rows[0]!)).toBe("verbslab_set_link");
    expect(rows[0]).toContain('"wire":"25GbE"');
    // Still the model the next run starts on: the session's release puts back only what a program set.
    expect(await badge.textContent()).toBe("wire: 25GbE NIC model");
    await screenshot(page, "network-wire-25gbe");
    await page.click("[data-tab=network]");
    await page.click("[data-action=net-clear]");
    await page.waitForFunction(
      () => document.querySelector("[data-testid=wire-model]")?.textContent === "wire: rxe model",
    );
    expect(await page.inputValue("[data-field=wire]")).toBe("rxe");
    expect(errors).toEqual([]);
  }, 120_000);

  it("中文: the tab, its labels and notes in Chinese (1366×768)", async () => {
    await page.setViewportSize({ width: 1366, height: 768 });
    await page.selectOption("select[aria-label=language]", "zh");
    await page.click("[data-tab=network]");
    await page.waitForSelector("[data-field=loss]");
    expect(await page.locator("[data-tab=network]").textContent()).toBe("网络");
    const text = (await page.locator(".network").textContent()) ?? "";
    for (const zh of ["实验链路", "丢包率", "阻断 UDP 4791", "应用", "清除全部故障", "模拟线路", "rxe 内部回环"])
      expect(text).toContain(zh);
    expect(text).not.toMatch(/Loss|Apply|looped/);
    await screenshotOf(page, ".inspector-tabs", "network-zh-1366x768");
    await page.selectOption("select[aria-label=language]", "en");
  }, 60_000);
});
