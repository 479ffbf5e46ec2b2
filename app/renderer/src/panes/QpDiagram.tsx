/** The QP state diagram: states and legal transitions from the table, each QP as a chip on its state. */
import { EDGES, NODES, NODE_H, NODE_W } from "../model/qp-graph.js";
import { stateName, wcStatusName } from "../model/format.js";
import type { CmQpMove, QpView } from "../model/view.js";
import { useStrings } from "../i18n.js";
import type { StateGoal } from "../model/goal-targets.js";

export interface QpDiagramProps {
  qps: QpView[];
  /** The QP whose transition, prediction and legal next moves are emphasised. */
  focus?: string;
  /** The states the current step's goals ask for (model/goal-targets.ts): outlined as the goal. */
  goals?: readonly StateGoal[];
}

/** The chip's text: the QP's one name (model/names.ts), as every pane shows it. */
const label = (qp: QpView) => qp.name;
/** A chip's width for its text (SVG text is not measured before layout). */
const chipWidth = (qp: QpView) => Math.max(36, 6.2 * label(qp).length + 8);
/** The diagram's viewBox width: the RTS node and its chips end inside it. */
const VIEW_W = 510;
/** A chip starts under its state's left edge, moved left as far as it must to stay inside the diagram. */
const chipX = (nodeX: number, qp: QpView) => Math.min(nodeX - NODE_W / 2, VIEW_W - 2 - chipWidth(qp));

/** The tooltip of an edge librdmacm took: who made the move, in which call or event. */
function CmTitle({ move }: { move: CmQpMove }) {
  const t = useStrings();
  // One string child: React renders a <title> with several children empty.
  return <title>{t.cmEdgeTitle(move.by, move.during, move.seq)}</title>;
}

/** The tooltip of a failed QP's chip: the status and why, in the learner's language. */
function FailureTitle({ failure }: { failure: NonNullable<QpView["failure"]> }) {
  const t = useStrings();
  // One string child: React renders a <title> with several children empty.
  return <title>{`${wcStatusName(failure.status)}${failure.why ? `: ${t.wcReason(failure.why.reason)}` : ""}`}</title>;
}

/** The goal's outline around a state, and its words: which QP should end there, and whether it did. */
function GoalMark({
  x,
  y,
  goals,
  qps,
  label,
}: {
  x: number;
  y: number;
  goals: StateGoal[];
  qps: QpView[];
  label: boolean;
}) {
  const t = useStrings();
  const passed = goals.every((g) => g.passed === true);
  const failed = goals.some((g) => g.passed === false);
  // The QP a goal counts by creation order, as the view lists them; not created yet: its number.
  const title = goals
    .map((g) => t.goalState(qps[g.qp]?.name ?? `QP #${g.qp}`, stateName(g.state), g.passed))
    .join("\n");
  return (
    <g className={`goal${passed ? " passed" : failed ? " failed" : ""}`} data-goal={stateName(goals[0]!.state)}>
      <title>{title}</title>
      <rect x={x - NODE_W / 2 - 4} y={y - NODE_H / 2 - 4} width={NODE_W + 8} height={NODE_H + 8} rx={10} />
      {label && (
        <text x={x} y={y - NODE_H / 2 - 7} textAnchor="middle">
          {t.goalMark}
          {passed ? " ✓" : failed ? " ✗" : ""}
        </text>
      )}
    </g>
  );
}

export function QpDiagram({ qps, focus, goals = [] }: QpDiagramProps) {
  const f = qps.find((q) => q.handle === focus) ?? qps[qps.length - 1];
  // The edges librdmacm moved the focused QP along (the newest move on each), drawn apart from
  // the program's own: a learner compares the path rdma_cm took with lesson 5's by hand.
  const byCm = new Map<string, CmQpMove>();
  for (const m of f?.cmMoves ?? []) byCm.set(`${m.from}-${m.to}`, m);
  const taken = f?.lastTransition;
  const predictedTo = f?.pending?.outcome === "ok" ? f.pending.state : undefined;
  const divergedAt = f?.divergence ? f.state : undefined;
  const failed = f?.failedTransition;
  const failedEdge = failed && EDGES.find((e) => e.from === failed.from && e.to === failed.to);
  // The taken edge's key changes with the newest transition any QP took along it, not with the
  // focused QP's: the march replays for a transition just taken, not every time the focus moves
  // between two QPs that took the same edge (stepping a connected pair flips it each verb, which
  // kept the animation, and a repaint of the window every frame, running for the whole session).
  const newestOn = (from: number, to: number) =>
    Math.max(
      0,
      ...qps.map((q) => (q.lastTransition?.from === from && q.lastTransition.to === to ? q.lastTransition.seq : 0)),
    );
  return (
    <svg className="qp-diagram" viewBox={`0 0 ${VIEW_W} 200`} role="img" aria-label="QP state diagram">
      <defs>
        <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto">
          <path d="M0,0 L10,5 L0,10 z" fill="#9aa4b5" />
        </marker>
        <marker id="arrow-taken" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto">
          <path d="M0,0 L10,5 L0,10 z" fill="#15803d" />
        </marker>
        <marker id="arrow-cm" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto">
          <path d="M0,0 L10,5 L0,10 z" fill="#0f766e" />
        </marker>
      </defs>
      {EDGES.map((e) => {
        const isTaken = taken && taken.from === e.from && taken.to === e.to && !failed;
        const isFailed = failed && failed.from === e.from && failed.to === e.to;
        const isPredicted = f && predictedTo !== undefined && e.from === f.state && e.to === predictedTo;
        const available = f && e.from === f.state;
        const cm = byCm.get(`${e.from}-${e.to}`);
        if (!e.primary && !available && !isTaken && !cm) return null;
        const cls = [
          "edge",
          e.primary && "primary",
          available && "available",
          isPredicted && "predicted",
          isTaken && "taken",
          cm && "cm",
        ]
          .filter(Boolean)
          .join(" ");
        const edge = `${stateName(e.from)}-${stateName(e.to)}`;
        const path = (
          <path
            key={`${e.from}-${e.to}-${isTaken ? newestOn(e.from, e.to) : 0}`}
            className={cls}
            d={e.path}
            markerEnd={cm ? "url(#arrow-cm)" : isTaken ? "url(#arrow-taken)" : "url(#arrow)"}
            data-edge={edge}
          >
            {cm && <CmTitle move={cm} />}
          </path>
        );
        if (!cm) return path;
        return [
          path,
          <text
            key={`cm-${edge}`}
            className="cm-label"
            x={e.mid.x}
            y={e.mid.y - 10}
            textAnchor="middle"
            data-cm-edge={edge}
          >
            <CmTitle move={cm} />
            librdmacm
          </text>,
        ];
      })}
      {NODES.map((n) => {
        const name = stateName(n.state);
        const cls = [
          "node",
          `state-${name}`,
          f?.state === n.state && "current",
          predictedTo === n.state && predictedTo !== f?.state && "predicted",
          divergedAt === n.state && "diverged",
        ]
          .filter(Boolean)
          .join(" ");
        const here = qps.filter((q) => q.state === n.state);
        const goalsHere = goals.filter((g) => g.state === n.state);
        const ghost = f !== undefined && predictedTo === n.state && predictedTo !== f.state;
        return (
          <g key={n.state} className={cls} data-state={name}>
            {goalsHere.length > 0 && <GoalMark x={n.x} y={n.y} goals={goalsHere} qps={qps} label={!ghost} />}
            <rect x={n.x - NODE_W / 2} y={n.y - NODE_H / 2} width={NODE_W} height={NODE_H} rx={7} />
            <text x={n.x} y={n.y + 4} textAnchor="middle">
              {name}
            </text>
            {/* One chip a row under the state: names are as long as the learner's variables. */}
            {here.map((q, i) => (
              <g
                key={q.handle}
                className={q.failure ? "chip failed" : "chip"}
                transform={`translate(${chipX(n.x, q)}, ${n.y + NODE_H / 2 + 3 + i * 15})`}
                {...(q.failure && { "data-failed": wcStatusName(q.failure.status) })}
              >
                {q.failure && <FailureTitle failure={q.failure} />}
                <rect width={chipWidth(q)} height={13} rx={3} />
                <text x={chipWidth(q) / 2} y={10} textAnchor="middle">
                  {label(q)}
                </text>
              </g>
            ))}
            {f && predictedTo === n.state && predictedTo !== f.state && (
              <g className="chip ghost" transform={`translate(${n.x - NODE_W / 2}, ${n.y - NODE_H / 2 - 16})`}>
                <rect width={NODE_W} height={13} rx={3} />
                <text x={NODE_W / 2} y={10} textAnchor="middle">
                  predicted
                </text>
              </g>
            )}
          </g>
        );
      })}
      {failed && (
        <text
          x={failedEdge ? failedEdge.mid.x : 255}
          y={failedEdge ? failedEdge.mid.y - 26 : 185}
          textAnchor="middle"
          className="failed-label"
          data-testid="failed-transition"
        >
          ✗ {failed.code}
          {failed.attribute ? `: ${failed.attribute.replace("IBV_QP_", "")}` : ""}
        </text>
      )}
    </svg>
  );
}

/**
 * The error the model predicts for `qp`'s pending modify, and why, in the learner's language: a
 * line under the diagram (HTML, so that a long list of attributes wraps), or nothing.
 */
export function PredictedError({ qp }: { qp: QpView | undefined }) {
  const t = useStrings();
  if (!qp?.pending || qp.pending.outcome === "ok") return null;
  return (
    <div className="predicted-error" data-testid="predicted-error">
      {t.predictedError(qp.pending.outcome, (qp.pendingWhy && t.verbWhy(qp.pendingWhy)) || qp.pending.reason)}
    </div>
  );
}
