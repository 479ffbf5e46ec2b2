import { describe, expect, it } from "vitest";
import { IBV_WC_REM_ACCESS_ERR, IBV_WC_SUCCESS, IBV_WC_WR_FLUSH_ERR } from "../../../../verbs/constants.js";
import { ibv_wc_status } from "../../../../verbs/constants.js";
import { explainStatus, statusTone } from "./wc-explain.js";
import { STRINGS } from "../i18n.js";

describe("completion statuses", () => {
  it("colours success, flush and errors apart", () => {
    expect(statusTone(IBV_WC_SUCCESS)).toBe("ok");
    expect(statusTone(IBV_WC_WR_FLUSH_ERR)).toBe("flush");
    expect(statusTone(IBV_WC_REM_ACCESS_ERR)).toBe("error");
  });
  it("explains a remote access error in terms of rkey and access flags", () => {
    expect(explainStatus(IBV_WC_REM_ACCESS_ERR, STRINGS.en)).toMatch(/rkey/);
  });
  it("explains every error status in Chinese as well, and names an unknown one by its number", () => {
    for (const [name, status] of Object.entries(ibv_wc_status)) {
      const zh = explainStatus(status, STRINGS.zh);
      expect(zh, name).toMatch(/[\u4e00-\u9fff]/);
      expect(zh, name).not.toBe(explainStatus(status, STRINGS.en));
    }
    expect(explainStatus(IBV_WC_REM_ACCESS_ERR, STRINGS.zh)).toContain("rkey");
    expect(explainStatus(99, STRINGS.zh)).toBe("状态 99。");
  });
});
