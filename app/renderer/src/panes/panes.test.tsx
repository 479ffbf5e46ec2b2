/** The panes rendered to static HTML from plain data: what a learner would see. */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import {
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_WC_RECV,
  IBV_WC_REM_ACCESS_ERR,
  IBV_WC_SUCCESS,
} from "../../../../verbs/constants.js";
import type { Wc } from "../../../../verbs/types.js";
import { qpView } from "../model/fixtures.test-util.js";
import { STRINGS } from "../i18n.js";
import type { QpView, TranscriptRow } from "../model/view.js";
import { PredictedError, QpDiagram } from "./QpDiagram.js";
import { QpQueryTable } from "./QpQueryTable.js";
import { CqEntries } from "./CqEntries.js";
import { ConnectionPane } from "./ConnectionPane.js";
import { MrHex } from "./MrHex.js";
import { ErrorBanner } from "./ErrorBanner.js";
import { ThroughputPlot } from "./ThroughputPlot.js";
import { TranscriptPane } from "./TranscriptPane.js";
import { ROWS_PER_CHUNK } from "./TranscriptWindow.js";

const html = (el: React.ReactElement) => renderToStaticMarkup(el);
/** How often a pattern occurs in the markup. */
const count = (s: string, re: RegExp) => (s.match(new RegExp(re.source, "g")) ?? []).length;

describe("QpDiagram", () => {
  it("fills the current state, animates the transition just taken and marks the predicted one", () => {
    const qp = qpView(17, {
      state: IBV_QPS_INIT,
      lastTransition: { from: IBV_QPS_RESET, to: IBV_QPS_INIT, seq: 4 },
      pending: { qp: 1, outcome: "ok", state: IBV_QPS_RTR, warnings: [] },
    });
    const s = html(<QpDiagram qps={[qp]} focus="qp17" />);
    expect(s).toMatch(/class="node state-INIT current"/);
    expect(s).toMatch(/class="edge primary taken" [^>]*data-edge="RESET-INIT"/);
    expect(s).toMatch(/class="edge primary available predicted" [^>]*data-edge="INIT-RTR"/);
    expect(s).toMatch(/class="node state-RTR predicted"/);
    expect(s).toContain("QP 0x11"); // the chip names the QP as the query table does (its one name)
  });
  it("keeps the taken edge (and its animation) when the focus moves between QPs that took it; a new transition replays it", () => {
    // The key of the taken edge's <path>: a new key is a new element, whose march starts over.
    const takenKey = (qps: QpView[], focus: string) => {
      const svg = QpDiagram({ qps, focus }) as React.ReactElement<{ children: unknown[] }>;
      const edges = (svg.props.children as unknown[]).flat() as (React.ReactElement<{ className?: string }> | null)[];
      return edges.find((e) => e?.props.className?.includes("taken"))?.key;
    };
    const rts = (seq: number) => ({ from: IBV_QPS_RTR, to: IBV_QPS_RTS, seq });
    const a = qpView(17, { handle: "qp0", state: IBV_QPS_RTS, lastTransition: rts(10) });
    const b = qpView(18, { handle: "qp1", state: IBV_QPS_RTS, lastTransition: rts(13) });
    expect(takenKey([a, b], "qp0")).toBeDefined();
    expect(takenKey([a, b], "qp0")).toBe(takenKey([a, b], "qp1"));
    const again = { ...a, lastTransition: rts(20) };
    expect(takenKey([again, b], "qp0")).not.toBe(takenKey([a, b], "qp0"));
  });
  it("shows a predicted error (under the diagram) instead of a target", () => {
    const qp = qpView(17, {
      state: IBV_QPS_INIT,
      pending: {
        qp: 1,
        outcome: "EINVAL",
        state: IBV_QPS_INIT,
        reason: "INIT → RTR needs …; missing: IBV_QP_DEST_QPN",
        attribute: "IBV_QP_DEST_QPN",
        warnings: [],
      },
    });
    expect(html(<PredictedError qp={qp} />)).toContain(
      "predicted: EINVAL — INIT → RTR needs …; missing: IBV_QP_DEST_QPN",
    );
    expect(html(<QpDiagram qps={[qp]} />)).not.toMatch(/class="[^"]*predicted/);
    expect(html(<PredictedError qp={qpView(18, { state: IBV_QPS_INIT })} />)).toBe("");
  });
  it("marks a divergence on the state reality reached", () => {
    const qp = qpView(
      17,
      { state: IBV_QPS_RTR, divergence: { expected: "INIT", actual: "RTR" } },
      { qp_state: IBV_QPS_RTR },
    );
    expect(html(<QpDiagram qps={[qp]} />)).toMatch(/class="node state-RTR current diverged"/);
    // Worded in the learner's language from its data.
    expect(STRINGS.en.divergence(qp.divergence!)).toBe("model expected INIT; the device did RTR");
    expect(STRINGS.zh.divergence(qp.divergence!)).toBe("模型预期 INIT；设备实际 RTR");
  });
});

describe("QpQueryTable", () => {
  it("highlights the fields the last verb changed, with their old value", () => {
    const before = qpView(17, {}, { qp_state: IBV_QPS_RESET }).query!;
    const qp = qpView(
      17,
      { changed: ["attr.qp_state", "attr.port_num"], previous: before },
      { qp_state: IBV_QPS_INIT },
    );
    const s = html(<QpQueryTable qps={[qp]} />);
    expect(s).toContain(
      '<td class="value changed" data-field="attr.qp_state"><span class="was">IBV_QPS_RESET</span>IBV_QPS_INIT</td>',
    );
    expect(count(s, /class="value changed"/)).toBe(2);
  });
  it("puts two QPs side by side", () => {
    const s = html(<QpQueryTable qps={[qpView(17), qpView(18)]} />);
    expect(s).toContain("QP 0x11");
    expect(s).toContain("QP 0x12");
  });
});

describe("ConnectionPane", () => {
  it("flags the side whose dest_qp_num is not the peer's QPN", () => {
    const a = qpView(17, { state: IBV_QPS_RTR }, { qp_state: IBV_QPS_RTR, dest_qp_num: 99 });
    const b = qpView(18, { state: IBV_QPS_RTR }, { qp_state: IBV_QPS_RTR, dest_qp_num: 17 });
    const s = html(<ConnectionPane qps={[a, b]} devices={[]} mrs={[]} />);
    expect(s).toContain("QP 0x11: dest_qp_num is 99, the peer says 18");
    expect(count(s, /class="value mismatch"/)).toBe(1);
  });
});

describe("CqEntries", () => {
  const wc = (status: number, opcode = IBV_WC_RECV): Wc => ({
    wr_id: 1,
    status,
    opcode,
    vendor_err: 0,
    byte_len: 5,
    imm_data: 0,
    qp_num: 17,
    src_qp: 18,
    wc_flags: 0,
    pkey_index: 0,
    slid: 0,
    sl: 0,
    dlid_path_bits: 0,
  });
  it("colours by status and explains the errors", () => {
    const s = html(
      <CqEntries
        cqs={[{ handle: "cq0", name: "cq", cqe: 15, entries: [wc(IBV_WC_SUCCESS), wc(IBV_WC_REM_ACCESS_ERR)] }]}
      />,
    );
    expect(s).toMatch(/class="wc ok" data-status="IBV_WC_SUCCESS"/);
    expect(s).toMatch(/class="wc error" data-status="IBV_WC_REM_ACCESS_ERR"/);
    expect(s).toContain("rkey");
  });
});

describe("MrHex", () => {
  it("shows bytes in hex with the changed ones highlighted", () => {
    const bytes = new TextEncoder().encode("hi");
    const s = html(
      <MrHex
        mrs={[
          {
            handle: "mr0",
            name: "buf",
            addr: 0x1000,
            length: 2,
            lkey: 1,
            rkey: 0,
            access: 1,
            bytes,
            changedBytes: [1],
          },
        ]}
      />,
    );
    expect(s).toContain("<span>68 </span>");
    expect(s).toContain('<span class="chg">69 </span>');
  });
});

describe("ErrorBanner", () => {
  it("names the verb, the errno and the missing attribute", () => {
    const s = html(
      <ErrorBanner
        error={{
          name: "VerbsError",
          message: "ibv_modify_qp: EINVAL (22)",
          verb: "ibv_modify_qp",
          code: "EINVAL",
          attribute: "IBV_QP_DEST_QPN",
          reason: "INIT → RTR needs …",
        }}
      />,
    );
    expect(s).toContain('data-attribute="IBV_QP_DEST_QPN"');
    expect(s).toContain("<code>EINVAL</code>");
  });
});

describe("ThroughputPlot", () => {
  it("plots one point per message size", () => {
    const s = html(
      <ThroughputPlot
        points={[
          { bytes: 64, gbps: 0.5 },
          { bytes: 4096, gbps: 8 },
          { bytes: 65536, gbps: 9.5 },
        ]}
      />,
    );
    expect(count(s, /<circle/)).toBe(3);
    expect(s).toContain(">64K<");
  });
});

describe("TranscriptPane", () => {
  const row = (seq: number): TranscriptRow => ({
    seq,
    verb: "ibv_post_send",
    detail: `wr_id ${seq}`,
    outcome: "ok",
  });
  it("shows every call once, in order, under one header, in tables with the same columns", () => {
    // Two full chunks and a short one.
    const rows = Array.from({ length: 2 * ROWS_PER_CHUNK + 5 }, (_, i) => row(i + 1));
    const s = html(<TranscriptPane rows={rows} />);
    const seqs = [...s.matchAll(/<td class="muted">(\d+)<\/td>/g)].map((m) => Number(m[1]));
    expect(seqs).toEqual(rows.map((r) => r.seq));
    expect(count(s, /<thead>/)).toBe(1);
    expect(count(s, /class="transcript-chunk"/)).toBe(3);
    expect(count(s, /<colgroup>/)).toBe(4); // the header's and each chunk's
  });
});
