import { describe, expect, it } from "vitest";
import { goalProblems } from "./goals.js";
import type { Check, Lesson, Step, Text } from "./schema.js";

const t = (en: string, zh: string): Text => ({ en, zh });

/** A one-step lesson whose step text is `text` and whose goals are `checks`. */
function lesson(
  checks: Check[],
  text = t("Post a receive, then send.", "先提交接收，再发送。"),
  hints: Text[] = [],
): Lesson {
  const step = {
    id: "one",
    number: 1,
    title: t("One", "一"),
    checks,
    hints,
    text,
    starter: "",
  } as unknown as Step;
  return { folder: "06-tiny", id: "tiny", steps: [step] } as unknown as Lesson;
}

describe("a goal states every constraint of its check", () => {
  it("refuses a wr_id that neither the text nor the goal mentions, naming lesson, step, check and value", () => {
    const check: Check = {
      kind: "wc",
      qp: 1,
      status: "IBV_WC_SUCCESS",
      opcode: "IBV_WC_RECV",
      wr_id: 200,
      goal: t("b's RECV completes successfully", "b 的 RECV 成功完成"),
    };
    const problems = goalProblems(lesson([check]));
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^06-tiny step 1 "one" check 0 \(wc\) \[en\]: wr_id 200 appears neither/);
    expect(problems[1]).toMatch(/\[zh\]: wr_id 200 appears neither/);
    // Stated in the goal, in both languages: accepted.
    const fixed = {
      ...check,
      goal: t("b's RECV (wr_id 200) completes successfully", "b 的 RECV（wr_id 200）成功完成"),
    };
    expect(goalProblems(lesson([fixed]))).toEqual([]);
  });

  it("a value only the step text gives is still missing from the goal list", () => {
    const check: Check = {
      kind: "log",
      key: "index0_is_link_local",
      equals: true,
      goal: t("Index 0 is fe80::", "索引 0 是 fe80::"),
    };
    const text = t("Log `index0_is_link_local` as true.", "把 `index0_is_link_local` 记录为 true。");
    expect(goalProblems(lesson([check], text)).join("\n")).toMatch(
      /does not state log key "index0_is_link_local" \(only the step text/,
    );
  });

  it("does not count a hint as telling the learner (only the third hint named the key)", () => {
    const check: Check = { kind: "log", key: "index0_is_link_local", equals: true };
    const withGenerated = goalProblems(
      lesson([check], undefined, [t("log index0_is_link_local", "记录 index0_is_link_local")]),
    );
    expect(withGenerated).toEqual([]); // the generated goal names the key and the value
    const handWritten = { ...check, goal: t("GID index 0 is link-local", "GID 索引 0 是链路本地地址") };
    expect(
      goalProblems(lesson([handWritten], undefined, [t("index0_is_link_local", "index0_is_link_local")])).join(),
    ).toMatch(/log key "index0_is_link_local" appears neither in the step text nor in the goal/);
  });

  it("refuses a PSN in decimal where the text writes it in hex", () => {
    const text = t("After one SEND, b.rq_psn = 0x124.", "发送一次 SEND 之后，b.rq_psn = 0x124。");
    const decimal: Check = {
      kind: "qp_attr",
      qp: 1,
      field: "rq_psn",
      value: { equals: 292 },
      goal: t("rq_psn is 292", "rq_psn 为 292"),
    };
    expect(goalProblems(lesson([decimal], text))[0]).toMatch(/gives 292 in decimal where the text uses hex \(0x124\)/);
    expect(goalProblems(lesson([{ ...decimal, goal: t("rq_psn is 0x124", "rq_psn 为 0x124") }], text))).toEqual([]);
    // A generated goal writes it in hex.
    const { goal: _goal, ...generated } = decimal;
    expect(goalProblems(lesson([generated], text))).toEqual([]);
  });

  it("wants the field named with its value, in each language separately", () => {
    const check: Check = {
      kind: "wc",
      qp: 1,
      status: "IBV_WC_SUCCESS",
      opcode: "IBV_WC_RECV",
      byte_len: { equals: 48 },
      goal: t("b's RECV succeeds with 48 bytes", "b 的 RECV 成功完成，byte_len 为 48"),
    };
    const problems = goalProblems(lesson([check]));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/\[en\]: the goal states the value but not the field: byte_len = 48/);
  });

  it("accepts words for small counts and for success", () => {
    const none: Check = { kind: "wc", qp: 1, count: { equals: 0 }, goal: t("b sees no completion", "b 没有任何完成") };
    const once: Check = {
      kind: "verb_count",
      verb: "ibv_post_send",
      count: { equals: 1 },
      goal: t("One ibv_post_send call", "只调用一次 ibv_post_send"),
    };
    expect(goalProblems(lesson([none, once]))).toEqual([]);
    expect(
      goalProblems(lesson([{ ...once, goal: t("ibv_post_send moves it all", "ibv_post_send 发送全部") }])).join(),
    ).toMatch(/call count = 1/);
  });

  it("holds for every generated goal, of every check kind", () => {
    const checks: Check[] = [
      { kind: "qp_state", qp: 0, state: "IBV_QPS_RTS" },
      { kind: "qp_attr", qp: 0, field: "sq_psn", value: { equals: 0x124 } },
      { kind: "qp_attr", qp: 0, field: "max_dest_rd_atomic", value: { min: 1, max: 16 } },
      {
        kind: "wc",
        qp: 1,
        status: "IBV_WC_LOC_QP_OP_ERR",
        opcode: "IBV_WC_RECV_RDMA_WITH_IMM",
        byte_len: { equals: 0 },
        wr_id: 7,
        imm_data: 0x1234,
        wc_flags_set: ["IBV_WC_WITH_IMM"],
        wc_flags_clear: ["IBV_WC_GRH"],
        count: { equals: 3 },
      },
      { kind: "error", verb: "ibv_modify_qp", code: "EINVAL", attribute: "IBV_QP_PORT" },
      { kind: "verb_count", verb: "verbslab_poll_wait", count: { max: 12 }, ok: true },
      { kind: "counter", device: "rxe0", name: "sent_pkts", delta: { min: 4 } },
      { kind: "mr_bytes", mr: 1, offset: 40, utf8: "datagram" },
      { kind: "mr_bytes", mr: 0, hex: "00ff" },
      { kind: "log", key: "fetched", equals: [0, 5, 10] },
      { kind: "log", key: "chosen_gid", prefix: "::ffff:" },
      { kind: "log", key: "us", value: { min: 0 } },
    ];
    expect(goalProblems(lesson(checks))).toEqual([]);
  });
});
