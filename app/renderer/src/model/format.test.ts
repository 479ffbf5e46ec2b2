import { describe, expect, it } from "vitest";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_EVENT_CQ_ERR,
  IBV_MTU_1024,
  IBV_QPS_ERR,
  IBV_QPS_RTR,
  IBV_WC_RECV,
  IBV_WC_SUCCESS,
  IBV_WC_WITH_IMM,
} from "../../../../verbs/constants.js";
import { accessNames, collapseEscapeRuns, big, formatField, formatLogLine, rnrWait } from "./format.js";
import { STRINGS } from "../i18n.js";

describe("formatField", () => {
  it("shows states, MTUs and access flags by their verbs.h names", () => {
    expect(formatField("attr.qp_state", IBV_QPS_RTR)).toBe("IBV_QPS_RTR");
    expect(formatField("attr.path_mtu", IBV_MTU_1024)).toBe("IBV_MTU_1024 (1024)");
    expect(formatField("attr.qp_access_flags", IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)).toBe(
      "LOCAL_WRITE | REMOTE_WRITE",
    );
    expect(formatField("attr.qkey", 0x11111111)).toBe("0x11111111");
    expect(formatField("attr.sq_psn", 42)).toBe("42 (0x2a)");
    // QP numbers as every pane names them (QP 0x12), with the decimal a program prints.
    expect(formatField("attr.dest_qp_num", 18)).toBe("18 (0x12)");
    expect(formatField("qp_num", 17)).toBe("17 (0x11)");
    expect(formatField("attr.rq_psn", 0)).toBe("0");
    expect(formatField("attr.ah_attr.grh.dgid", "fe80::1")).toBe("fe80::1");
  });
  it("says 0 for no access flags", () => expect(accessNames(0)).toBe("0"));
});

describe("the Log's lines (verbs.log as recorded by the session)", () => {
  it("names an async event: IBV_EVENT_CQ_ERR is 0", () => {
    expect(IBV_EVENT_CQ_ERR).toBe(0);
    expect(formatLogLine("async_event 0")).toBe("async_event IBV_EVENT_CQ_ERR");
    expect(formatLogLine("async_event none")).toBe("async_event none");
  });
  it("names a completion's status and opcode, imm_data in hex", () => {
    const wc = {
      wr_id: 2,
      status: IBV_WC_SUCCESS,
      opcode: IBV_WC_RECV,
      byte_len: 8,
      wc_flags: IBV_WC_WITH_IMM,
      imm_data: 0xbeef,
    };
    expect(formatLogLine(`b_got ${JSON.stringify(wc)}`)).toBe(
      "b_got { wr_id: 2, status: IBV_WC_SUCCESS, opcode: IBV_WC_RECV, byte_len: 8, wc_flags: IBV_WC_WITH_IMM, imm_data: 0xbeef }",
    );
  });
  it("shows QP states, PSNs and keys by the label's field", () => {
    expect(formatLogLine(`a.qp_state ${IBV_QPS_ERR}`)).toBe("a.qp_state IBV_QPS_ERR");
    expect(formatLogLine(`state_after_create 0`)).toBe("state_after_create IBV_QPS_RESET");
    expect(formatLogLine("b.rq_psn 292")).toBe("b.rq_psn 292 (0x124)");
    expect(formatLogLine("dst.rkey 4660")).toBe("dst.rkey 0x1234");
    expect(formatLogLine("packets 5")).toBe("packets 5");
    expect(formatLogLine('wr {"wr_id":1,"opcode":0}')).toBe("wr { wr_id: 1, opcode: IBV_WR_RDMA_WRITE }");
  });
  it("shows 64-bit values as numbers (hex past 2^53), never as {$bigint}", () => {
    expect(formatLogLine('counter {"$bigint":"42"}')).toBe("counter 42");
    expect(formatLogLine('max_mr_size {"$bigint":"18446744073709551615"}')).toBe("max_mr_size 0xffffffffffffffff");
    expect(formatLogLine('fetched {"$bigint":"7"} and {"$bigint":"9"}')).toBe("fetched 7 and 9");
    expect(big(-5n)).toBe("-5");
  });
});

describe("rnrWait", () => {
  it("explains rxe's jiffy floor for short RNR timers, and says nothing extra for long ones", () => {
    expect(rnrWait(1)).toEqual({ askedMs: 0.01, floorMs: 4 });
    expect(STRINGS.en.rnrNote(1, rnrWait(1), 8)).toMatch(/asks for 0\.01 ms.*4 to 8 ms/);
    expect(STRINGS.en.rnrNote(28, rnrWait(28), 168)).toBe("the NAK's timer 28 asks for 163.84 ms");
    expect(STRINGS.zh.rnrNote(1, rnrWait(1), 8)).toMatch(/0\.01 ms.*4 到 8 ms/);
  });
});

describe("collapseEscapeRuns", () => {
  it("shows a long run of one escape as two and a count, and leaves short runs and other text alone", () => {
    const padded = `"reason" = "busy, try later${"\\u0000".repeat(133)}", expected "busy, try later"`;
    expect(collapseEscapeRuns(padded)).toBe(
      `"reason" = "busy, try later\\u0000\\u0000…(133 × \\u0000)", expected "busy, try later"`,
    );
    expect(collapseEscapeRuns("a\\u0000\\u0000b")).toBe("a\\u0000\\u0000b");
    expect(collapseEscapeRuns("no escapes")).toBe("no escapes");
  });
});
