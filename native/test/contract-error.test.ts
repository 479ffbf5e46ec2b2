/**
 * native/index.ts `contractError` on any machine: the addon's argument TypeErrors (their data:
 * kind, field, expected, got, what) become the simulator's argError, and a VerbsError the addon
 * gave a why but no reason gets the reason worded from it. Where the addon is built, a real one
 * (openDevice with a number: no device needed) goes through it too.
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { VerbsError, errnos, typeErr } from "../../verbs/errors.js";
import { verbFailureText, type VerbFailure } from "../../verbs/verb-failure.js";
import { ADDON_PATH, loadAddon } from "../addon.js";
import { contractError } from "../index.js";

type WithWhy = Error & { why?: VerbFailure; verb?: string };

/** A TypeError shaped as the addon's ThrowArgType / ThrowForeign make it. */
const addonTypeError = (fields: Record<string, unknown>) =>
  Object.assign(new TypeError("addon's English fallback"), fields);

describe("contractError", () => {
  it("an arg-type TypeError becomes the simulator's typeErr: class, verb, why and message", () => {
    const raw = addonTypeError({
      verb: "ibv_post_send",
      kind: "arg-type",
      field: "wr[0].sg_list[0].length",
      expected: "integer",
      got: "4",
    });
    const e = contractError(raw) as WithWhy;
    const sim = typeErr("ibv_post_send", "wr[0].sg_list[0].length", "integer", "4") as WithWhy;
    expect(e).toBeInstanceOf(TypeError);
    expect([e.message, e.why, e.verb]).toEqual([sim.message, sim.why, sim.verb]);
  });

  it("a foreign-object TypeError names the field and what it must be", () => {
    const e = contractError(
      addonTypeError({ verb: "ibv_create_qp", kind: "foreign-object", field: "send_cq", what: "CQ" }),
    ) as WithWhy;
    expect(e).toBeInstanceOf(TypeError);
    expect(e.why).toEqual({ kind: "foreign-object", field: "send_cq", what: "CQ" });
    expect(e.message).toBe("ibv_create_qp: send_cq is not a CQ of this backend");
  });

  it("a VerbsError with a why and no reason gets its reason; other errors pass unchanged", () => {
    const why: VerbFailure = { kind: "ud-ah", i: 1, gone: false };
    const raw = new VerbsError("ibv_post_send", errnos.EINVAL, { why, attribute: "wr[1].wr.ud.ah", badWrIndex: 1 });
    const e = contractError(raw) as VerbsError;
    expect([e.code, e.reason, e.why, e.attribute, e.badWrIndex]).toEqual([
      "EINVAL",
      verbFailureText(why),
      why,
      "wr[1].wr.ud.ah",
      1,
    ]);
    const worded = new VerbsError("ibv_modify_qp", errnos.EINVAL, { reason: "r" });
    expect(contractError(worded)).toBe(worded);
    const plain = new TypeError("ibv_poll_cq: the CQ was freed");
    expect(contractError(plain)).toBe(plain);
  });

  it.runIf(existsSync(ADDON_PATH))("the built addon's own: openDevice(42)", () => {
    const loaded = loadAddon();
    if (!("addon" in loaded)) throw new Error(loaded.missing);
    loaded.addon.init({ VerbsError });
    let raw: unknown;
    try {
      loaded.addon.openDevice(42 as unknown as string);
    } catch (e) {
      raw = e;
    }
    const e = contractError(raw) as WithWhy;
    expect(e).toBeInstanceOf(TypeError);
    expect(e.why).toEqual({ kind: "arg-type", field: "name", expected: "string", got: { t: "number", text: "42" } });
    expect(e.message).toBe("ibv_open_device: name must be a string, got 42");
  });
});
