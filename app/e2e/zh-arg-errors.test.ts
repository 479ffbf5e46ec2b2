/**
 * The Chinese UI words a learner's JavaScript argument mistakes in Chinese, from the error's data:
 * a string where an SGE's length belongs (the simulator's TypeError, across the bridge), the
 * same mistake in mr.sge (the worker's own check), and the runner's own refusals (a verb not
 * awaited, no default export). The error banner, the Log's "program ended" line, the transcript
 * row's title and the lesson's note on the error say it with the field and the value, no
 * English sentence around them; verbs.h, field and class names stay.
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

/** Code names, numbers and ranges taken out: what is left is the sentence around them. */
const prose = (s: string) => s.replace(/[\w.[\]*|()`…-]*[_\d.[\]`][\w.[\]*|()`…-]*/g, " ");
const ENGLISH = /\b(the|is|are|and|of|no|not|has|its|it|to|an?|from|on|with|must|got|string|integer|awaited|was)\b/i;
const CJK = /[\u4e00-\u9fff]/;

function expectChinese(text: string): void {
  expect(text).toMatch(CJK);
  expect(prose(text), text).not.toMatch(ENGLISH);
}

/** The run's error banner: the names in its code tags, its reason and its line, once it shows. */
async function bannerOf(page: Page): Promise<{ names: string[]; reason: string; line: string | null }> {
  const banner = page.locator("[data-testid=run-error]");
  await banner.waitFor();
  const line = banner.locator("[data-testid=error-line]");
  return {
    names: await banner.locator(":scope > code").allTextContents(),
    reason: (await banner.locator("[data-testid=error-reason]").textContent()) ?? "",
    line: (await line.count()) ? await line.textContent() : null,
  };
}

/** A QP on rxe0 and an MR, then `post` (code using qp and mr). */
const program = (
  post: string,
) => `import { IBV_ACCESS_LOCAL_WRITE, IBV_QPT_RC, IBV_WR_SEND, type Verbs } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(16);
  const mr = await pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
  const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const four = "4" as unknown as number;
  ${post}
}
`;

describe.skipIf(!hasChromium)("the Chinese UI words argument errors in Chinese", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ lab, browser, page, errors } = await openLab(12));
    await selectLesson(page, "one-sided-writes");
    await page.selectOption("select[aria-label=language]", "zh");
  }, 240_000);

  afterAll(() => closeLab(lab, browser));

  it("a string where wr.sg_list[0].length belongs: the banner, the Log, the transcript and the lesson's note", async () => {
    await setEditorCode(
      page,
      program(
        "await qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [{ addr: mr.addr, length: four, lkey: mr.lkey }] });",
      ),
    );
    await runAndWait(page);
    const { names, reason, line } = await bannerOf(page);
    expect(names).toEqual(["ibv_post_send", "TypeError"]);
    expect(reason).toBe('wr[0].sg_list[0].length 必须是整数，传入的是字符串 "4"');
    expectChinese(reason);
    // Where: the call's line, in Chinese (the English message carried it in its sentence).
    expect(line).toMatch(/main\.ts 第 11 行/);

    await page.click("[data-tab=log]");
    expect(await page.locator(".log-line").last().textContent()).toBe(`程序结束：TypeError：ibv_post_send：${reason}`);
    await page.click("[data-tab=transcript]");
    expect(await page.locator("td.err").last().getAttribute("title")).toBe(reason);
    // A typo is the learner's, not a disagreement between the QP model and the device.
    expect(await page.locator(".transcript tr.diverged").count()).toBe(0);
    expect(await page.locator(".inspector .badge.bad").count()).toBe(0);
    const note = (await page.locator(".bad-hint", { hasText: "ibv_post_send" }).first().textContent()) ?? "";
    expect(note).toContain(`ibv_post_send: ${reason}`);
    // Named by its class, as the banner names it (not a bare "Error").
    expect(note).toMatch(/^TypeError /);
    await screenshot(page, "zh-50-sge-length-string");
  }, 120_000);

  it("the same mistake in mr.sge (checked in the program's worker): in Chinese, with the MR's bounds", async () => {
    await setEditorCode(
      page,
      program("await qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [mr.sge(0, four)] });"),
    );
    await runAndWait(page);
    const typed = await bannerOf(page);
    expect(typed.names).toEqual(["sge", "TypeError"]);
    expect(typed.reason).toBe('length 必须是整数，传入的是字符串 "4"');

    await setEditorCode(
      page,
      program("await qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, sg_list: [mr.sge(60, 8)] });"),
    );
    await runAndWait(page);
    const range = await bannerOf(page);
    expect(range.names).toEqual(["sge", "RangeError"]);
    expect(range.reason).toBe("从偏移 60 起的 8 字节超出了这个 MR 的末尾（长度 64）");
    expectChinese(range.reason);
  }, 120_000);

  it("the runner's own refusals: a verb not awaited, and no default export", async () => {
    await setEditorCode(page, program("void verbs.sleep(50);"));
    await runAndWait(page);
    const unawaited = await bannerOf(page);
    expect(unawaited.names).toEqual(["TypeError"]);
    expect(unawaited.reason).toBe("sleep(…) 没有被 await：main 返回时它还在运行（请写成 `await …sleep(…)`）");
    expectChinese(unawaited.reason);

    await setEditorCode(
      page,
      'import type { Verbs } from "verbslab";\n\nexport async function main(verbs: Verbs) {}\n',
    );
    await runAndWait(page);
    const noDefault = await bannerOf(page);
    expect(noDefault.reason).toBe("程序必须 `export default async function main(verbs) { … }`");
    await screenshot(page, "zh-51-no-default-export");
    expect(errors).toEqual([]);
  }, 120_000);
});
