/**
 * A refused modify's reason as data, from events the simulator's session records, worded in
 * Chinese by i18n.ts: the transition table's refusals get it; a modify refused for another
 * reason keeps the backend's words (no guess from the table). The error banner and the
 * completions pane then read in the learner's language.
 */
import { renderToStaticMarkup } from "react-dom/server";
import { createElement } from "react";
import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../../../sim/index.js";
import * as c from "../../../../verbs/constants.js";
import { createSession } from "../../../session/session.js";
import type { VerbEvent } from "../../../session/transcript.js";
import type { Ref } from "../../../session/wire.js";
import { LangContext, STRINGS } from "../i18n.js";
import { ErrorBanner } from "../panes/ErrorBanner.js";
import { PredictedError } from "../panes/QpDiagram.js";
import { buildView } from "./reduce.js";
import { verbWhy } from "./verb-why.js";
import { predictModify } from "../../../../state-machines/qp.js";
import { verbFailureText } from "../../../../verbs/verb-failure.js";

const INIT_MASK = c.IBV_QP_STATE | c.IBV_QP_PKEY_INDEX | c.IBV_QP_PORT | c.IBV_QP_ACCESS_FLAGS;

/** A fresh RC QP in RESET, then one modify of it: the modify's event and the view. */
async function modify(attr: object, mask: number, toInitFirst = false) {
  const s = createSession({ backend: createSimBackend({ seed: 1 }) });
  const ctx = (await s.call(0, "openDevice", ["rxe0"])) as Ref;
  const pd = (await s.call(ctx.$handle, "allocPd", [])) as Ref;
  const cq = (await s.call(ctx.$handle, "createCq", [16])) as Ref;
  const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const qp = (await s.call(pd.$handle, "createQp", [{ send_cq: cq, recv_cq: cq, cap, qp_type: c.IBV_QPT_RC }])) as Ref;
  if (toInitFirst)
    await s.call(qp.$handle, "modify", [
      { qp_state: c.IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: 0 },
      INIT_MASK,
    ]);
  const error = await s.call(qp.$handle, "modify", [attr, mask]).then(
    () => undefined,
    (e: Error) => e,
  );
  const events = s.events();
  const e = events.at(-1) as VerbEvent;
  return { e, error, view: buildView({ events }), why: verbWhy(e, c.IBV_QPT_RC) };
}

describe("a refused modify's reason, as data and in Chinese", () => {
  it("names the bits RESET → INIT needs and the ones the mask lacks", async () => {
    const { e, why, view } = await modify({ qp_state: c.IBV_QPS_INIT }, c.IBV_QP_STATE);
    expect(e.error).toMatchObject({ code: "EINVAL", attribute: "IBV_QP_ACCESS_FLAGS" });
    expect(why).toEqual({
      kind: "mask",
      from: c.IBV_QPS_RESET,
      to: c.IBV_QPS_INIT,
      needs: ["IBV_QP_ACCESS_FLAGS", "IBV_QP_PKEY_INDEX", "IBV_QP_PORT"],
      missing: ["IBV_QP_ACCESS_FLAGS", "IBV_QP_PKEY_INDEX", "IBV_QP_PORT"],
      notAllowed: [],
    });
    expect(STRINGS.zh.verbWhy(why!)).toBe(
      "RESET → INIT 需要 IBV_QP_ACCESS_FLAGS, IBV_QP_PKEY_INDEX, IBV_QP_PORT：掩码里一个也没有",
    );
    expect(e.error!.message).toContain(
      "RESET → INIT needs IBV_QP_ACCESS_FLAGS, IBV_QP_PKEY_INDEX, IBV_QP_PORT: the mask has none of them",
    );
    // The transcript row carries it; the last failed call is the view's lastError.
    expect(view.lastError?.why).toEqual(why);
    // The error carries it; a transcript from before errors did is rebuilt from the event to the same data.
    expect(e.error!.why).toEqual(why);
    const { why: _why, ...old } = e.error!;
    expect(verbWhy({ ...e, error: old }, c.IBV_QPT_RC)).toEqual(why);
  });
  it("names only the one bit missing (IBV_QP_PORT)", async () => {
    const { why } = await modify(
      { qp_state: c.IBV_QPS_INIT, pkey_index: 0, qp_access_flags: 0 },
      c.IBV_QP_STATE | c.IBV_QP_PKEY_INDEX | c.IBV_QP_ACCESS_FLAGS,
    );
    expect(why).toMatchObject({ kind: "mask", missing: ["IBV_QP_PORT"] });
    expect(STRINGS.zh.verbWhy(why!)).toMatch(/；缺少：IBV_QP_PORT$/);
  });
  it("names a bit the transition does not accept", async () => {
    const { why } = await modify(
      { qp_state: c.IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: 0, sq_psn: 0 },
      INIT_MASK | c.IBV_QP_SQ_PSN,
    );
    expect(why).toMatchObject({ kind: "mask", missing: [], notAllowed: ["IBV_QP_SQ_PSN"] });
    expect(STRINGS.zh.verbWhy(why!)).toBe("RESET → INIT 不接受 IBV_QP_SQ_PSN");
  });
  it("says a transition that does not exist is not one", async () => {
    const { why } = await modify({ qp_state: c.IBV_QPS_RTS }, c.IBV_QP_STATE);
    expect(why).toEqual({ kind: "illegal", from: c.IBV_QPS_RESET, to: c.IBV_QPS_RTS, withoutState: false });
    expect(STRINGS.zh.verbWhy(why!)).toBe("RESET → RTS 不是合法的状态转换");
  });
  it("says which state cur_qp_state claimed", async () => {
    const { why } = await modify(
      { qp_state: c.IBV_QPS_RTR, cur_qp_state: c.IBV_QPS_RTS },
      c.IBV_QP_STATE | c.IBV_QP_CUR_STATE,
      true,
    );
    expect(why).toEqual({ kind: "cur-state", claimed: c.IBV_QPS_RTS, actual: c.IBV_QPS_INIT });
    expect(STRINGS.zh.verbWhy(why!)).toBe("cur_qp_state 写的是 RTS，但 QP 处于 INIT");
  });
  it("words a refusal the table did not make (port_num 2) from the error's own data", async () => {
    const { e, why } = await modify(
      { qp_state: c.IBV_QPS_INIT, pkey_index: 0, port_num: 2, qp_access_flags: 0 },
      INIT_MASK,
    );
    expect(e.error).toMatchObject({ code: "EINVAL", attribute: "port_num" });
    expect(why).toEqual({ kind: "port-num", field: "port_num", got: 2 });
    expect(STRINGS.zh.verbWhy(why!)).toBe("port_num 必须是 1（rxe 只有一个端口），传入的是 2");
    expect(STRINGS.en.verbWhy(why!)).toBe(e.error!.reason);
  });
  it("words the model's predicted refusal of the modify the gate holds, under the diagram", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 1 }) });
    const ctx = (await s.call(0, "openDevice", ["rxe0"])) as Ref;
    const pd = (await s.call(ctx.$handle, "allocPd", [])) as Ref;
    const cq = (await s.call(ctx.$handle, "createCq", [16])) as Ref;
    const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    const qp = (await s.call(pd.$handle, "createQp", [
      { send_cq: cq, recv_cq: cq, cap, qp_type: c.IBV_QPT_RC },
    ])) as Ref;
    s.gate.pause();
    const held = s
      .call(qp.$handle, "modify", [
        { qp_state: c.IBV_QPS_INIT, pkey_index: 0, qp_access_flags: 0 },
        c.IBV_QP_STATE | c.IBV_QP_PKEY_INDEX | c.IBV_QP_ACCESS_FLAGS,
      ])
      .catch(() => {});
    while (!s.gate.pending) await new Promise((r) => setTimeout(r, 1));
    const gate = { mode: "step" as const, pending: s.gate.pending, stopped: false };
    expect(gate.pending.prediction).toMatchObject({ outcome: "EINVAL", attribute: "IBV_QP_PORT" });
    const view = buildView({ events: s.events(), gate });
    expect(view.qps[0]!.pendingWhy).toMatchObject({ kind: "mask", missing: ["IBV_QP_PORT"] });
    const svg = (lang: "en" | "zh") =>
      renderToStaticMarkup(
        createElement(LangContext.Provider, { value: lang }, createElement(PredictedError, { qp: view.qps[0] })),
      );
    expect(svg("zh")).toContain(
      "预测：EINVAL —— RESET → INIT 需要 IBV_QP_ACCESS_FLAGS, IBV_QP_PKEY_INDEX, IBV_QP_PORT；缺少：IBV_QP_PORT",
    );
    expect(svg("en")).toContain(`predicted: EINVAL — ${gate.pending.prediction!.reason}`);
    s.gate.continue();
    await held;
  });
  it("words the model's own value refusals (no GRH on RoCE) from their data, the English unchanged", () => {
    const attr = {
      qp_state: c.IBV_QPS_RTR,
      path_mtu: c.IBV_MTU_1024,
      dest_qp_num: 18,
      rq_psn: 0,
      max_dest_rd_atomic: 1,
      min_rnr_timer: 1,
      ah_attr: { is_global: 0, port_num: 1 },
    };
    const mask =
      c.IBV_QP_STATE |
      c.IBV_QP_AV |
      c.IBV_QP_PATH_MTU |
      c.IBV_QP_DEST_QPN |
      c.IBV_QP_RQ_PSN |
      c.IBV_QP_MAX_DEST_RD_ATOMIC |
      c.IBV_QP_MIN_RNR_TIMER;
    const p = predictModify(c.IBV_QPT_RC, c.IBV_QPS_INIT, attr, mask);
    expect(p).toMatchObject({ ok: false, code: "EINVAL", attribute: "ah_attr.is_global" });
    if (p.ok) return;
    expect(p.why).toEqual({ kind: "predict-no-grh", from: c.IBV_QPS_INIT, to: c.IBV_QPS_RTR });
    expect(p.reason).toBe(
      "INIT → RTR: ah_attr.is_global is 0, but RoCE needs a GRH: set ah_attr.is_global = 1 and ah_attr.grh.dgid to the peer's GID",
    );
    expect(verbFailureText(p.why!)).toBe(p.reason);
    expect(STRINGS.zh.verbWhy(p.why!)).toBe(
      "INIT → RTR：ah_attr.is_global 为 0，而 RoCE 需要 GRH：请设置 ah_attr.is_global = 1，并把 ah_attr.grh.dgid 设为对端的 GID",
    );
  });
  it("shows the banner's reason in Chinese when the program ended with that call's error", async () => {
    const { error, view } = await modify({ qp_state: c.IBV_QPS_INIT }, c.IBV_QP_STATE);
    const data = (error as unknown as { toJSON(): object }).toJSON() as Parameters<typeof ErrorBanner>[0]["error"];
    const banner = (lang: "en" | "zh") =>
      renderToStaticMarkup(
        createElement(
          LangContext.Provider,
          { value: lang },
          createElement(ErrorBanner, { error: data, failed: view.lastError }),
        ),
      );
    expect(banner("zh")).toContain("RESET → INIT 需要 IBV_QP_ACCESS_FLAGS");
    expect(banner("zh")).toContain("失败，错误码");
    // English keeps the backend's own sentence.
    expect(banner("en")).toContain(data!.reason!);
    // Another call's error recorded before errors carried their data (here: as if an earlier call
    // had failed) keeps its own words.
    const { why: _why, ...old } = data!;
    expect(
      renderToStaticMarkup(
        createElement(
          LangContext.Provider,
          { value: "zh" },
          createElement(ErrorBanner, { error: { ...old, verb: "ibv_post_send" }, failed: view.lastError }),
        ),
      ),
    ).toContain(data!.reason!);
  });
});
