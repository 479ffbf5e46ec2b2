import { describe, expect, it } from "vitest";
import { IBV_WC_REM_ACCESS_ERR, IBV_WC_SUCCESS, IBV_WC_WR_FLUSH_ERR } from "../../../../verbs/constants.js";
import { explainStatus, statusTone } from "./wc-explain.js";

describe("completion statuses", () => {
  it("colours success, flush and errors apart", () => {
    expect(statusTone(IBV_WC_SUCCESS)).toBe("ok");
    expect(statusTone(IBV_WC_WR_FLUSH_ERR)).toBe("flush");
    expect(statusTone(IBV_WC_REM_ACCESS_ERR)).toBe("error");
  });
  it("explains a remote access error in terms of rkey and access flags", () => {
    expect(explainStatus(IBV_WC_REM_ACCESS_ERR)).toMatch(/rkey/);
  });
});
