/** Message size against bandwidth (log-scale x), the ib_write_bw sweep as a learner would rather see it. */
import type { SweepPoint } from "../model/view.js";

export function ThroughputPlot({ points }: { points: SweepPoint[] }) {
  if (points.length === 0)
    return <p className="empty">Run the throughput lesson's sweep (verbs.log("sweep", …)) to plot it here.</p>;
  const W = 540;
  const H = 220;
  const L = 48;
  const B = 30;
  const lx = points.map((p) => Math.log2(p.bytes));
  const x0 = Math.min(...lx);
  const x1 = Math.max(...lx, x0 + 1);
  const yMax = Math.max(...points.map((p) => p.gbps)) * 1.1 || 1;
  const x = (b: number) => L + ((Math.log2(b) - x0) / (x1 - x0)) * (W - L - 12);
  const y = (g: number) => H - B - (g / yMax) * (H - B - 10);
  const d = points.map((p, i) => `${i ? "L" : "M"}${x(p.bytes).toFixed(1)},${y(p.gbps).toFixed(1)}`).join(" ");
  const size = (b: number) => (b >= 1 << 20 ? `${b >> 20}M` : b >= 1024 ? `${b >> 10}K` : `${b}`);
  return (
    <svg className="timeline plot" viewBox={`0 0 ${W} ${H}`} width="100%" role="img" aria-label="throughput sweep">
      <line x1={L} x2={W - 8} y1={H - B} y2={H - B} stroke="#9aa4b5" />
      <line x1={L} x2={L} y1={8} y2={H - B} stroke="#9aa4b5" />
      {[0, 0.5, 1].map((f) => (
        <g key={f}>
          <line x1={L} x2={W - 8} y1={y(yMax * f)} y2={y(yMax * f)} stroke="#eef0f4" />
          <text x={L - 4} y={y(yMax * f) + 3} textAnchor="end">
            {(yMax * f).toFixed(1)}
          </text>
        </g>
      ))}
      <path d={d} fill="none" stroke="#2f6fde" strokeWidth={2} />
      {points.map((p) => (
        <g key={p.bytes}>
          <circle cx={x(p.bytes)} cy={y(p.gbps)} r={3} fill="#2f6fde">
            <title>
              {p.bytes} B: {p.gbps.toFixed(2)} Gb/s
            </title>
          </circle>
          <text x={x(p.bytes)} y={H - B + 14} textAnchor="middle">
            {size(p.bytes)}
          </text>
        </g>
      ))}
      <text x={W / 2} y={H - 2} textAnchor="middle">
        message size (bytes)
      </text>
      <text x={10} y={H / 2} transform={`rotate(-90 10 ${H / 2})`} textAnchor="middle">
        Gb/s
      </text>
    </svg>
  );
}
