import { describe, expect, it } from "vitest";
import { objectName, qpName } from "./names.js";

describe("objectName", () => {
  it("names a QP by the learner's variable and its number, or by its number alone", () => {
    expect(objectName({ type: "qp", index: 0, variable: "a", qp_num: 0x11 })).toBe("a (QP 0x11)");
    expect(objectName({ type: "qp", index: 3, qp_num: 17 })).toBe("QP 0x11");
    expect(qpName(0x12)).toBe("QP 0x12");
    expect(qpName(0x11, "qp", "rxe1")).toBe("qp (QP 0x11, rxe1)"); // another device has a QP 0x11 too
  });
  it("names a context by its variable and device, other objects by their variable or kind and index", () => {
    expect(objectName({ type: "context", index: 0, variable: "ctx", device: "rxe0" })).toBe("ctx (rxe0)");
    expect(objectName({ type: "context", index: 1, device: "rxe1" })).toBe("rxe1");
    expect(objectName({ type: "cq", index: 0, variable: "sendCq" })).toBe("sendCq");
    expect(objectName({ type: "mr", index: 2 })).toBe("mr2");
  });
});
