/**
 * Failed completions and silent mistakes as a learner sees them: the reason on the failing
 * row and under the diagram, no "the two sides agree" that a failure contradicts, rxe's
 * opcode 0 explained, and the session's notices. Folded from transcript events (reduce.ts).
 */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import {
  IBV_QPS_ERR,
  IBV_QPS_RESET,
  IBV_QPS_RTS,
  IBV_WC_REM_ACCESS_ERR,
  IBV_WC_RETRY_EXC_ERR,
} from "../../../../verbs/constants.js";
import type { Wc } from "../../../../verbs/types.js";
import type { QpSnapshot, TranscriptEvent, VerbEvent } from "../../../session/transcript.js";
import { attr, qpView } from "../model/fixtures.test-util.js";
import { buildView } from "../model/reduce.js";
import { Alerts } from "./Alerts.js";
import { ConnectionPane } from "./ConnectionPane.js";
import { CqEntries } from "./CqEntries.js";
import { QpDiagram } from "./QpDiagram.js";
import { LangContext } from "../i18n.js";

const html = (el: React.ReactElement) => renderToStaticMarkup(el);

const wc = (status: number, over: Partial<Wc> = {}): Wc => ({
  wr_id: 9,
  status,
  opcode: 0,
  vendor_err: 0,
  byte_len: 0,
  imm_data: 0,
  qp_num: 17,
  src_qp: 0,
  wc_flags: 0,
  pkey_index: 0,
  slid: 0,
  sl: 0,
  dlid_path_bits: 0,
  ...over,
});

// "[0x1fe0, 0x2020) (64 bytes) is outside mr0 [0x1000, 0x2000)": 32 bytes past its end
const why = {
  reason: { kind: "outside-mr" as const, mr: "mr0", va: 0x1fe0, n: 64, mrAddr: 0x1000, mrLen: 0x1000 },
  source: "inferred" as const,
};

let seq = 0;
const verb = (over: Partial<VerbEvent>): VerbEvent => ({
  kind: "verb",
  seq: ++seq,
  verb: "ibv_poll_cq",
  target: { $handle: 3, type: "cq" },
  method: "poll",
  args: [],
  clock: 0,
  clockAdvance: 0,
  durationMs: 0,
  qps: [],
  ...over,
});
const snap = (state: number): QpSnapshot => ({
  qp: 4,
  qp_num: 17,
  before: attr({ qp_state: IBV_QPS_RTS, dest_qp_num: 18 }),
  after: attr({ qp_state: state, dest_qp_num: 18 }),
  changes: [],
});

function events(): TranscriptEvent[] {
  seq = 0;
  return [
    verb({
      verb: "ibv_create_cq",
      method: "createCq",
      target: { $handle: 1, type: "context" },
      created: [{ $handle: 3, type: "cq", props: { cqe: 15 } }],
    }),
    verb({
      verb: "ibv_create_qp",
      method: "createQp",
      target: { $handle: 2, type: "pd" },
      created: [{ $handle: 4, type: "qp", props: { qp_num: 17, qp_type: 2, send_cq: { $handle: 3, type: "cq" } } }],
      notices: [
        {
          id: "cq_rounded_up",
          text: "A CQ was created with cqe 10, and rxe0 returned cqe 15",
          asked: 10,
          actual: 15,
          device: "rxe0",
          wrs: 15,
          users: [{ qpn: 17, send: 10, recv: 5 }],
        },
      ],
    }),
    verb({ qps: [snap(IBV_QPS_ERR)], completions: [{ cq: 3, wc: wc(IBV_WC_REM_ACCESS_ERR), why }] }),
  ];
}

describe("a failed completion on the main view", () => {
  it("folds why into the CQ's entry and the QP's failure; notices into the view", () => {
    const v = buildView({ events: events() });
    expect(v.cqs[0]!.entries[0]!.why).toEqual(why);
    expect(v.qps[0]!.failure).toMatchObject({ status: IBV_WC_REM_ACCESS_ERR, wr_id: 9, why });
    expect(v.notices.map((n) => n.id)).toEqual(["cq_rounded_up"]);
  });

  it("a QP back in RESET has no failure any more", () => {
    const evs = events();
    evs.push(
      verb({
        verb: "ibv_modify_qp",
        method: "modify",
        qps: [{ ...snap(IBV_QPS_RESET), before: attr({ qp_state: IBV_QPS_ERR }) }],
      }),
    );
    expect(buildView({ events: evs }).qps[0]!.failure).toBeUndefined();
  });

  it("under the diagram: the status, the WR and why, labelled as inferred", () => {
    const v = buildView({ events: events() });
    const s = html(<Alerts qps={v.qps} devices={[]} mrs={[]} notices={v.notices} />);
    expect(s).toContain('data-testid="wc-failure" data-status="IBV_WC_REM_ACCESS_ERR"');
    expect(s).toContain("QP 0x11: IBV_WC_REM_ACCESS_ERR (wr_id 9)");
    expect(s).toContain("is outside mr0");
    expect(s).toContain("inferred from both sides&#x27; objects");
    expect(s).toContain('data-notice="cq_rounded_up"');
  });

  it("the failed QP's chip on the diagram is marked, its tooltip says why", () => {
    const v = buildView({ events: events() });
    const s = html(<QpDiagram qps={v.qps} />);
    expect(s).toContain('class="chip failed"');
    expect(s).toContain('data-failed="IBV_WC_REM_ACCESS_ERR"');
    expect(s).toContain("<title>IBV_WC_REM_ACCESS_ERR: [0x1fe0, 0x2020) (64 bytes) is outside mr0");
  });

  it("the failing row gives the reason and says rxe's opcode 0 means nothing", () => {
    const s = html(
      <CqEntries
        cqs={[
          {
            handle: "cq0",
            name: "cq",
            cqe: 15,
            entries: [{ ...wc(IBV_WC_REM_ACCESS_ERR), why: { ...why, posted: "IBV_WR_RDMA_WRITE" } }],
          },
        ]}
      />,
    );
    expect(s).toContain('data-testid="wc-why" data-source="inferred"');
    expect(s).toContain("Why: [0x1fe0, 0x2020)");
    expect(s).toMatch(
      /title="opcode 0 means nothing here: rxe sets only wr_id, status and qp_num[^"]*\(the WR was IBV_WR_RDMA_WRITE\)"/,
    );
  });
});

describe("the Connection tab and a failure", () => {
  const a = (over = {}) => qpView(17, { state: IBV_QPS_ERR, ...over }, { qp_state: IBV_QPS_ERR, dest_qp_num: 18 });
  const b = qpView(18, { state: IBV_QPS_RTS }, { qp_state: IBV_QPS_RTS, dest_qp_num: 17 });

  it("never says the sides agree when a WR of theirs failed; it says why", () => {
    const failure = {
      status: IBV_WC_RETRY_EXC_ERR,
      wr_id: 1,
      seq: 3,
      why: { reason: { kind: "no-answer" as const, qpn: 0x12 }, source: "simulator" as const },
    };
    const s = html(<ConnectionPane qps={[a({ failure }), b]} devices={[]} mrs={[]} />);
    expect(s).not.toContain("agree");
    expect(s).toContain("QP 0x11: a WR failed with IBV_WC_RETRY_EXC_ERR: nothing came back from QP 18");
  });

  it("without a failure, two matching sides still agree", () => {
    expect(html(<ConnectionPane qps={[a(), b]} devices={[]} mrs={[]} />)).toContain("agree");
  });

  it("a QP moved to ERR still shows its wrong dest_qp_num (on the main view too)", () => {
    const wrong = qpView(17, { state: IBV_QPS_ERR }, { qp_state: IBV_QPS_ERR, dest_qp_num: 99 });
    expect(html(<ConnectionPane qps={[wrong, b]} devices={[]} mrs={[]} />)).toContain(
      "QP 0x11: dest_qp_num is 99, the peer says 18",
    );
    expect(html(<Alerts qps={[wrong, b]} devices={[]} mrs={[]} notices={[]} />)).toContain(
      "QP 0x11: dest_qp_num is 99, the peer says 18",
    );
  });
});

describe("failures in Chinese", () => {
  const zh = (el: React.ReactElement) => html(<LangContext.Provider value="zh">{el}</LangContext.Provider>);
  const b = qpView(18, { state: IBV_QPS_RTS }, { qp_state: IBV_QPS_RTS, dest_qp_num: 17 });

  it("the Connection tab and the main view word a mismatch and a failure in Chinese", () => {
    const wrong = qpView(17, { state: IBV_QPS_ERR }, { qp_state: IBV_QPS_ERR, dest_qp_num: 99 });
    const s = zh(<ConnectionPane qps={[wrong, b]} devices={[]} mrs={[]} />);
    expect(s).toContain("QP 0x11: dest_qp_num 是 99，对端给的是 18");
    expect(s).toContain("带外交换");
    expect(s).not.toContain("the peer says");
    expect(zh(<Alerts qps={[wrong, b]} devices={[]} mrs={[]} notices={[]} />)).toContain("（见“连接”页）");
    const failure = { status: IBV_WC_RETRY_EXC_ERR, wr_id: 1, seq: 3 };
    const f = zh(<ConnectionPane qps={[{ ...wrong, failure }, b]} devices={[]} mrs={[]} />);
    expect(f).toContain("有一个 WR 以 IBV_WC_RETRY_EXC_ERR 失败");
    expect(zh(<ConnectionPane qps={[qpView(17, {}, { dest_qp_num: 18 }), b]} devices={[]} mrs={[]} />)).toContain(
      "两端配置的内容全部一致",
    );
  });

  it("a failed completion's status, label and opcode note in Chinese", () => {
    const s = zh(
      <CqEntries
        cqs={[
          {
            handle: "cq0",
            name: "cq",
            cqe: 15,
            entries: [{ ...wc(IBV_WC_REM_ACCESS_ERR), why: { ...why, posted: "IBV_WR_RDMA_WRITE" } }],
          },
        ]}
      />,
    );
    expect(s).toContain("远端拒绝访问");
    expect(s).toContain("原因：");
    expect(s).toContain("根据双方的对象推断");
    expect(s).toContain("opcode 0（未设置）");
    expect(s).toMatch(/title="这里的 opcode 0 没有意义[^"]*（这个 WR 是 IBV_WR_RDMA_WRITE）"/);
    expect(s).not.toContain("Why:");
  });
});
