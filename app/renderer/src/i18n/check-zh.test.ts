/**
 * The divergence line (model expected X; the device did Y) and its note in both languages, worded
 * from the check's data: each kind of outcome in Chinese with no English sentence around its
 * code names, the English unchanged, and a transcript recorded before the data still shown in
 * its English. Then a real disagreement on the simulator (IBV_QP_ALT_PATH on RoCE: the model
 * allows it, rxe refuses it), through the session and the reducer, as the Inspector words it.
 */
import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../../../sim/index.js";
import * as c from "../../../../verbs/constants.js";
import { verbFailureText } from "../../../../verbs/verb-failure.js";
import { createSession } from "../../../session/session.js";
import type { Check, CheckOutcome, VerbEvent } from "../../../session/transcript.js";
import type { Verbs } from "../../../session/verbs-api.js";
import { STRINGS } from "../i18n.js";
import { buildView } from "../model/reduce.js";
import type { Divergence } from "../model/view.js";
import { checkNoteZh, checkOutcomeZh } from "./check-zh.js";
import { verbFailureZh } from "./verb-failure-zh.js";

const { en, zh } = STRINGS;

/** Code names, numbers and arrows taken out: what is left is the sentence around them. */
const prose = (s: string) => s.replace(/[\w.[\]*|()→-]*[_\d.[\]→][\w.[\]*|()→-]*/g, " ");
const ENGLISH =
  /\b(the|is|are|and|of|no|not|has|its|it|to|an?|from|on|with|call|succeeds?|succeeded|stays|expected|device|model)\b/i;
const CJK = /[\u4e00-\u9fff]/;

function expectChinese(text: string): void {
  expect(text).toMatch(CJK);
  expect(prose(text), text).not.toMatch(ENGLISH);
}

/** One sample of each kind: a kind without one is a compile error. */
const SAMPLES: { [K in CheckOutcome["kind"]]: Extract<CheckOutcome, { kind: K }> } = {
  moved: { kind: "moved", from: c.IBV_QPS_INIT, to: c.IBV_QPS_RTR },
  accepted: { kind: "accepted" },
  failed: {
    kind: "failed",
    code: "EINVAL",
    reason: verbFailureText({ kind: "send-needs-rts", state: c.IBV_QPS_INIT }),
    why: { kind: "send-needs-rts", state: c.IBV_QPS_INIT },
  },
};

/** A divergence as the reducer copies it from a check. */
const divergence = (expected: CheckOutcome, actual: CheckOutcome, english: Omit<Check, "agree">): Divergence => ({
  ...english,
  outcomes: { expected, actual },
});

describe("a check's outcomes in Chinese", () => {
  it("words each kind with the same states and errno, and the reason by verbFailureZh", () => {
    expect(checkOutcomeZh(SAMPLES.moved)).toBe("INIT → RTR");
    expect(checkOutcomeZh({ kind: "moved", from: c.IBV_QPS_RTS, to: c.IBV_QPS_RTS })).toBe("保持 RTS");
    expect(checkOutcomeZh(SAMPLES.accepted)).toBe("调用成功");
    expect(checkOutcomeZh(SAMPLES.failed)).toBe(`EINVAL：${verbFailureZh(SAMPLES.failed.why!)}`);
    expectChinese(checkOutcomeZh(SAMPLES.failed));
    // No reason: the errno alone; a reason without why (none in the model's data today) stays as given.
    expect(checkOutcomeZh({ kind: "failed", code: "ENOMEM" })).toBe("ENOMEM");
    expect(checkOutcomeZh({ kind: "failed", code: "EINVAL", reason: "kept" })).toBe("EINVAL：kept");
  });

  it("words the note by which way the model was wrong", () => {
    expectChinese(checkNoteZh(SAMPLES.failed));
    expectChinese(checkNoteZh(SAMPLES.moved));
    expect(checkNoteZh(SAMPLES.failed)).toMatch(/预期这个调用会失败/);
    expect(checkNoteZh(SAMPLES.accepted)).toMatch(/预期这个调用会成功/);
  });
});

describe("the divergence line", () => {
  const cases: [Divergence, string, string][] = [
    [
      divergence(
        SAMPLES.moved,
        {
          kind: "failed",
          code: "EINVAL",
          reason: verbFailureText({ kind: "no-alt-path" }),
          why: { kind: "no-alt-path" },
        },
        {
          expected: "INIT → RTR",
          actual: `EINVAL: ${verbFailureText({ kind: "no-alt-path" })}`,
          note: "the model expected this call to succeed: the backend knows something the model does not",
        },
      ),
      "model expected INIT → RTR; the device did EINVAL: RoCE has no alternate paths (ib_core refuses IBV_QP_ALT_PATH)",
      "模型预期 INIT → RTR；设备实际 EINVAL：RoCE 没有备用路径（ib_core 拒绝 IBV_QP_ALT_PATH）",
    ],
    [
      divergence(SAMPLES.accepted, SAMPLES.failed, {
        expected: "the call succeeds",
        actual: `EINVAL: ${SAMPLES.failed.reason}`,
        note: "the model expected this call to succeed: the backend knows something the model does not",
      }),
      `model expected the call succeeds; the device did EINVAL: ${SAMPLES.failed.reason}`,
      `模型预期 调用成功；设备实际 EINVAL：${verbFailureZh(SAMPLES.failed.why!)}`,
    ],
    [
      divergence(
        { kind: "failed", code: "EINVAL", why: { kind: "send-needs-rts", state: c.IBV_QPS_RTR } },
        { kind: "moved", from: c.IBV_QPS_RTS, to: c.IBV_QPS_RTS },
        {
          expected: "EINVAL",
          actual: "stays RTS",
          note: "the model expected this call to fail: the backend accepted something the model refuses",
        },
      ),
      "model expected EINVAL; the device did stays RTS",
      `模型预期 EINVAL：${verbFailureZh({ kind: "send-needs-rts", state: c.IBV_QPS_RTR })}；设备实际 保持 RTS`,
    ],
  ];

  it("reads in Chinese from the check's data, and in English as before", () => {
    for (const [d, english, chinese] of cases) {
      expect(en.divergence(d)).toBe(english);
      expect(zh.divergence(d)).toBe(chinese);
      expectChinese(zh.divergence(d));
      expect(en.divergenceNote(d)).toBe(d.note);
      expectChinese(zh.divergenceNote(d)!);
    }
  });

  it("shows a transcript recorded before the data in its English, in either language", () => {
    const old: Divergence = {
      expected: "INIT → RTR",
      actual: "EINVAL",
      note: "the model expected this call to succeed: the backend knows something the model does not",
    };
    expect(zh.divergence(old)).toBe("模型预期 INIT → RTR；设备实际 EINVAL");
    expect(zh.divergenceNote(old)).toBe(old.note);
    expect(en.divergence(old)).toBe("model expected INIT → RTR; the device did EINVAL");
  });

  it("words a real disagreement on the simulator: INIT → RTR with IBV_QP_ALT_PATH on RoCE", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 1 }) });
    await s.run(async (verbs: Verbs) => {
      const ctx = await verbs.openDevice("rxe0");
      const gid = await ctx.queryGid(1, 0);
      const pd = await ctx.allocPd();
      const cq = await ctx.createCq(16);
      const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
      const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: c.IBV_QPT_RC });
      await qp.modify(
        { qp_state: c.IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: 0 },
        c.IBV_QP_STATE | c.IBV_QP_PKEY_INDEX | c.IBV_QP_PORT | c.IBV_QP_ACCESS_FLAGS,
      );
      await qp
        .modify(
          {
            qp_state: c.IBV_QPS_RTR,
            path_mtu: c.IBV_MTU_1024,
            dest_qp_num: qp.qp_num,
            rq_psn: 0,
            max_dest_rd_atomic: 1,
            min_rnr_timer: 12,
            ah_attr: { is_global: 1, port_num: 1, grh: { dgid: gid, sgid_index: 0, hop_limit: 1 } },
          },
          c.IBV_QP_STATE |
            c.IBV_QP_AV |
            c.IBV_QP_PATH_MTU |
            c.IBV_QP_DEST_QPN |
            c.IBV_QP_RQ_PSN |
            c.IBV_QP_MAX_DEST_RD_ATOMIC |
            c.IBV_QP_MIN_RNR_TIMER |
            c.IBV_QP_ALT_PATH,
        )
        .catch(() => undefined);
    });
    const modify = s.events().filter((e): e is VerbEvent => e.kind === "verb" && e.method === "modify")[1]!;
    expect(modify.check).toMatchObject({ agree: false, expected: "INIT → RTR" });
    const d = buildView({ events: s.events() }).qps[0]!.divergence!;
    expect(en.divergence(d)).toBe(
      "model expected INIT → RTR; the device did EINVAL: RoCE has no alternate paths (ib_core refuses IBV_QP_ALT_PATH)",
    );
    expect(zh.divergence(d)).toBe(
      "模型预期 INIT → RTR；设备实际 EINVAL：RoCE 没有备用路径（ib_core 拒绝 IBV_QP_ALT_PATH）",
    );
    expect(zh.divergenceNote(d)).toBe("模型预期这个调用会成功：后端知道模型不知道的情况");
    // The transcript row carries the same data.
    const row = buildView({ events: s.events() }).transcript.find((r) => r.seq === modify.seq)!;
    expect(zh.divergence(row.divergence!)).toBe(zh.divergence(d));
  });
});
