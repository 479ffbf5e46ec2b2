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
import { constValue, describeCheck, evaluateCheck, evaluateChecks, type RunRecord, type RunWc } from "./checks.js";
import { parseLog } from "./record.js";

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
