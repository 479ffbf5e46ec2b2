/** The right-hand column: the QP diagram, the live query table, and the other views in tabs. */
import { memo, useMemo } from "react";
import type { LabView } from "../model/view.js";
import { QpDiagram } from "./QpDiagram.js";
import { QpQueryTable } from "./QpQueryTable.js";
import { ConnectionPane } from "./ConnectionPane.js";
import { ResourcesTree } from "./ResourcesTree.js";
import { CqEntries } from "./CqEntries.js";
import { MrHex } from "./MrHex.js";
import { Counters } from "./Counters.js";
import { PacketTimeline } from "./PacketTimeline.js";
import { ThroughputPlot } from "./ThroughputPlot.js";
import { Tabs } from "./Tabs.js";

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

export const Inspector = memo(function Inspector({ view, focus }: { view: LabView; focus?: string }) {
  const f = view.qps.find((q) => q.handle === focus);
  const pair = useMemo(() => view.qps.slice(-2), [view.qps]);
  const wcs = view.cqs.reduce((n, c) => n + c.entries.length, 0);
  return (
    <div className="column">
      <section className="panel" aria-label="QP state diagram">
        <h2>
          QP state machine
          {f?.divergence && <span className="badge bad">diverged</span>}
          {f?.pending && (
            <span className={`badge ${f.pending.outcome !== "ok" ? "bad" : ""}`} data-testid="prediction">
              {f.pending.outcome !== "ok" ? `predicts ${f.pending.outcome}` : "prediction shown"}
            </span>
          )}
        </h2>
        <div className="panel-body" style={{ paddingBottom: 4 }}>
          <Diagram qps={view.qps} focus={focus} />
          {f?.divergence && (
            <div className="mismatch" style={{ padding: "2px 6px", borderRadius: 4 }}>
              {f.divergence}
            </div>
          )}
          <div className="legend">
            <span>
              <i style={{ borderColor: "#15803d", borderTopStyle: "dashed" }} />
              transition just taken
            </span>
            <span>
              <i style={{ borderColor: "#2f6fde", borderTopStyle: "dotted" }} />
              predicted next
            </span>
            <span>
              <i style={{ borderColor: "#2f6fde" }} />
              legal from here
            </span>
          </div>
        </div>
      </section>
      <section className="panel" aria-label="ibv_query_qp" style={{ flex: 3 }}>
        <h2>ibv_query_qp {pair.length === 2 && <span className="muted">both ends side by side</span>}</h2>
        <div className="panel-body">
          <QueryTable qps={pair} />
        </div>
      </section>
      <Tabs
        className="inspector-tabs"
        tabs={[
          {
            id: "connection",
            label: "Connection",
            render: () => <Connection qps={view.qps} devices={view.devices} mrs={view.mrs} />,
          },
          {
            id: "resources",
            label: "Resources",
            render: () => (
              <Resources devices={view.devices} pds={view.pds} mrs={view.mrs} cqs={view.cqs} qps={view.qps} />
            ),
          },
          { id: "cq", label: `Completions${wcs ? ` (${wcs})` : ""}`, render: () => <Completions cqs={view.cqs} /> },
          { id: "mr", label: "Memory", render: () => <Memory mrs={view.mrs} /> },
          { id: "counters", label: "Counters", render: () => <CounterTable counters={view.counters} /> },
          { id: "packets", label: "Packets", render: () => <Packets packets={view.packets} /> },
          { id: "plot", label: "Throughput", render: () => <Plot points={view.sweep} /> },
        ]}
      />
    </div>
  );
});
