import { describe, expect, it } from "vitest";
import {
  IBV_QPS_ERR,
  IBV_QPS_RTS,
  IBV_WC_GRH,
  IBV_WC_RECV,
  IBV_WC_REM_ACCESS_ERR,
  IBV_WC_SUCCESS,
} from "../verbs/constants.js";
import type { QpAttr } from "../verbs/types.js";
import {
  constValue,
  describeCheck,
  goalContext,
  evaluateCheck,
  evaluateChecks,
  type RunRecord,
  type RunWc,
} from "./checks.js";
import { parseLog } from "./record.js";
import type { Check } from "./schema.js";

const wc = (over: Partial<RunWc>): RunWc => ({
  wr_id: 0,
  status: IBV_WC_SUCCESS,
  opcode: 0,
  vendor_err: 0,
  byte_len: 0,
  imm_data: 0,
  qp_num: 0x11,
  src_qp: 0,
  wc_flags: 0,
  pkey_index: 0,
  slid: 0,
  sl: 0,
  dlid_path_bits: 0,
  ...over,
});

function run(over: Partial<RunRecord> = {}): RunRecord {
  return {
    calls: [],
    wcs: [],
    qps: [
      { qp_num: 0x11, attr: { qp_state: IBV_QPS_ERR, sq_psn: 5 } as QpAttr },
      { qp_num: 0x12, attr: { qp_state: IBV_QPS_RTS } as QpAttr },
    ],
    mrs: [{ reads: [{ offset: 0, bytes: new TextEncoder().encode("hello") }] }],
    logs: [],
    counters: { rxe0: { sent_pkts: 4 } },
    ...over,
  };
}

describe("checks", () => {
  it("resolves constants by verbs.h name", () => {
    expect(constValue("IBV_WC_REM_ACCESS_ERR")).toBe(IBV_WC_REM_ACCESS_ERR);
    expect(constValue(7)).toBe(7);
    expect(() => constValue("IBV_NOPE")).toThrow();
  });

  it("judges QP state by creation index", () => {
    expect(evaluateCheck({ kind: "qp_state", qp: 0, state: "IBV_QPS_ERR" }, run()).passed).toBe(true);
    expect(evaluateCheck({ kind: "qp_state", qp: 1, state: "IBV_QPS_ERR" }, run()).passed).toBe(false);
    expect(evaluateCheck({ kind: "qp_state", qp: 2, state: "IBV_QPS_ERR" }, run()).passed).toBe(false);
  });

  it("matches completions on qp, status, opcode, flags and counts them", () => {
    const r = run({ wcs: [wc({ qp_num: 0x12, opcode: IBV_WC_RECV, byte_len: 11, wc_flags: IBV_WC_GRH })] });
    const recv = { kind: "wc", qp: 1, status: "IBV_WC_SUCCESS", opcode: "IBV_WC_RECV" } as const;
    expect(evaluateCheck({ ...recv, byte_len: { equals: 11 }, wc_flags_set: ["IBV_WC_GRH"] }, r).passed).toBe(true);
    expect(evaluateCheck({ ...recv, wc_flags_set: ["IBV_WC_WITH_IMM"] }, r).passed).toBe(false);
    expect(evaluateCheck({ ...recv, qp: 0 }, r).passed).toBe(false);
    expect(evaluateCheck({ kind: "wc", qp: 0, count: { equals: 0 } }, r).passed).toBe(true);
  });

  it("tells apart QPs of two devices that share a QP number, by the CQ the completion came from", () => {
    const r = run({
      qps: [{ qp_num: 0x11 }, { qp_num: 0x11 }],
      wcs: [wc({ qp_num: 0x11, opcode: IBV_WC_RECV, qp_index: 1 })],
    });
    expect(evaluateCheck({ kind: "wc", qp: 1, opcode: "IBV_WC_RECV" }, r).passed).toBe(true);
    expect(evaluateCheck({ kind: "wc", qp: 0, opcode: "IBV_WC_RECV" }, r).passed).toBe(false);
  });

  it("a thrown error fails the step unless an error check expects it", () => {
    const thrown = { verb: "ibv_reg_mr", code: "EINVAL", message: "ibv_reg_mr: EINVAL" };
    const r = run({ thrown, calls: [{ verb: "ibv_reg_mr", ok: false, error: thrown }] });
    expect(evaluateChecks([{ kind: "qp_state", qp: 0, state: "IBV_QPS_ERR" }], r).passed).toBe(false);
    expect(evaluateChecks([{ kind: "error", verb: "ibv_reg_mr", code: "EINVAL" }], r).passed).toBe(true);
    expect(evaluateChecks([{ kind: "error", verb: "ibv_reg_mr", code: "EBUSY" }], r).passed).toBe(false);
  });

  it("reads MR bytes from the program's last read, logs by key, counters by delta", () => {
    expect(evaluateCheck({ kind: "mr_bytes", mr: 0, utf8: "hello" }, run()).passed).toBe(true);
    expect(evaluateCheck({ kind: "mr_bytes", mr: 0, offset: 1, hex: "656c" }, run()).passed).toBe(true);
    expect(evaluateCheck({ kind: "mr_bytes", mr: 0, offset: 3, utf8: "lo!" }, run()).passed).toBe(false);
    const logs = [parseLog("packets 4"), parseLog("packets 5"), parseLog('name "rxe0"'), parseLog("gid fe80::1")];
    expect(evaluateCheck({ kind: "log", key: "packets", value: { equals: 5 } }, run({ logs })).passed).toBe(true);
    expect(evaluateCheck({ kind: "log", key: "name", equals: "rxe0" }, run({ logs })).passed).toBe(true);
    expect(evaluateCheck({ kind: "log", key: "gid", equals: "fe80::1" }, run({ logs })).passed).toBe(true);
    expect(evaluateCheck({ kind: "log", key: "missing", present: true }, run({ logs })).passed).toBe(false);
    expect(evaluateCheck({ kind: "counter", device: "rxe0", name: "sent_pkts", delta: { min: 4 } }, run()).passed).toBe(
      true,
    );
    expect(evaluateCheck({ kind: "counter", device: "rxe0", name: "rcvd_pkts", delta: { min: 1 } }, run()).passed).toBe(
      false,
    );
    expect(evaluateCheck({ kind: "counter", device: "rxe1", name: "sent_pkts", delta: { min: 0 } }, run()).passed).toBe(
      false,
    );
  });

  it("describes a goal in both languages", () => {
    const c = { kind: "qp_state", qp: 0, state: "IBV_QPS_RTS" } as const;
    expect(describeCheck(c, "en")).toContain("IBV_QPS_RTS");
    expect(describeCheck(c, "zh")).toMatch(/[\u4e00-\u9fff]/);
  });
});

describe("a failed goal says which constraint failed and what was seen", () => {
  const detail = (c: Parameters<typeof evaluateCheck>[0], r: RunRecord) => {
    const res = evaluateCheck(c, r);
    expect(res.passed).toBe(false);
    return res.detail;
  };

  it("wc: the nearest completion's differing fields, with the value seen and the one expected", () => {
    const r = run({
      wcs: [
        wc({ qp_num: 0x11, qp_index: 0, opcode: 0, wr_id: 0 }),
        wc({ qp_num: 0x12, qp_index: 1, opcode: IBV_WC_RECV, wr_id: 7, byte_len: 5 }),
      ],
    });
    const recv = { kind: "wc", qp: 1, opcode: "IBV_WC_RECV", wr_id: 200, byte_len: { equals: 11 } } as const;
    const d = detail(recv, r);
    expect(d).toContain("wr_id 7, expected 200");
    expect(d).toContain("byte_len 5, expected = 11");
    expect(detail({ kind: "wc", qp: 0, wr_id: 100 }, r)).toContain("wr_id 0, expected 100");
    expect(detail({ kind: "wc", qp: 1, status: "IBV_WC_REM_ACCESS_ERR" }, r)).toContain(
      "status IBV_WC_SUCCESS, expected IBV_WC_REM_ACCESS_ERR",
    );
    expect(detail({ kind: "wc", qp: 1, wc_flags_set: ["IBV_WC_GRH"] }, r)).toContain("IBV_WC_GRH not set");
    expect(detail({ kind: "wc", qp: 1, imm_data: 0x12345678 }, r)).toContain("imm_data 0x0, expected 0x12345678");
    expect(detail({ kind: "wc", qp: 1, count: { equals: 0 } }, r)).toMatch(
      /1 matching completion\(s\), expected count = 0/,
    );
    expect(detail({ kind: "wc", qp: 1 }, run())).toMatch(/no completions were polled/);
    // A program that stopped on an error never reached its poll: the detail says so, not "await cq.poll".
    const stopped = { ...run(), wcs: [], thrown: { verb: "ibv_modify_qp", code: "EINVAL", message: "INIT → RTS" } };
    expect(detail({ kind: "wc", qp: 1 }, stopped)).toBe(
      "no completions were polled: the program stopped first, at ibv_modify_qp EINVAL",
    );
    expect(detail({ kind: "log", key: "n" }, stopped)).toBe(
      'the program never logged "n": the program stopped first, at ibv_modify_qp EINVAL',
    );
    expect(detail({ kind: "log", key: "n" }, run())).toBe('the program never logged "n" (await verbs.log("n", …))');
    expect(detail({ kind: "mr_bytes", mr: 0, utf8: "x" }, { ...stopped, mrs: [{ reads: [] }] })).toBe(
      "the program never read MR #0 over those bytes: the program stopped first, at ibv_modify_qp EINVAL",
    );
    expect(detail({ kind: "wc", qp: 0, opcode: "IBV_WC_RECV" }, run({ wcs: [r.wcs[1]!] }))).toMatch(
      /no completion on QP #0/,
    );
  });

  it("names a QP as the learner did where that name is unique, and says when polls got nothing", () => {
    const [q0, q1] = run().qps as [RunRecord["qps"][0], RunRecord["qps"][0]];
    const named = run({
      qps: [
        { ...q0, variable: "a" },
        { ...q1, variable: "b" },
      ],
    });
    expect(detail({ kind: "qp_state", qp: 1, state: "IBV_QPS_ERR" }, named)).toBe(
      "QP #1: b (QP 0x12) is IBV_QPS_RTS, expected IBV_QPS_ERR",
    );
    // Two QPs called "qp" (a helper made both) with the same number on two devices: by creation order.
    const twins = run({
      qps: [
        { ...q0, variable: "qp" },
        { ...q0, qp_num: 0x11, attr: q1.attr, variable: "qp" },
      ],
    });
    expect(detail({ kind: "qp_state", qp: 1, state: "IBV_QPS_ERR" }, twins)).toBe(
      "QP #1 (0x11) is IBV_QPS_RTS, expected IBV_QPS_ERR",
    );
    // Known on which device each lives, they are named as the panes name them: with the device.
    const placed = run({
      qps: [
        { ...q0, variable: "qp", device: "rxe0" },
        { ...q0, qp_num: 0x11, attr: q1.attr, variable: "qp", device: "rxe1" },
      ],
    });
    expect(detail({ kind: "qp_state", qp: 1, state: "IBV_QPS_ERR" }, placed)).toBe(
      "QP #1: qp (QP 0x11, rxe1) is IBV_QPS_RTS, expected IBV_QPS_ERR",
    );
    // The goal labels too, once a run is judged: which of the learner's QPs each goal looks at.
    const wc = { kind: "wc", qp: 1, status: "IBV_WC_SUCCESS" } as const;
    const state = { kind: "qp_state", qp: 0, state: "IBV_QPS_RTS" } as const;
    expect(describeCheck(wc, "en")).toBe("A work completion on QP #1: IBV_WC_SUCCESS");
    const names = evaluateChecks([wc], named);
    expect(names.qpNames).toEqual(["a (QP 0x11)", "b (QP 0x12)"]);
    expect(describeCheck(wc, "en", "", names)).toBe("A work completion on b (QP 0x12): IBV_WC_SUCCESS");
    expect(describeCheck(state, "zh", "", names)).toBe("a (QP 0x11) 最终处于 IBV_QPS_RTS");
    expect(describeCheck(wc, "en", "", evaluateChecks([wc], twins))).toBe(
      "A work completion on QP #1 (0x11): IBV_WC_SUCCESS",
    );
    const polls = [{ verb: "verbslab_poll_wait", ok: true }];
    expect(detail({ kind: "wc", qp: 1 }, run({ wcs: [], calls: polls }))).toBe(
      "no completion arrived: the program polled 1 time(s) and got none",
    );
  });

  it("qp_state, qp_attr (in hex for PSNs), verb_count, counter: seen, then expected", () => {
    expect(detail({ kind: "qp_state", qp: 1, state: "IBV_QPS_ERR" }, run())).toBe(
      "QP #1 (0x12) is IBV_QPS_RTS, expected IBV_QPS_ERR",
    );
    expect(detail({ kind: "qp_attr", qp: 0, field: "sq_psn", value: { equals: 0x124 } }, run())).toBe(
      "QP #0 (0x11) sq_psn 0x5, expected = 0x124",
    );
    const calls = [
      { verb: "ibv_post_send", ok: true },
      { verb: "ibv_post_send", ok: true },
    ];
    expect(detail({ kind: "verb_count", verb: "ibv_post_send", count: { equals: 1 } }, run({ calls }))).toBe(
      "ibv_post_send was called 2 time(s), expected = 1",
    );
    expect(detail({ kind: "counter", device: "rxe0", name: "sent_pkts", delta: { min: 5 } }, run())).toBe(
      "rxe0 sent_pkts changed by 4, expected ≥ 5",
    );
  });

  it("error: what failed instead, or that nothing did", () => {
    const e = { verb: "ibv_modify_qp", code: "EINVAL", attribute: "IBV_QP_AV", message: "" };
    const calls = [{ verb: "ibv_modify_qp", ok: false, error: e }];
    const want = { kind: "error", verb: "ibv_modify_qp", code: "EINVAL", attribute: "IBV_QP_PORT" } as const;
    expect(detail(want, run({ calls }))).toBe(
      "ibv_modify_qp EINVAL (IBV_QP_AV), expected ibv_modify_qp to fail with EINVAL (IBV_QP_PORT)",
    );
    expect(detail(want, run())).toMatch(/^no verb failed, expected ibv_modify_qp to fail/);
  });

  it("mr_bytes and log: the bytes or value seen, then expected", () => {
    expect(detail({ kind: "mr_bytes", mr: 0, utf8: "help!" }, run())).toBe(
      'MR #0 holds "hello" at offset 0, expected "help!"',
    );
    expect(detail({ kind: "mr_bytes", mr: 0, hex: "6869" }, run())).toBe(
      "MR #0 holds 0x6865 at offset 0, expected 0x6869",
    );
    // By the learner's name where the program gave the MR one, in the detail and the label.
    const dst = run({ mrs: run().mrs.map((m) => ({ ...m, variable: "dst" })) });
    expect(detail({ kind: "mr_bytes", mr: 0, utf8: "help!" }, dst)).toBe(
      'MR #0: dst holds "hello" at offset 0, expected "help!"',
    );
    const bytes = { kind: "mr_bytes", mr: 0, utf8: "help!" } as const;
    expect(describeCheck(bytes, "en", "", evaluateChecks([bytes], dst))).toBe('dst holds "help!" at offset 0');
    expect(describeCheck(bytes, "en")).toBe('MR #0 holds "help!" at offset 0');
    const logs = [parseLog("packets 3"), parseLog('gid "fe80::1"'), parseLog("order [1,2]")];
    expect(detail({ kind: "log", key: "packets", value: { min: 4 } }, run({ logs }))).toBe(
      '"packets" = 3, expected ≥ 4',
    );
    expect(detail({ kind: "log", key: "order", equals: [1, 2, 3] }, run({ logs }))).toBe(
      '"order" = [1,2], expected [1,2,3]',
    );
    expect(detail({ kind: "log", key: "gid", prefix: "::ffff:" }, run({ logs }))).toBe(
      '"gid" = "fe80::1", expected a string starting with "::ffff:"',
    );
    expect(evaluateCheck({ kind: "log", key: "gid", prefix: "fe80:" }, run({ logs })).passed).toBe(true);
    expect(detail({ kind: "log", key: "nope", present: true }, run({ logs }))).toMatch(/never logged "nope"/);
  });
});

describe("generated goals state the whole check", () => {
  it("names every wc constraint, and writes PSNs and imm_data in hex", () => {
    const c: Check = {
      kind: "wc",
      qp: 1,
      status: "IBV_WC_SUCCESS",
      opcode: "IBV_WC_RECV",
      wr_id: 200,
      byte_len: { equals: 11 },
      imm_data: 0x12345678,
      wc_flags_set: ["IBV_WC_WITH_IMM"],
      wc_flags_clear: ["IBV_WC_GRH"],
    };
    for (const lang of ["en", "zh"] as const) {
      const s = describeCheck(c, lang);
      for (const part of [
        "IBV_WC_SUCCESS",
        "IBV_WC_RECV",
        "wr_id 200",
        "byte_len = 11",
        "imm_data 0x12345678",
        "IBV_WC_WITH_IMM",
        "IBV_WC_GRH",
        "QP #1",
      ])
        expect(s).toContain(part);
    }
    expect(describeCheck({ kind: "qp_attr", qp: 1, field: "rq_psn", value: { equals: 292 } }, "en")).toContain(
      "= 0x124",
    );
    expect(describeCheck({ kind: "wc", qp: 1, count: { equals: 0 } }, "en")).toMatch(/^No work completion on QP #1/);
  });

  it("writes a number in hex where the step text does", () => {
    const c = { kind: "log", key: "x", value: { equals: 4660 } } as const;
    expect(describeCheck(c, "en", "the value is 0x1234")).toContain("= 0x1234");
    expect(describeCheck(c, "en", "the value is 4660 (0x1234)")).toContain("= 4660");
    expect(describeCheck(c, "en")).toContain("= 4660");
  });

  it("writes a PSN as the step writes it: hex by default, decimal where the starter code uses decimal", () => {
    const c: Check = { kind: "log", key: "b.rq_psn", value: { equals: 200 } };
    const text = { en: "b keeps its rq_psn", zh: "b 保持它的 rq_psn" };
    expect(describeCheck(c, "en", goalContext({ text, starter: "" }, "en"))).toContain("= 0xc8");
    const starter = "await connect(b, a.qp_num, gid, 0, { rq_psn: 200 });";
    expect(describeCheck(c, "en", goalContext({ text, starter }, "en"))).toContain("= 200");
  });
});

describe("a failed completion", () => {
  it("is explained by its status alone: rxe zeroes its opcode and byte_len", () => {
    const r = run({ wcs: [wc({ qp_index: 0, status: IBV_WC_REM_ACCESS_ERR, opcode: 0, byte_len: 0, wr_id: 1 })] });
    const c = {
      kind: "wc",
      qp: 0,
      status: "IBV_WC_SUCCESS",
      opcode: "IBV_WC_RDMA_WRITE",
      byte_len: { equals: 15 },
    } as const;
    expect(evaluateCheck(c, r).detail).toBe(
      "closest completion on QP #0 (0x11): status IBV_WC_REM_ACCESS_ERR, expected IBV_WC_SUCCESS",
    );
  });
});

describe("failure details in Chinese", () => {
  it("say the same constraint, value seen and value expected", () => {
    const r = run({ wcs: [wc({ qp_num: 0x12, qp_index: 1, opcode: IBV_WC_RECV, wr_id: 7 })] });
    const res = evaluateCheck({ kind: "wc", qp: 1, opcode: "IBV_WC_RECV", wr_id: 200 }, r);
    expect(res.details).toEqual({
      en: "closest completion on QP #1 (0x12): wr_id 7, expected 200",
      zh: "QP #1 (0x12) 上最接近的完成：wr_id 7，期望 200",
    });
    const calls = [{ verb: "ibv_post_send", ok: true }];
    expect(
      evaluateCheck({ kind: "verb_count", verb: "ibv_post_send", count: { equals: 2 } }, run({ calls })).details?.zh,
    ).toBe("ibv_post_send 调用了 1 次，期望 = 2");
    expect(evaluateCheck({ kind: "log", key: "k", present: true }, run()).details?.zh).toMatch(/^程序从未记录 "k"/);
  });
});

describe("checks on a device other than rxe", () => {
  const grh: Check = {
    kind: "wc",
    qp: 1,
    status: "IBV_WC_SUCCESS",
    wc_flags_set: ["IBV_WC_GRH"],
    rxeOnly: { en: "Most NICs set IBV_WC_GRH only on UD receives.", zh: "大多数网卡只在 UD 接收上设置 IBV_WC_GRH。" },
  };
  const noGrh = [wc({ qp_num: 0x12, opcode: IBV_WC_RECV, wc_flags: 0 })];

  it("an rxe-only check reads 'on rxe: …' and is judged as usual on rxe (or a device that did not say)", () => {
    expect(describeCheck(grh, "en")).toMatch(/^on rxe: A work completion on QP #1/);
    expect(describeCheck(grh, "zh")).toMatch(/^在 rxe 上：/);
    expect(evaluateCheck(grh, run({ wcs: noGrh })).passed).toBe(false);
    const onRxe = evaluateCheck(grh, run({ wcs: noGrh, drivers: { rxe0: "rxe" } }));
    expect(onRxe).toMatchObject({ passed: false });
    expect(onRxe.explained).toBeUndefined();
  });

  it("on mlx5 a failed rxe-only check passes as an explanation: what other devices do, and what this one did", () => {
    const r = evaluateCheck(grh, run({ wcs: noGrh, drivers: { rxe0: "mlx5" } }));
    expect(r).toMatchObject({ passed: true, explained: true });
    expect(r.detail).toContain("not judged on mlx5");
    expect(r.detail).toContain("only on UD receives");
    expect(r.detail).toContain("IBV_WC_GRH not set");
    expect(r.details?.zh).toContain("在 mlx5 上不判定");
    // A check without rxeOnly still fails there.
    const plain = { ...grh };
    delete plain.rxeOnly;
    expect(evaluateCheck(plain, run({ wcs: noGrh, drivers: { rxe0: "mlx5" } })).passed).toBe(false);
    // And one that holds there is just passed.
    const withGrh = [wc({ qp_num: 0x12, opcode: IBV_WC_RECV, wc_flags: IBV_WC_GRH })];
    expect(evaluateCheck(grh, run({ wcs: withGrh, drivers: { rxe0: "mlx5" } })).explained).toBeUndefined();
  });

  it("a counter is read under the driver's own name, and is 'not available' where the driver has none", () => {
    const sent: Check = { kind: "counter", device: "rxe0", name: "sent_pkts", delta: { min: 4 } };
    const mlx5 = run({ counters: { rxe0: { port_xmit_packets: 5 } }, drivers: { rxe0: "mlx5" } });
    expect(evaluateCheck(sent, mlx5)).toMatchObject({
      passed: true,
      detail: "rxe0 port_xmit_packets (rxe's sent_pkts) changed by 5",
    });
    expect(evaluateCheck({ ...sent, delta: { min: 6 } }, mlx5).passed).toBe(false);
    // rxe's name means nothing on mlx5.
    const wrongName = run({ counters: { rxe0: { sent_pkts: 5 } }, drivers: { rxe0: "mlx5" } });
    expect(evaluateCheck(sent, wrongName).passed).toBe(false);
    const siw = evaluateCheck(sent, run({ counters: { rxe0: {} }, drivers: { rxe0: "siw" } }));
    expect(siw).toMatchObject({ passed: true, explained: true });
    expect(siw.detail).toContain("not available on this device");
  });

  it("qpAttr: a logged number must equal what ibv_query_qp reports for that QP", () => {
    const c: Check = { kind: "log", key: "depth", qpAttr: { qp: 0, field: "cap.max_send_wr" } };
    const qps = [{ qp_num: 0x11, attr: { qp_state: IBV_QPS_RTS, cap: { max_send_wr: 16 } } as QpAttr }];
    expect(evaluateCheck(c, run({ qps, logs: [{ key: "depth", value: 16 }] })).passed).toBe(true);
    const r = evaluateCheck(c, run({ qps, logs: [{ key: "depth", value: 10 }] }));
    expect(r.passed).toBe(false);
    expect(r.detail).toBe('"depth" = 10, expected = 16 (what ibv_query_qp reports for QP #0 cap.max_send_wr)');
    expect(describeCheck(c, "en")).toBe('The program logs "depth" = QP #0\'s cap.max_send_wr from ibv_query_qp');
  });
});

describe("verbResult", () => {
  it("a logged number must equal a field of the device's last answer to that query", () => {
    const c: Check = { kind: "log", key: "active_mtu", verbResult: { verb: "ibv_query_port", field: "active_mtu" } };
    const calls = [{ verb: "ibv_query_port", ok: true, result: { active_mtu: 5, max_mtu: 5 } }];
    expect(evaluateCheck(c, run({ calls, logs: [{ key: "active_mtu", value: 5 }] })).passed).toBe(true);
    const bytes = evaluateCheck(c, run({ calls, logs: [{ key: "active_mtu", value: 4096 }] }));
    expect(bytes.detail).toBe('"active_mtu" = 4096, expected = 5 (the active_mtu ibv_query_port reported)');
    const never = evaluateCheck(c, run({ logs: [{ key: "active_mtu", value: 5 }] }));
    expect(never.passed).toBe(false);
    expect(never.detail).toContain("never called ibv_query_port successfully");
  });
});
