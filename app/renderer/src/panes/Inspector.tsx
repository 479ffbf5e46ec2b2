/** The right-hand column: the QP diagram, the live query table, and the other views in tabs. */
import { useStrings } from "../i18n.js";
import { memo, useMemo, type ReactNode } from "react";
import type { LabView } from "../model/view.js";
import { PredictedError, QpDiagram } from "./QpDiagram.js";
import { QpQueryTable } from "./QpQueryTable.js";
import { ConnectionPane } from "./ConnectionPane.js";
import { ResourcesTree } from "./ResourcesTree.js";
import { CqEntries } from "./CqEntries.js";
import { MrHex } from "./MrHex.js";
import { Counters } from "./Counters.js";
import { PacketTimeline } from "./PacketTimeline.js";
import { ThroughputPlot } from "./ThroughputPlot.js";
import { Tabs } from "./Tabs.js";
import { Alerts } from "./Alerts.js";
import { wcStatusName } from "../model/format.js";
import { NO_GOALS, type GoalTargets } from "../model/goal-targets.js";

// Each view renders again only when its slice of the view changed (the view is structurally
// shared between builds, see model/share.ts).
const Diagram = memo(QpDiagram);
const QueryTable = memo(QpQueryTable);
const Connection = memo(ConnectionPane);
const Resources = memo(ResourcesTree);
const Completions = memo(CqEntries);
const Memory = memo(MrHex);
const CounterTable = memo(Counters);
const Packets = memo(PacketTimeline);
const Plot = memo(ThroughputPlot);
const AlertList = memo(Alerts);

export const Inspector = memo(function Inspector({
  view,
  focus,
  network,
  goals = NO_GOALS,
}: {
  view: LabView;
  focus?: string;
  /** What the current step's goals aim at: marked on the diagram and in the Memory tab. */
  goals?: GoalTargets;
  /** Renders the Network tab (App gives it the bridge: panes/NetworkPane.tsx). */
  network?: () => ReactNode;
}) {
  const f = view.qps.find((q) => q.handle === focus);
  const pair = useMemo(() => view.qps.slice(-2), [view.qps]);
  const wcs = view.cqs.reduce((n, c) => n + c.entries.length, 0);
  const failure = view.qps.reduce<LabView["qps"][number]["failure"]>(
    (newest, q) => (q.failure && (!newest || q.failure.seq > newest.seq) ? q.failure : newest),
    undefined,
  );
  const t = useStrings();
  return (
    <div className="column inspector">
      <section className="panel" aria-label="QP state diagram">
        <h2>
          {t.qpStateMachine}
          {f?.divergence && <span className="badge bad">{t.diverged}</span>}
          {failure && (
            <span className="badge bad" data-testid="wc-failure-badge">
              ✗ {wcStatusName(failure.status).replace("IBV_WC_", "")}
            </span>
          )}
          {f?.pending && (
            <span className={`badge ${f.pending.outcome !== "ok" ? "bad" : ""}`} data-testid="prediction">
              {f.pending.outcome !== "ok" ? t.predicts(f.pending.outcome) : t.predictionShown}
            </span>
          )}
        </h2>
        <div className="panel-body" style={{ paddingBottom: 4 }}>
          <Diagram qps={view.qps} focus={focus} goals={goals.states} />
          <PredictedError qp={f} />
          {f?.divergence && (
            <div
              className="mismatch"
              data-testid="divergence"
              title={t.divergenceNote(f.divergence)}
              style={{ padding: "2px 6px", borderRadius: 4 }}
            >
              {t.divergence(f.divergence)}
            </div>
          )}
          <AlertList qps={view.qps} devices={view.devices} mrs={view.mrs} notices={view.notices} />
          <div className="legend">
            <span>
              <i style={{ borderColor: "#15803d", borderTopStyle: "dashed" }} />
              {t.legendTaken}
            </span>
            <span>
              <i style={{ borderColor: "#2f6fde", borderTopStyle: "dotted" }} />
              {t.legendPredicted}
            </span>
            <span>
              <i style={{ borderColor: "#2f6fde" }} />
              {t.legendLegal}
            </span>
            {goals.states.length > 0 && (
              <span data-testid="legend-goal">
                <i style={{ borderColor: "var(--goal)", borderTopStyle: "dashed" }} />
                {t.legendGoal}
              </span>
            )}
            {(f ?? view.qps[view.qps.length - 1])?.cmMoves && (
              <span data-testid="legend-cm">
                <i style={{ borderColor: "var(--cm)", borderTopStyle: "dashed" }} />
                {t.legendCm}
              </span>
            )}
          </div>
        </div>
      </section>
      <section className="panel qp-query" aria-label="ibv_query_qp">
        <h2>ibv_query_qp {pair.length === 2 && <span className="muted">{t.bothEnds}</span>}</h2>
        <div className="panel-body">
          <QueryTable qps={pair} />
        </div>
      </section>
      <Tabs
        className="inspector-tabs"
        tabs={[
          {
            id: "connection",
            label: t.tabConnection,
            render: () => <Connection qps={view.qps} devices={view.devices} mrs={view.mrs} />,
          },
          {
            id: "resources",
            label: t.tabResources,
            render: () => (
              <Resources devices={view.devices} pds={view.pds} mrs={view.mrs} cqs={view.cqs} qps={view.qps} />
            ),
          },
          { id: "cq", label: t.tabCompletions(wcs), render: () => <Completions cqs={view.cqs} /> },
          { id: "mr", label: t.tabMemory, render: () => <Memory mrs={view.mrs} goals={goals.bytes} /> },
          { id: "counters", label: t.tabCounters, render: () => <CounterTable counters={view.counters} /> },
          { id: "packets", label: t.tabPackets, render: () => <Packets packets={view.packets} /> },
          { id: "plot", label: t.tabThroughput, render: () => <Plot points={view.sweep} /> },
          ...(network ? [{ id: "network", label: t.tabNetwork, render: network }] : []),
        ]}
      />
    </div>
  );
});
