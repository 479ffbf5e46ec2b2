/**
 * What the panes and the editor show of a program's lines: each call's row links to its line,
 * each line's latest outcome, and one name per object, the learner's variable with the QPN.
 */
import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../../../sim/index.js";
import { createSession } from "../../../session/session.js";
import type { Ref } from "../../../session/wire.js";
import * as c from "../../../../verbs/constants.js";
import { buildView } from "./reduce.js";
import { STRINGS } from "../i18n.js";

const site = (line: number, variable?: string) => ({ line, column: 3, ...(variable && { variable }) });

async function program() {
  const s = createSession({ backend: createSimBackend({ seed: 1 }) });
  const ctx = (await s.call(0, "openDevice", ["rxe0"], site(2, "ctx"))) as Ref;
  const pd = (await s.call(ctx.$handle, "allocPd", [], site(3, "pd"))) as Ref;
  const cq = (await s.call(ctx.$handle, "createCq", [16], site(4, "cq"))) as Ref;
  const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const init = { send_cq: cq, recv_cq: cq, cap, qp_type: c.IBV_QPT_RC };
  const a = (await s.call(pd.$handle, "createQp", [init], site(5, "a"))) as Ref;
  const b = (await s.call(pd.$handle, "createQp", [init], site(6))) as Ref;
  // RESET → INIT with the state alone: EINVAL, the port and the rest missing.
  await s.call(a.$handle, "modify", [{ qp_state: c.IBV_QPS_INIT }, c.IBV_QP_STATE], site(8)).catch(() => {});
  for (let i = 0; i < 2; i++) await s.call(cq.$handle, "poll", [4], site(10));
  await s.call(0, "log", ["hello"], site(12));
  return { s, a, b };
}

describe("source lines and names in the view", () => {
  it("names each object once: the learner's variable and the QPN, or what identifies it", async () => {
    const { s, a, b } = await program();
    const view = buildView({ events: s.events() });
    const qpn = (r: Ref) => Number(r.props!.qp_num).toString(16);
    expect(view.qps.map((q) => q.name)).toEqual([`a (QP 0x${qpn(a)})`, `QP 0x${qpn(b)}`]);
    expect(view.cqs[0]!.name).toBe("cq");
    expect(view.pds[0]!.name).toBe("pd");
    // The transcript row of a.modify names a the same way, and links to line 8.
    const row = view.transcript.find((r) => r.verb === "ibv_modify_qp")!;
    expect(row).toMatchObject({ on: `a (QP 0x${qpn(a)})`, source: { line: 8, column: 3 }, outcome: "EINVAL" });
    expect(view.packets.lanes[0]!.name).toBe(view.qps[0]!.name);
  });
  it("keeps each line's latest outcome: the errno and attribute, a poll's count, the object a create made", async () => {
    const { s } = await program();
    const view = buildView({ events: s.events() });
    const byLine = new Map(view.lineResults.map((r) => [r.line, r]));
    expect(byLine.get(8)).toMatchObject({ bad: true, count: 1 });
    const en = (line: number) => STRINGS.en.lineOutcome(byLine.get(line)!.outcome);
    expect(byLine.get(8)!.outcome).toMatchObject({ kind: "error", code: "EINVAL", missing: true });
    expect(en(8)).toMatch(/^EINVAL: missing IBV_QP_/);
    expect(STRINGS.zh.lineOutcome(byLine.get(8)!.outcome)).toMatch(/^EINVAL：缺少 IBV_QP_/);
    expect(byLine.get(10)).toMatchObject({ bad: false, count: 2 });
    expect(en(10)).toBe("0 completions");
    expect(en(5)).toBe(view.qps[0]!.name);
    expect(byLine.has(12)).toBe(false); // a log line is in the Log, not an outcome
    expect(view.logs).toEqual([{ text: "hello", source: { line: 12, column: 3 } }]);
  });
  it("says what the program is paused before in those names, with its line", async () => {
    const { s, a } = await program();
    const pending = {
      seq: 99,
      verb: "ibv_modify_qp",
      target: { $handle: a.$handle, type: "qp" as const },
      method: "modify",
      args: [{ qp_state: c.IBV_QPS_INIT }, c.IBV_QP_STATE],
      source: site(14),
    };
    const view = buildView({ events: s.events(), gate: { mode: "step", pending, stopped: false } });
    expect(view.pausedBefore).toEqual({
      verb: "ibv_modify_qp",
      detail: `${view.qps[0]!.name}.modify(→ INIT, mask STATE)`,
      source: site(14),
    });
  });
});
