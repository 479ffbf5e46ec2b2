/**
 * The Chinese UI words a disagreement between the QP model and the device in Chinese, from the
 * check's data: INIT → RTR with IBV_QP_ALT_PATH on rxe0, which the model's transition table
 * allows and rxe refuses (RoCE has no alternate paths). The Inspector's divergence line and its
 * tooltip (the note), and the transcript row's title, name the states, the errno and the
 * attribute, with no English sentence around them.
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

/** Code names, numbers and arrows taken out: what is left is the sentence around them. */
const prose = (s: string) => s.replace(/[\w.[\]*|()→-]*[_\d.[\]→][\w.[\]*|()→-]*/g, " ");
const ENGLISH =
  /\b(the|is|are|and|of|no|not|has|its|it|to|an?|from|on|with|call|succeeds?|succeeded|stays|expected|device|model|did|paths?|refuses)\b/i;
const CJK = /[\u4e00-\u9fff]/;

function expectChinese(text: string): void {
  expect(text).toMatch(CJK);
  expect(prose(text), text).not.toMatch(ENGLISH);
}

/** One RC QP on rxe0 taken to INIT, then to RTR with IBV_QP_ALT_PATH in the mask (caught). */
const PROGRAM = `import {
  IBV_MTU_1024, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_RC, IBV_QP_ACCESS_FLAGS, IBV_QP_ALT_PATH, IBV_QP_AV,
  IBV_QP_DEST_QPN, IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MIN_RNR_TIMER, IBV_QP_PATH_MTU, IBV_QP_PKEY_INDEX,
  IBV_QP_PORT, IBV_QP_RQ_PSN, IBV_QP_STATE, type Verbs,
} from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(16);
  const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  await qp.modify({ qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: 0 },
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  try {
    await qp.modify({ qp_state: IBV_QPS_RTR, path_mtu: IBV_MTU_1024, dest_qp_num: qp.qp_num, rq_psn: 0,
      max_dest_rd_atomic: 1, min_rnr_timer: 12,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid: gid, sgid_index: 0, hop_limit: 1 } } },
      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
        IBV_QP_MIN_RNR_TIMER | IBV_QP_ALT_PATH);
  } catch {
    // rxe refuses it; the model said it would go through.
  }
}
`;

const LINE = "模型预期 INIT → RTR；设备实际 EINVAL：RoCE 没有备用路径（ib_core 拒绝 IBV_QP_ALT_PATH）";

describe.skipIf(!hasChromium)("the Chinese UI words a model-vs-device divergence in Chinese", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ lab, browser, page, errors } = await openLab(14));
    await selectLesson(page, "one-sided-writes");
    await page.selectOption("select[aria-label=language]", "zh");
  }, 240_000);

  afterAll(() => closeLab(lab, browser));

  it("INIT → RTR with IBV_QP_ALT_PATH: the Inspector's line and note, and the transcript row's title", async () => {
    await setEditorCode(page, PROGRAM);
    await runAndWait(page);

    const badge = page.locator(".inspector .badge.bad", { hasText: "不一致" });
    await badge.waitFor();
    const line = page.locator(".inspector [data-testid=divergence]");
    expect(await line.textContent()).toBe(LINE);
    expectChinese(LINE);
    const note = (await line.getAttribute("title")) ?? "";
    expect(note).toBe("模型预期这个调用会成功：后端知道模型不知道的情况");
    expectChinese(note);

    await page.click("[data-tab=transcript]");
    const rows = page.locator(".transcript tr.diverged");
    expect(await rows.count()).toBe(1);
    expect(await rows.first().getAttribute("title")).toBe(LINE);
    await screenshot(page, "zh-60-divergence");
    expect(errors).toEqual([]);
  }, 120_000);
});
