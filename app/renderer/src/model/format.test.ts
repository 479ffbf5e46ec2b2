import { describe, expect, it } from "vitest";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_MTU_1024,
  IBV_QPS_RTR,
} from "../../../../verbs/constants.js";
import { accessNames, formatField } from "./format.js";

describe("formatField", () => {
  it("shows states, MTUs and access flags by their verbs.h names", () => {
    expect(formatField("attr.qp_state", IBV_QPS_RTR)).toBe("IBV_QPS_RTR");
    expect(formatField("attr.path_mtu", IBV_MTU_1024)).toBe("IBV_MTU_1024 (1024)");
    expect(formatField("attr.qp_access_flags", IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)).toBe(
      "LOCAL_WRITE | REMOTE_WRITE",
    );
    expect(formatField("attr.qkey", 0x11111111)).toBe("0x11111111");
    expect(formatField("attr.sq_psn", 42)).toBe("42 (0x2a)");
    expect(formatField("attr.rq_psn", 0)).toBe("0");
    expect(formatField("attr.ah_attr.grh.dgid", "fe80::1")).toBe("fe80::1");
  });
  it("says 0 for no access flags", () => expect(accessNames(0)).toBe("0"));
});
