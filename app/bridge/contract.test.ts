import { describe, expect, it } from "vitest";
import { VerbsError } from "../../verbs/errors.js";
import { errorFromData, errorToData } from "../../verbs/errors.js";
import { createBridge, type Transport } from "./client.js";
import { BridgeValidationError, parseRequest, requestSchemas, type RequestParams } from "./contract.js";
import { decodeValue, encodeValue, type WireValue } from "../session/wire.js";

describe("parseRequest (host-side validation)", () => {
  it("accepts a well-formed verbs.call and keeps its args", () => {
    const { method, params } = parseRequest("verbs.call", {
      handle: 3,
      method: "modify",
      args: [{ qp_state: 1 }, 17],
    });
    expect(method).toBe("verbs.call");
    const p = params as RequestParams<"verbs.call">;
    expect(p.handle).toBe(3);
    expect(p.args).toEqual([{ qp_state: 1 }, 17]);
  });

  it("accepts handle 0 (the root facade)", () => {
    const { params } = parseRequest("verbs.call", { handle: 0, method: "openDevice", args: ["rxe0"] });
    expect((params as RequestParams<"verbs.call">).handle).toBe(0);
  });

  it("refuses an unknown method", () => {
    expect(() => parseRequest("fs.readFile", { path: "/etc/passwd" })).toThrow(BridgeValidationError);
    expect(() => parseRequest("__proto__", {})).toThrow(BridgeValidationError);
    expect(() => parseRequest(42, {})).toThrow(BridgeValidationError);
  });

  it("names the field at fault", () => {
    const cases: [string, unknown, string][] = [
      ["transcript.export", { format: "pdf" }, "params.format"],
      ["transcript.export", {}, "params.format"],
      ["backend.choose", { kind: "rdma" }, "params.kind"],
      ["backend.choose", { kind: "sim", seed: -1 }, "params.seed"],
      ["backend.choose", { kind: "sim", seed: 1.5 }, "params.seed"],
      ["verbs.call", { handle: "cq1", method: "poll", args: [] }, "params.handle"],
      ["verbs.call", { handle: -2, method: "poll", args: [] }, "params.handle"],
      ["verbs.call", { handle: 2, method: "", args: [] }, "params.method"],
      ["verbs.call", { handle: 2, method: "poll", args: "1" }, "params.args"],
      ["verbs.call", { handle: 2, method: "poll" }, "params.args"],
      ["run.start", { stepping: "yes" }, "params.stepping"],
      ["lessons.load", { id: "" }, "params.id"],
      ["session.stop", { force: true }, "params.force"],
      ["gate.runTo", { method: "destroy" }, "params.method"],
      ["lessons.check", { lessonId: "x", step: 0 }, "params.step"],
    ];
    for (const [method, params, path] of cases) {
      let caught: unknown;
      try {
        parseRequest(method, params);
      } catch (err) {
        caught = err;
      }
      expect(caught, `${method} ${JSON.stringify(params)}`).toBeInstanceOf(BridgeValidationError);
      expect((caught as BridgeValidationError).path).toBe(path);
    }
  });

  it("refuses non-plain objects and arrays where an object is expected", () => {
    expect(() => parseRequest("gate.step", [])).toThrow(BridgeValidationError);
    expect(() => parseRequest("gate.step", "x")).toThrow(BridgeValidationError);
    expect(() => parseRequest("gate.step", new Date())).toThrow(BridgeValidationError);
  });

  it("treats absent params as an empty object", () => {
    expect(parseRequest("gate.state", undefined).params).toEqual({});
  });

  it("has a schema for every request the results map names", () => {
    expect(Object.keys(requestSchemas).length).toBeGreaterThan(20);
  });
});

describe("client", () => {
  function loopback(handler: (method: string, params: unknown) => unknown): Transport {
    return {
      host: "web",
      async send(method, params) {
        try {
          return encodeValue({ ok: true, result: await handler(method, decodeValue(params)) });
        } catch (err) {
          return encodeValue({ ok: false, error: errorToData(err) });
        }
      },
      subscribe: () => () => {},
    };
  }

  it("rebuilds a VerbsError with its code, verb and attribute", async () => {
    const bridge = createBridge(
      loopback(() => {
        throw new VerbsError("ibv_modify_qp", 22, {
          reason: "RTR needs IBV_QP_DEST_QPN",
          attribute: "IBV_QP_DEST_QPN",
        });
      }),
    );
    const err = await bridge.request("verbs.call", { handle: 3, method: "modify", args: [] }).catch((e) => e);
    expect(err).toBeInstanceOf(VerbsError);
    expect(err.code).toBe("EINVAL");
    expect(err.errno).toBe(22);
    expect(err.verb).toBe("ibv_modify_qp");
    expect(err.attribute).toBe("IBV_QP_DEST_QPN");
  });

  it("carries bigint arguments and results", async () => {
    const bridge = createBridge(loopback((_m, params) => ({ value: (params as { args: bigint[] }).args[0]! + 1n })));
    const r = await bridge.request("verbs.call", { handle: 3, method: "x", args: [2n ** 64n] });
    expect(r.value).toBe(2n ** 64n + 1n);
  });

  it("keeps TypeErrors as TypeErrors", () => {
    expect(errorFromData({ name: "TypeError", message: "length must be a number" })).toBeInstanceOf(TypeError);
  });

  it("delivers events to listeners, and one throwing listener does not starve the others", () => {
    let emit: (event: string, payload: WireValue) => void = () => {};
    const bridge = createBridge({
      host: "electron",
      send: async () => null,
      subscribe: (l) => {
        emit = l;
        return () => {};
      },
    });
    const got: number[] = [];
    const errors = console.error;
    console.error = () => {};
    try {
      bridge.on("transcript", () => {
        throw new Error("broken pane");
      });
      const off = bridge.on("transcript", (e) => got.push(e.seq));
      emit("transcript", encodeValue({ seq: 1, kind: "log", clock: 0, message: "a" }));
      off();
      emit("transcript", encodeValue({ seq: 2, kind: "log", clock: 0, message: "b" }));
    } finally {
      console.error = errors;
    }
    expect(got).toEqual([1]);
  });
});
