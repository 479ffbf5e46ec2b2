/** The packet timeline rendered from plain data: what a learner reads. */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { PacketRecord } from "../../../bridge/contract.js";
import { LangContext } from "../i18n.js";
import type { TimelineView } from "../model/view.js";
import { PacketTimeline } from "./PacketTimeline.js";

/** A packet-log record: an RC WRITE's first packet from rxe0's QP 17 to QP 18 unless `over` says otherwise. */
const rec = (over: Partial<PacketRecord> = {}): PacketRecord => ({
  seq: 0,
  at: 1,
  time: 0.012,
  src: "rxe0",
  dst: "rxe0",
  opcode: "RC_RDMA_WRITE_FIRST",
  psn: 0,
  src_qpn: 17,
  dest_qpn: 18,
  len: 1024,
  ...over,
});

const lanes = [
  { key: "rxe0/17", qp_num: 17, handle: "qp0", device: "rxe0" },
  { key: "rxe0/18", qp_num: 18, handle: "qp1", device: "rxe0" },
];
const view: TimelineView = {
  observable: true,
  lanes,
  hiddenRows: 0,
  earlierPackets: 0,
  rows: [
    {
      kind: "wqe",
      key: "w1",
      t: 0,
      qp_num: 17,
      lane: "rxe0/17",
      queue: "SQ",
      opcode: "RDMA_WRITE",
      wr_id: 1,
      bytes: 2500,
      signaled: true,
    },
    {
      kind: "packet",
      key: "p0",
      t: 0,
      from: "rxe0/17",
      to: "rxe0/18",
      opcode: "RDMA_WRITE_FIRST",
      label: "RDMA_WRITE_FIRST",
      klass: "request",
      psn: 0,
      len: 1024,
      detail: rec({ reth: { va: 0x1000, rkey: 0x1234, len: 2500 } }),
    },
    { kind: "gap", key: "g3", count: 2 },
    {
      kind: "packet",
      key: "p3",
      t: 0,
      from: "rxe0/18",
      to: "rxe0/17",
      opcode: "ACKNOWLEDGE",
      label: "RNR NAK (timer 12)",
      klass: "rnr",
      psn: 2,
      len: 0,
      detail: rec({
        src_qpn: 18,
        dest_qpn: 17,
        opcode: "RC_ACKNOWLEDGE",
        psn: 2,
        len: 0,
        aeth: { syndrome: 0x2c, text: "RNR NAK (timer 12)", msn: 0 },
      }),
    },
    { kind: "wait", key: "tc", t: 0.65, ms: 0.65, why: "rnr" },
    {
      kind: "cqe",
      key: "c1",
      t: 0.65,
      qp_num: 17,
      lane: "rxe0/17",
      opcode: "RDMA_WRITE",
      wr_id: 1,
      status: "SUCCESS",
      bytes: 2500,
      bad: false,
    },
  ],
};

describe("PacketTimeline", () => {
  it("draws lanes per QP, WQE, packets with PSNs, gaps, waits and the CQE, with a legend", () => {
    const s = renderToStaticMarkup(<PacketTimeline packets={view} />);
    expect(s).toContain("QP 17");
    expect(s).toContain("QP 18");
    expect(s).toMatch(/data-kind="wqe".*post<\/b> RDMA_WRITE/);
    expect(s).toMatch(/class="pt-row pt-packet pt-request"[^>]*title="RC_RDMA_WRITE_FIRST/);
    expect(s).toMatch(/<b>RDMA_WRITE_FIRST<\/b> <span class="pt-dim">psn<\/span> 0/);
    expect(s).toMatch(/class="pt-row pt-packet pt-rnr"/);
    expect(s).toContain("2 packets not shown");
    expect(s).toContain("clock +0.65 ms: the RNR timer ran out");
    expect(s).toMatch(/<b>CQE<\/b> RDMA_WRITE/);
    expect(s).toContain("RNR NAK");
    expect(s).toContain("error CQE"); // the legend
    expect(s).not.toContain("not observable");
  });

  it("words a packet's tooltip in the learner's language, header names as the spec has them", () => {
    const title = (lang: "en" | "zh") =>
      [
        ...renderToStaticMarkup(
          <LangContext.Provider value={lang}>
            <PacketTimeline packets={view} />
          </LangContext.Provider>,
        ).matchAll(/data-kind="packet" title="([^"]*)"/g),
      ].map((m) => m[1]);
    const [write, rnr] = title("en");
    expect(write).toBe(
      "RC_RDMA_WRITE_FIRST · rxe0 QP 17 → rxe0 QP 18 · PSN 0x0 · 1024 B payload · RETH va 0x1000 rkey 0x1234 len 2500 · t = 0.012 ms",
    );
    expect(rnr).toContain("AETH RNR NAK (timer 12) (syndrome 0x2c) MSN 0");
    const [writeZh, rnrZh] = title("zh");
    expect(writeZh).toBe(
      "RC_RDMA_WRITE_FIRST · rxe0 QP 17 → rxe0 QP 18 · PSN 0x0 · 载荷 1024 字节 · RETH va 0x1000 rkey 0x1234 len 2500 · t = 0.012 毫秒",
    );
    expect(rnrZh).toContain("AETH RNR NAK（计时器 12）（syndrome 0x2c）MSN 0");
    expect(rnrZh).not.toMatch(/payload|\bms\b/);
  });

  it("labels a NAK in the learner's language by its syndrome; an opcode keeps rxe's name", () => {
    const labels = (lang: "en" | "zh") =>
      [
        ...renderToStaticMarkup(
          <LangContext.Provider value={lang}>
            <PacketTimeline packets={view} />
          </LangContext.Provider>,
        ).matchAll(/<span class="pt-label"[^>]*><b>([^<]*)<\/b>/g),
      ].map((m) => m[1]);
    expect(labels("en")).toEqual(["RDMA_WRITE_FIRST", "RNR NAK (timer 12)"]);
    expect(labels("zh")).toEqual(["RDMA_WRITE_FIRST", "RNR NAK（计时器 12）"]);
  });

  it("explains an empty timeline, and that the native backend has no packet log", () => {
    const empty = { observable: true, lanes: [], rows: [], hiddenRows: 0, earlierPackets: 0 };
    expect(renderToStaticMarkup(<PacketTimeline packets={empty} />)).toContain("No traffic yet");
    const native = renderToStaticMarkup(<PacketTimeline packets={{ ...empty, observable: false }} />);
    expect(native).toContain("Packets are not observable on the native backend");
    expect(native).not.toContain("No traffic yet");
  });

  it("says why a packet was dropped on a line of its own, and a name with its device says it once", () => {
    const two: TimelineView = {
      observable: true,
      lanes: [
        { key: "rxe0/17", qp_num: 17, handle: "qp0", name: "qp (QP 0x11, rxe0)", device: "rxe0" },
        { key: "rxe1/17", qp_num: 17, handle: "qp1", name: "peer (QP 0x11)", device: "rxe1" },
      ],
      hiddenRows: 0,
      earlierPackets: 0,
      rows: [
        {
          kind: "packet",
          key: "p0",
          t: 0,
          from: "rxe0/17",
          to: "rxe1/17",
          opcode: "SEND_ONLY",
          label: "SEND_ONLY",
          klass: "request",
          psn: 0,
          len: 8,
          detail: rec({ dst: "rxe1", opcode: "RC_SEND_ONLY", len: 8 }),
          dropped: "link down",
          drop: { kind: "link-down" },
        },
      ],
    };
    const s = renderToStaticMarkup(<PacketTimeline packets={two} />);
    expect(s).toMatch(/data-kind="packet".*<b>SEND_ONLY<\/b>/);
    expect(s).toMatch(/data-kind="drop-why">✗ dropped: [^<]+<\/div>/);
    expect(s).not.toMatch(/data-kind="packet"[^]*dropped:[^]*data-kind="drop-why"/);
    expect(s).toContain("<b>qp (QP 0x11, rxe0)</b></span>");
    expect(s).toContain('<b>peer (QP 0x11)</b><span class="pt-dim"> rxe1</span>');
  });
});
