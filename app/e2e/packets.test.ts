/**
 * The Packets tab end to end: a program doing a multi-packet RDMA WRITE and a SEND runs in
 * web mode on the simulator; the timeline shows each WQE, its packets with PSNs, the ACKs
 * and the CQEs, lane by QP. Screenshots go to test-results/.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  hasChromium,
  runAndWait,
  screenshot,
  screenshotOf,
  setEditorCode,
  type Lab,
  openLab,
  closeLab,
} from "./harness.js";

/** Both programs: two RC QPs on rxe0 connected to each other, one CQ, one 8 KiB MR. */
const BRING_UP = `import {
  IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_MTU_1024,
  IBV_QP_STATE, IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_ACCESS_FLAGS,
  IBV_QP_AV, IBV_QP_PATH_MTU, IBV_QP_DEST_QPN, IBV_QP_RQ_PSN, IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MIN_RNR_TIMER,
  IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY, IBV_QP_SQ_PSN, IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE, IBV_WR_RDMA_WRITE, IBV_WR_SEND, IBV_SEND_SIGNALED,
  type Verbs,
} from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(16);
  const mr = await pd.regMr(8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  const cap = { max_send_wr: 8, max_recv_wr: 8, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const gid = await ctx.queryGid(1, 1);
  for (const qp of [a, b]) {
    await qp.modify(
      { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE },
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
    );
  }
  for (const [qp, peer] of [[a, b], [b, a]] as const) {
    await qp.modify(
      {
        qp_state: IBV_QPS_RTR, path_mtu: IBV_MTU_1024, dest_qp_num: peer.qp_num, rq_psn: 0,
        max_dest_rd_atomic: 1, min_rnr_timer: 12,
        ah_attr: { is_global: 1, port_num: 1, grh: { dgid: gid, sgid_index: 1, hop_limit: 1 } },
      },
      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
    );
  }
  for (const qp of [a, b]) {
    await qp.modify(
      { qp_state: IBV_QPS_RTS, timeout: 14, retry_cnt: 7, rnr_retry: 7, sq_psn: 0, max_rd_atomic: 1 },
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
    );
  }
`;

const PROGRAM = `${BRING_UP}  await mr.write(0, "hello from the packet timeline");
  // 2500 bytes at MTU 1024: WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, then one ACK.
  await a.postSend({
    wr_id: 1, opcode: IBV_WR_RDMA_WRITE, send_flags: IBV_SEND_SIGNALED,
    sg_list: [mr.sge(0, 2500)], rdma: { remote_addr: mr.addr + 4096, rkey: mr.rkey },
  });
  await b.postRecv({ wr_id: 2, sg_list: [mr.sge(7168, 1024)] });
  await a.postSend({ wr_id: 3, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 30)] });
  const wcs = await cq.pollWait(3, 100);
  await verbs.log(\`polled \${wcs.length} completions\`);
}
`;

const RNR_PROGRAM = `${BRING_UP}  // No RECV posted yet: the SEND meets an RNR NAK and waits out the RNR timer; then it gets through.
  await a.postSend({ wr_id: 7, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 64)] });
  await verbs.sleep(1);
  await b.postRecv({ wr_id: 8, sg_list: [mr.sge(4096, 64)] });
  await cq.pollWait(2, 1000);
}
`;

/** One RC QP on each device (both get QP number 0x11), a SEND from rxe0's to rxe1's. */
const TWO_DEVICES = `import {
  IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_MTU_1024,
  IBV_QP_STATE, IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_ACCESS_FLAGS,
  IBV_QP_AV, IBV_QP_PATH_MTU, IBV_QP_DEST_QPN, IBV_QP_RQ_PSN, IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MIN_RNR_TIMER,
  IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY, IBV_QP_SQ_PSN, IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_ACCESS_LOCAL_WRITE, IBV_WR_SEND, IBV_SEND_SIGNALED,
  type Verbs,
} from "verbslab";

export default async function main(verbs: Verbs) {
  const ends = [];
  for (const dev of ["rxe0", "rxe1"]) {
    const ctx = await verbs.openDevice(dev);
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(8);
    const mr = await pd.regMr(4096, IBV_ACCESS_LOCAL_WRITE);
    const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    ends.push({ cq, mr, qp, gid: await ctx.queryGid(1, 1) });
  }
  const [a, b] = ends;
  for (const [me, peer] of [[a, b], [b, a]] as const) {
    await me.qp.modify(
      { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: 0 },
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
      { qp_state: IBV_QPS_RTS, timeout: 14, retry_cnt: 7, rnr_retry: 7, sq_psn: 0, max_rd_atomic: 1 },
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
    );
  }
  await b.qp.postRecv({ wr_id: 2, sg_list: [b.mr.sge(0, 64)] });
  await a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 64)] });
  await a.cq.pollWait(1, 100);
  await b.cq.pollWait(1, 100);
}
`;

describe.skipIf(!hasChromium)("the packet timeline in Chromium (web mode, simulator)", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ lab, browser, page, errors } = await openLab(5));
  }, 240_000);

  afterAll(() => closeLab(lab, browser));

  it("shows the WQEs, the packets with their PSNs, the ACKs and the CQEs of a WRITE and a SEND", async () => {
    await page.click("[data-tab=packets]");
    expect(await page.locator(".pt .empty").textContent()).toMatch(/No traffic yet/);

    await setEditorCode(page, PROGRAM);
    await runAndWait(page);
    await page.waitForSelector(".pt-row[data-kind=cqe]", { timeout: 30_000 });
    const rows = (await page.locator(".pt-body .pt-row").allTextContents()).map((r) => r.replace(/\s+/g, " ").trim());
    // Each row as a learner reads it; the time column shows the virtual clock once per instant.
    const body = rows.map((r) => r.replace(/^\d+\.\d{3} ?/, ""));
    expect(body).toEqual([
      "post RDMA_WRITE wr_id 1 · 2500 B",
      "RDMA_WRITE_FIRST psn 0x0 · 1024 B",
      "RDMA_WRITE_MIDDLE psn 0x1 · 1024 B",
      "RDMA_WRITE_LAST psn 0x2 · 452 B",
      "ACK psn 0x2",
      "post recv RECV wr_id 2 · 1024 B",
      "post SEND wr_id 3 · 30 B",
      "SEND_ONLY psn 0x3 · 30 B",
      "ACK psn 0x3",
      "CQE RDMA_WRITE wr_id 1 · SUCCESS · 2500 B",
      "CQE RECV wr_id 2 · SUCCESS · 30 B",
      "CQE SEND wr_id 3 · SUCCESS · 30 B",
    ]);
    expect(rows[0]).toMatch(/^0\.000/);
    const lanes = await page.locator(".pt-head .pt-lane-name").allTextContents();
    // Each lane by the QP's one name: the program's variable and the QPN.
    expect(lanes).toEqual(["a (QP 0x11) rxe0", "b (QP 0x12) rxe0"]);
    // Hovering a packet gives every header field.
    const title = await page.locator(".pt-row.pt-request").first().getAttribute("title");
    expect(title).toMatch(
      /RC_RDMA_WRITE_FIRST · rxe0 QP 17 → rxe0 QP 18 · PSN 0x0 · 1024 B payload · AckReq|RC_RDMA_WRITE_FIRST · rxe0 QP 17 → rxe0 QP 18 · PSN 0x0 · 1024 B payload/,
    );
    expect(title).toMatch(/RETH va 0x[0-9a-f]+ rkey 0x[0-9a-f]+ len 2500/);
    // A taller window shows the whole exchange in the pane.
    await page.setViewportSize({ width: 1600, height: 1300 });
    await page.locator(".pt-row[data-kind=cqe]").last().scrollIntoViewIfNeeded();
    await screenshotOf(page, ".inspector-tabs", "packets-timeline");
    await screenshot(page, "packets-window");

    // The other snapshot panes are filled too: MR bytes and counters with their deltas.
    await page.click("[data-tab=mr]");
    expect(await page.locator(".inspector-tabs .hex").first().textContent()).toMatch(
      /68 65 6c 6c 6f 20.*hello from the p/,
    );
    await page.click("[data-tab=counters]");
    const counters = await page.locator(".inspector-tabs table.grid tbody tr").allTextContents();
    expect(counters.some((r) => /sent_pkts\s*6/.test(r))).toBe(true);
    expect(errors).toEqual([]);
  }, 180_000);

  it("shows an RNR NAK, the wait on the clock, and the retry that got through", async () => {
    await page.click("[data-tab=packets]");
    await setEditorCode(page, RNR_PROGRAM);
    await runAndWait(page);
    await page.waitForSelector(".pt-row[data-kind=cqe]", { timeout: 30_000 });
    const rows = (await page.locator(".pt-body .pt-row").allTextContents()).map((r) =>
      r
        .replace(/\s+/g, " ")
        .replace(/^\d+\.\d{3} ?/, "")
        .trim(),
    );
    expect(rows).toEqual([
      "post SEND wr_id 7 · 64 B",
      "SEND_ONLY psn 0x0 · 64 B",
      "RNR NAK (timer 12) psn 0x0",
      expect.stringMatching(/^clock \+\d+(\.\d+)? ms: the program waited \(sleep, pollWait\)$/),
      "post recv RECV wr_id 8 · 64 B",
      // Timer 12 asks for 0.64 ms; rxe's jiffies make it 8 ms, and the row says so.
      expect.stringMatching(
        /^clock \+\d+(\.\d+)? ms: the RNR timer ran out, the requester sends again \(the NAK's timer 12 asks for 0\.64 ms, but rxe waits in whole 4 ms jiffies, .*4 to 8 ms \(the retry went 8 ms after the NAK\)\)$/,
      ),
      "SEND_ONLY psn 0x0 · 64 B",
      "ACK psn 0x0",
      "CQE RECV wr_id 8 · SUCCESS · 64 B",
      "CQE SEND wr_id 7 · SUCCESS · 64 B",
    ]);
    expect(await page.locator(".pt-row.pt-rnr").count()).toBe(1);
    await page.locator(".pt-row[data-kind=cqe]").last().scrollIntoViewIfNeeded();
    await screenshotOf(page, ".inspector-tabs", "packets-rnr");
    expect(errors).toEqual([]);
  }, 180_000);

  it("gives rxe0's and rxe1's QP 0x11 a lane each, and a packet crosses from one to the other", async () => {
    await page.click("[data-tab=packets]");
    await setEditorCode(page, TWO_DEVICES);
    await runAndWait(page);
    await page.waitForSelector(".pt-row[data-kind=cqe]", { timeout: 30_000 });
    // Both QPs are 0x11 and both the program's "qp": each name says its device, once.
    expect(await page.locator(".pt-head .pt-lane-name").allTextContents()).toEqual([
      "qp (QP 0x11, rxe0)",
      "qp (QP 0x11, rxe1)",
    ]);
    // The SEND's arrow spans the track from the left lane to the right one, the ACK's back.
    const span = (sel: string) =>
      page
        .locator(sel)
        .first()
        .locator(".pt-arrow")
        .evaluate((el) => ({
          left: parseFloat((el as HTMLElement).style.left),
          width: parseFloat((el as HTMLElement).style.width),
          right: el.classList.contains("pt-right"),
        }));
    expect(await span(".pt-row.pt-request")).toEqual({ left: 10, width: 80, right: true });
    expect(await span(".pt-row.pt-ack")).toEqual({ left: 10, width: 80, right: false });
    // The SEND takes the wire's time to cross: the clock moved for that, not for a retransmission.
    const waits = await page.locator(".pt-row[data-kind=wait]").allTextContents();
    expect(waits[0]).toMatch(/^clock \+[\d.]+ ms: in flight: the packets above took this long to cross the wire$/);
    expect(waits.join(" ")).not.toMatch(/retransmit/);
    await screenshotOf(page, ".inspector-tabs", "packets-two-devices");
    expect(errors).toEqual([]);
  }, 180_000);
});
