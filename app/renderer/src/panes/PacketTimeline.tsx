/** WQE → packets → ACK → CQE on a time axis, one lane per QP (the simulator reports these). */
import type { PacketMark } from "../model/view.js";

const COLORS: Record<PacketMark["kind"], string> = {
  wqe: "#2f6fde",
  packet: "#7c4dde",
  ack: "#15803d",
  nak: "#c92a2a",
  cqe: "#c07a00",
};

export function PacketTimeline({ packets }: { packets: PacketMark[] }) {
  if (packets.length === 0)
    return <p className="empty">The packet timeline fills in when work requests run on the simulator.</p>;
  const marks = packets.slice(-80);
  const lanes = [...new Set(marks.map((m) => m.qp_num))];
  const t0 = marks[0].t;
  const t1 = Math.max(marks[marks.length - 1].t, t0 + 0.001);
  const W = 540;
  const laneH = 46;
  const x = (t: number) => 70 + ((t - t0) / (t1 - t0)) * (W - 90);
  return (
    <div>
      <svg className="timeline" viewBox={`0 0 ${W} ${lanes.length * laneH + 24}`} width="100%">
        {lanes.map((q, i) => (
          <g key={q}>
            <line x1={70} x2={W - 10} y1={i * laneH + 24} y2={i * laneH + 24} stroke="#dfe3ea" />
            <text x={4} y={i * laneH + 28}>
              QP {q}
            </text>
          </g>
        ))}
        {marks.map((m, j) => {
          const y = lanes.indexOf(m.qp_num) * laneH + 24;
          return (
            <g key={j}>
              <circle cx={x(m.t)} cy={y} r={m.kind === "packet" ? 3.5 : 5} fill={COLORS[m.kind]}>
                <title>
                  {m.kind} {m.label} {m.psn !== undefined ? `psn ${m.psn}` : ""} @ {m.t.toFixed(3)} ms
                </title>
              </circle>
              {(m.kind === "wqe" || m.kind === "cqe" || m.bad) && (
                <text
                  x={x(m.t)}
                  y={y - 9 - (j % 2) * 9}
                  textAnchor="middle"
                  style={m.bad ? { fill: "#c92a2a" } : undefined}
                >
                  {m.label}
                </text>
              )}
            </g>
          );
        })}
        <text x={70} y={lanes.length * laneH + 20}>
          {t0.toFixed(3)} ms
        </text>
        <text x={W - 10} y={lanes.length * laneH + 20} textAnchor="end">
          {t1.toFixed(3)} ms
        </text>
      </svg>
      <div className="legend">
        {Object.entries(COLORS).map(([k, c]) => (
          <span key={k}>
            <i style={{ borderColor: c }} />
            {k}
          </span>
        ))}
      </div>
    </div>
  );
}
