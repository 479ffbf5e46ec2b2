import { describe, expect, it } from "vitest";
import { errnos, errorFromData, errorToData, VerbsError, type ErrorData } from "./errors.js";

/** What crosses the bridge or sits in a transcript: JSON text, not objects. */
const throughJson = (d: ErrorData): ErrorData => JSON.parse(JSON.stringify(d)) as ErrorData;

describe("ErrorData", () => {
  it("round-trips a VerbsError with every field, as a real VerbsError", () => {
    const err = new VerbsError("ibv_post_send", errnos.EINVAL, {
      reason: "sg_list[1].lkey is not an MR of this PD",
      attribute: "sg_list[1].lkey",
      badWrIndex: 2,
    });
    const data = throughJson(errorToData(err));
    expect(data).toEqual({
      name: "VerbsError",
      verb: "ibv_post_send",
      code: "EINVAL",
      errno: 22,
      message: err.message,
      reason: "sg_list[1].lkey is not an MR of this PD",
      attribute: "sg_list[1].lkey",
      badWrIndex: 2,
    });
    const back = errorFromData(data);
    expect(back).toBeInstanceOf(VerbsError);
    const v = back as VerbsError;
    expect([v.verb, v.code, v.errno, v.reason, v.attribute, v.badWrIndex]).toEqual([
      "ibv_post_send",
      "EINVAL",
      22,
      "sg_list[1].lkey is not an MR of this PD",
      "sg_list[1].lkey",
      2,
    ]);
    expect(v.message).toBe(err.message);
  });

  it("keeps the field order VerbsError.toJSON wrote to transcripts", () => {
    const err = new VerbsError("ibv_modify_qp", errnos.EINVAL, { reason: "r", attribute: "IBV_QP_DEST_QPN" });
    expect(Object.keys(err.toJSON())).toEqual(["name", "verb", "code", "errno", "message", "reason", "attribute"]);
    expect(JSON.stringify(err)).toBe(JSON.stringify(errorToData(err)));
  });

  it("round-trips TypeError and RangeError as the same classes", () => {
    const t = errorFromData(throughJson(errorToData(new TypeError("length must be a number"))));
    expect(t).toBeInstanceOf(TypeError);
    expect(t.message).toBe("length must be a number");
    const r = errorFromData(throughJson(errorToData(new RangeError("cqe out of range"))));
    expect(r).toBeInstanceOf(RangeError);
    expect(r.message).toBe("cqe out of range");
    const coded = errorFromData({ name: "RangeError", message: "too big", code: "ERR_OUT_OF_RANGE" });
    expect(coded).toBeInstanceOf(RangeError);
    expect((coded as Error & { code?: string }).code).toBe("ERR_OUT_OF_RANGE");
  });

  it("keeps the name and fields of other errors", () => {
    const e = Object.assign(new Error("params.seed: expected a number"), {
      name: "BridgeValidationError",
      path: "params.seed",
    });
    const data = throughJson(errorToData(e));
    expect(data).toEqual({
      name: "BridgeValidationError",
      message: "params.seed: expected a number",
      path: "params.seed",
    });
    const back = errorFromData(data) as Error & { path?: string };
    expect(back.name).toBe("BridgeValidationError");
    expect(back.path).toBe("params.seed");
    expect(back).not.toBeInstanceOf(VerbsError);
  });

  it("keeps where in main.ts a program's error came from, on a rebuilt VerbsError too", () => {
    const err = Object.assign(new VerbsError("ibv_post_send", errnos.EINVAL), { line: 12, column: 9, unawaited: true });
    const data = throughJson(errorToData(err));
    expect(data).toMatchObject({ line: 12, column: 9, unawaited: true });
    const back = errorFromData(data) as VerbsError & { line?: number; column?: number; unawaited?: boolean };
    expect(back).toBeInstanceOf(VerbsError);
    expect([back.line, back.column, back.unawaited]).toEqual([12, 9, true]);
  });

  it("turns a thrown non-Error into an Error with its text", () => {
    expect(errorToData("boom")).toEqual({ name: "Error", message: "boom" });
    expect(errorToData(42)).toEqual({ name: "Error", message: "42" });
    expect(errorToData(undefined)).toEqual({ name: "Error", message: "undefined" });
    const back = errorFromData(errorToData("boom"));
    expect(back).toBeInstanceOf(Error);
    expect(back.message).toBe("boom");
  });

  it("does not make a VerbsError out of an error that only looks like one", () => {
    const back = errorFromData({ name: "Error", message: "m", verb: "ibv_x", errno: 22 });
    expect(back).not.toBeInstanceOf(VerbsError);
    expect((back as Error & { errno?: number }).errno).toBe(22);
  });
});
