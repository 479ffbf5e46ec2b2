/**
 * The Chinese UI explains a beginner's remote mistakes in Chinese: a WRITE past the end of the
 * peer's MR, a WRITE with rkey 0, a WRITE to a QP whose qp_access_flags lack REMOTE_WRITE, a SEND
 * with no receive posted (RNR), a CQ that fits its WRs only by rxe's rounding, and a CQ destroyed
 * with completion events not acknowledged (libibverbs would wait for ever). Each reason
 * under the diagram (and on the CQ tab's row) is Chinese, has no English sentence around its code
 * names, and still names the values: the byte counts, the rkey, the flag, the QP, the tries.
 * Then the verbs' own refusals from other lessons (the error banner, the transcript row's title,
 * the CM tab's row): reg_mr with REMOTE_WRITE and no LOCAL_WRITE (lesson 3), create_qp over
 * rxe's max_send_wr (lesson 4), post_recv in RESET (lesson 9), and rdma_create_qp with a PD of
 * the program's own context instead of librdmacm's (lesson 17).
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
import { breakItOf, solutionOf } from "./lessons.js";

interface Mistake {
  /** The WR: an RDMA WRITE (remote address and rkey as code) or a SEND. */
  op: "write" | "send";
  remoteAddr?: string;
  rkey?: string;
  /** The receiver QP's qp_access_flags (code). */
  receiverAccess?: string;
  /** Receives posted on the receiver before the WR. */
  recvs?: number;
  rnrRetry?: number;
}

/**
 * Two RC QPs on rxe0 in one program, connected, then one WR from `sender` to `receiver`. The CQ
 * asks for 10 entries and the QPs' queues hold 15 WRs: it works only because rxe makes it 15.
 */
function program(m: Mistake): string {
  const wr =
    m.op === "write"
      ? `{ wr_id: 7, opcode: IBV_WR_RDMA_WRITE, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 64)],
    rdma: { remote_addr: ${m.remoteAddr}, rkey: ${m.rkey} } }`
      : `{ wr_id: 7, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 16)] }`;
  return `import {
  IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE, IBV_MTU_1024, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
  IBV_QPT_RC, IBV_QP_ACCESS_FLAGS, IBV_QP_AV, IBV_QP_DEST_QPN, IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER, IBV_QP_PATH_MTU, IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY,
  IBV_QP_RQ_PSN, IBV_QP_SQ_PSN, IBV_QP_STATE, IBV_QP_TIMEOUT, IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE, IBV_WR_SEND,
  type Verbs,
} from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(10);
  const mr = await pd.regMr(256, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  const cap = { max_send_wr: 5, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const sender = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const receiver = await pd.createQp({ send_cq: cq, recv_cq: cq, cap: { ...cap, max_recv_wr: 4 }, qp_type: IBV_QPT_RC });
  for (const [qp, peer, access] of [[sender, receiver, IBV_ACCESS_REMOTE_WRITE], [receiver, sender, ${m.receiverAccess ?? "IBV_ACCESS_REMOTE_WRITE"}]] as const) {
    await qp.modify({ qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: access },
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    await qp.modify({ qp_state: IBV_QPS_RTR, path_mtu: IBV_MTU_1024, dest_qp_num: peer.qp_num, rq_psn: 0,
      max_dest_rd_atomic: 1, min_rnr_timer: 1,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid: gid, sgid_index: 0, hop_limit: 1 } } },
      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    await qp.modify({ qp_state: IBV_QPS_RTS, timeout: 14, retry_cnt: 7, rnr_retry: ${m.rnrRetry ?? 7}, sq_psn: 0, max_rd_atomic: 1 },
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
  }
  for (let i = 0; i < ${m.recvs ?? 0}; i++) await receiver.postRecv({ wr_id: 100 + i, sg_list: [mr.sge(128, 64)] });
  await sender.postSend(${wr});
  await cq.pollWait(1, 5000);
}
`;
}

/** Code names, numbers and ranges taken out: what is left is the sentence around them. */
const prose = (s: string) => s.replace(/[\w.[\]*|()-]*[_\d.[\]][\w.[\]*|()-]*/g, " ");
const ENGLISH = /\b(the|is|are|and|of|no|not|has|its|it|to|an?|from|on|with|lacks?|names?|outside|after|tries)\b/i;
const CJK = /[\u4e00-\u9fff]/;

/** The reason under the diagram: the failure line after its status and WR ("✗ sender …: STATUS (wr_id 7, …) — "). */
async function failureReason(page: Page): Promise<{ status: string | null; reason: string }> {
  const failure = page.locator("[data-testid=wc-failure]").first();
  await failure.waitFor();
  const text = (await failure.textContent()) ?? "";
  return { status: await failure.getAttribute("data-status"), reason: text.slice(text.indexOf(" — ") + 3) };
}

function expectChinese(text: string): void {
  expect(text).toMatch(CJK);
  expect(prose(text), text).not.toMatch(ENGLISH);
}

/** The run's error banner: its errno, attribute and reason, once it shows. */
async function bannerOf(page: Page): Promise<{ code: string | null; attribute: string | null; reason: string }> {
  const banner = page.locator("[data-testid=run-error]");
  await banner.waitFor();
  return {
    code: await banner.getAttribute("data-code"),
    attribute: await banner.getAttribute("data-attribute"),
    reason: (await banner.locator("[data-testid=error-reason]").textContent()) ?? "",
  };
}

describe.skipIf(!hasChromium)("the Chinese UI explains remote mistakes in Chinese", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ lab, browser, page, errors } = await openLab(11));
    await selectLesson(page, "one-sided-writes");
    await page.selectOption("select[aria-label=language]", "zh");
  }, 240_000);

  afterAll(() => closeLab(lab, browser));

  it("a WRITE past the MR's end, and the CQ sized by rxe's rounding", async () => {
    await setEditorCode(page, program({ op: "write", remoteAddr: "mr.addr + 240", rkey: "mr.rkey" }));
    await runAndWait(page);
    const { status, reason } = await failureReason(page);
    expect(status).toBe("IBV_WC_REM_ACCESS_ERR");
    expectChinese(reason);
    // The range, the 64 bytes, the 48 past the end, the responder QP.
    expect(reason).toMatch(
      /rxe0 上的 QP 0x[0-9a-f]+：\[0x[0-9a-f]+, 0x[0-9a-f]+\)（64 字节）超出了该 MR .*越过末尾 48 字节/,
    );
    expect(reason).toContain("确切原因：来自模拟器的响应方");

    const notice = page.locator("[data-testid=session-notice][data-notice=cq_rounded_up]");
    const noticeText = ((await notice.textContent()) ?? "").replace(/^⚠\s*/, "");
    expectChinese(noticeText);
    expect(noticeText).toMatch(/请求的 cqe 是 10，rxe0 返回了 cqe 15/);
    expect(noticeText).toMatch(/sender \(QP 0x[0-9a-f]+\)：5 个发送 \+ 1 个接收/);
    expect(noticeText).toContain("cqe 设为 ≥ 15");
    await screenshot(page, "zh-40-write-past-the-end");

    // The CQ tab's row says the same in Chinese.
    await page.click("[data-tab=cq]");
    const why =
      (await page.locator(".wc[data-status=IBV_WC_REM_ACCESS_ERR] [data-testid=wc-why]").first().textContent()) ?? "";
    expectChinese(why);
    expect(why).toMatch(/^原因：.*（64 字节）超出了该 MR/);
    await screenshot(page, "zh-41-write-past-the-end-cq");
  }, 120_000);

  it("a WRITE with rkey 0", async () => {
    await setEditorCode(page, program({ op: "write", remoteAddr: "mr.addr", rkey: "0" }));
    await runAndWait(page);
    const { status, reason } = await failureReason(page);
    expect(status).toBe("IBV_WC_REM_ACCESS_ERR");
    expectChinese(reason);
    expect(reason).toMatch(/rxe0 上的 QP 0x[0-9a-f]+：rkey 0 不指向任何 MR/);
    await screenshot(page, "zh-42-rkey-0");
  }, 120_000);

  it("a WRITE to a QP whose qp_access_flags lack REMOTE_WRITE", async () => {
    await setEditorCode(page, program({ op: "write", remoteAddr: "mr.addr", rkey: "mr.rkey", receiverAccess: "0" }));
    await runAndWait(page);
    const { status, reason } = await failureReason(page);
    expect(status).toBe("IBV_WC_REM_INV_REQ_ERR");
    expectChinese(reason);
    expect(reason).toMatch(/rxe0 上的 QP 0x[0-9a-f]+：它的 qp_access_flags 缺少 IBV_ACCESS_REMOTE_WRITE（现在是 无）/);
    await screenshot(page, "zh-43-qp-access");
  }, 120_000);

  it("a SEND with no receive posted: RNR", async () => {
    await setEditorCode(page, program({ op: "send", rnrRetry: 1 }));
    await runAndWait(page);
    const { status, reason } = await failureReason(page);
    expect(status).toBe("IBV_WC_RNR_RETRY_EXC_ERR");
    expectChinese(reason);
    expect(reason).toMatch(
      /SEND 到达时 rxe0 上的 QP 0x[0-9a-f]+ 没有提交任何接收 WQE.*共尝试 2 次（rnr_retry 1）后请求方放弃了/,
    );
    await screenshot(page, "zh-44-rnr");
  }, 120_000);

  it("reg_mr with REMOTE_WRITE and no LOCAL_WRITE (lesson 3): the banner and the transcript row in Chinese", async () => {
    await setEditorCode(page, breakItOf("protection-domains-and-memory", 2, "remote-write-alone"));
    await runAndWait(page);
    const { code, attribute, reason } = await bannerOf(page);
    expect([code, attribute]).toEqual(["EINVAL", "IBV_ACCESS_LOCAL_WRITE"]);
    expectChinese(reason);
    expect(reason).toBe("REMOTE_WRITE 和 REMOTE_ATOMIC 还需要同时设置 IBV_ACCESS_LOCAL_WRITE");
    await page.click("[data-tab=transcript]");
    const title = (await page.locator("td.err").last().getAttribute("title")) ?? "";
    expect(title).toBe(reason);
    // The goal list's note on the error the program ended with says it too.
    const note = (await page.locator(".bad-hint", { hasText: "ibv_reg_mr" }).first().textContent()) ?? "";
    expect(note).toBe(`EINVAL ibv_reg_mr: ${reason}`);
    await screenshot(page, "zh-46-reg-mr-remote-write-alone");
  }, 120_000);

  it("create_qp with max_send_wr above rxe's limit (lesson 4): the value and the limit, in Chinese", async () => {
    const code = `import { IBV_QPT_RC, type Verbs } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(16);
  const cap = { max_send_wr: 2000000, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
}
`;
    await setEditorCode(page, code);
    await runAndWait(page);
    const { code: errno, attribute, reason } = await bannerOf(page);
    expect([errno, attribute]).toEqual(["EINVAL", "cap.max_send_wr"]);
    expectChinese(reason);
    expect(reason).toBe("cap.max_send_wr 为 2000000，超出了 0..1048576（rxe 的上限）");
    // The Log's last line, where the program ended, says it too.
    await page.click("[data-tab=log]");
    expect(await page.locator(".log-line").last().textContent()).toBe(`程序结束：EINVAL：ibv_create_qp：${reason}`);
    await screenshot(page, "zh-47-create-qp-max-send-wr");
  }, 120_000);

  it("post_recv while the QP is in RESET (lesson 9): the refusal in Chinese", async () => {
    await setEditorCode(page, breakItOf("when-it-breaks-1", 1, "recv-in-reset"));
    await runAndWait(page);
    const { code, attribute, reason } = await bannerOf(page);
    expect([code, attribute]).toEqual(["EINVAL", "qp_state"]);
    expectChinese(reason);
    expect(reason).toContain("RESET");
    expect(reason).toMatch(/RESET 状态下不能提交接收请求|ibv_post_recv 需要 QP 已离开 RESET/);
    await screenshot(page, "zh-48-post-recv-in-reset");
  }, 120_000);

  it("rdma_create_qp with a PD of the program's own context (lesson 17): the banner and the CM tab in Chinese", async () => {
    await setEditorCode(page, breakItOf("connecting-with-rdma-cm", 1, "own-context"));
    await runAndWait(page);
    const { code, attribute, reason } = await bannerOf(page);
    expect([code, attribute]).toEqual(["EINVAL", "pd"]);
    expectChinese(reason);
    expect(reason).toContain("这个 PD 属于另一个 ibv_context：请在 id.verbs");
    await page.click("[data-tab=cm]");
    const row = page.locator(".cm-row.call.bad", { hasText: "rdma_create_qp" }).first();
    const detail = (await row.locator(".cm-detail").textContent()) ?? "";
    expect(detail).toBe(reason);
    await screenshot(page, "zh-49-cm-own-context");
  }, 120_000);

  it("destroying a CQ whose completion events were not acknowledged: the refusal in Chinese, with the count", async () => {
    // Lesson 4's event loop without its ackEvents, then the QPs and the CQ destroyed.
    const code = solutionOf("completion-queues", 2)
      .replace("    await cq.ackEvents(1);\n", "")
      .replace(
        '  await verbs.log("events", events);',
        "  await a.destroy();\n  await b.destroy();\n  await cq.destroy();",
      );
    expect(code).not.toContain("ackEvents");
    await setEditorCode(page, code);
    await runAndWait(page);
    const banner = page.locator("[data-testid=run-error]");
    await banner.waitFor();
    expect(await banner.getAttribute("data-code")).toBe("EBUSY");
    const reason = (await banner.locator("[data-testid=error-reason]").textContent()) ?? "";
    expectChinese(reason);
    expect(reason).toMatch(/libibverbs 会永远等下去：有 (\d+) 个完成事件还没有确认.*cq\.ackEvents\(\1\)/);
    await screenshot(page, "zh-45-unacked-destroy");
    expect(errors).toEqual([]);
  }, 120_000);
});
