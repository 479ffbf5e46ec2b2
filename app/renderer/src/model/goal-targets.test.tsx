import { describe, expect, it } from "vitest";
import { renderToStaticMarkup } from "react-dom/server";
import { IBV_QPS_INIT, IBV_QPS_RESET } from "../../../../verbs/constants.js";
import type { Check } from "../../../../lessons/schema.js";
import { QpDiagram } from "../panes/QpDiagram.js";
import { MrHex } from "../panes/MrHex.js";
import type { MrView, QpView } from "./view.js";
import { goalTargets, NO_GOALS } from "./goal-targets.js";

const checks: Check[] = [
  { kind: "qp_state", qp: 0, state: "IBV_QPS_INIT" },
  { kind: "qp_attr", qp: 0, field: "port_num", value: { equals: 1 } },
  { kind: "mr_bytes", mr: 1, utf8: "Hello" },
  { kind: "mr_bytes", mr: 0, offset: 4, hex: "ff00" },
];

describe("the step's goals, where they point", () => {
  it("state and memory goals, with their verdicts once judged; none for a step without", () => {
    const t = goalTargets(checks);
    expect(t.states).toEqual([{ qp: 0, state: IBV_QPS_INIT }]);
    expect(t.bytes.map((b) => [b.mr, b.offset, Array.from(b.bytes), b.utf8])).toEqual([
      [1, 0, [72, 101, 108, 108, 111], "Hello"],
      [0, 4, [0xff, 0], undefined],
    ]);
    const judged = goalTargets(checks, {
      results: checks.map((check, i) => ({ check, passed: i !== 0, detail: "" })),
    });
    expect(judged.states[0]!.passed).toBe(false);
    expect(judged.bytes.map((b) => b.passed)).toEqual([true, true]);
    expect(goalTargets([{ kind: "log", key: "x", present: true }])).toBe(NO_GOALS);
  });

  it("the diagram outlines the goal state, with the QP's name and the verdict in its title", () => {
    const qp = { handle: "h1", name: "a (QP 0x11)", state: IBV_QPS_RESET } as unknown as QpView;
    const html = renderToStaticMarkup(<QpDiagram qps={[qp]} goals={goalTargets(checks).states} />);
    expect(html).toMatch(/<g class="goal" data-goal="INIT"><title>goal: a \(QP 0x11\) ends in INIT<\/title>/);
    const failed = goalTargets(checks, { results: checks.map((check) => ({ check, passed: false, detail: "" })) });
    expect(renderToStaticMarkup(<QpDiagram qps={[qp]} goals={failed.states} />)).toContain(
      "goal: a (QP 0x11) ends in INIT ✗",
    );
    expect(renderToStaticMarkup(<QpDiagram qps={[qp]} />)).not.toContain("data-goal");
  });

  it("the Memory tab shows a goal's bytes under its MR, and whether the MR holds them as last read", () => {
    const mr = (name: string, bytes?: number[]) =>
      ({
        handle: name,
        name,
        addr: 0,
        length: 64,
        lkey: 1,
        rkey: 0,
        access: 1,
        ...(bytes && { bytes: new Uint8Array(bytes) }),
      }) as MrView;
    const goals = goalTargets(checks).bytes;
    const html = renderToStaticMarkup(
      <MrHex mrs={[mr("src", [0, 0, 0, 0, 0xff, 1]), mr("dst", [72, 101, 108, 108, 111, 0])]} goals={goals} />,
    );
    expect(html).toContain('data-seen="differ"');
    expect(html).toContain('data-seen="match"');
    expect(html).toContain("goal at offset 0: &quot;Hello&quot;");
    expect(html).toContain("goal at offset 4: 0xff00");
    expect(renderToStaticMarkup(<MrHex mrs={[mr("src"), mr("dst")]} goals={goals} />)).toContain("not read yet");
  });
});
