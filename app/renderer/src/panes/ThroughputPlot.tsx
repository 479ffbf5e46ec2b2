/**
 * Lesson 12's sweep: message size (log-scale x) against bandwidth, the ib_write_bw curve, where
 * the backend's clock measured it (real rxe), and against packets per message, which both
 * backends count exactly (on the simulator, the only part of the sweep that transfers).
 */
import type { SweepPoint } from "../model/view.js";

const W = 540;
const H = 200;
const L = 48;
const B = 30;
const size = (b: number) => (b >= 1 << 20 ? `${b >> 20}M` : b >= 1024 ? `${b >> 10}K` : `${b}`);
const tick = (v: number) => (v >= 10 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(1));

/** One curve over the sweep's sizes. */
function Curve({
  points,
  unit,
  label,
  testId,
}: {
  points: { bytes: number; v: number }[];
  unit: string;
  label: string;
  testId: string;
}) {
  const lx = points.map((p) => Math.log2(p.bytes));
  const x0 = Math.min(...lx);
  const x1 = Math.max(...lx, x0 + 1);
  const yMax = Math.max(...points.map((p) => p.v)) * 1.1 || 1;
  const x = (b: number) => L + ((Math.log2(b) - x0) / (x1 - x0)) * (W - L - 12);
  const y = (g: number) => H - B - (g / yMax) * (H - B - 10);
  const d = points.map((p, i) => `${i ? "L" : "M"}${x(p.bytes).toFixed(1)},${y(p.v).toFixed(1)}`).join(" ");
  return (
    <svg
      className="timeline plot"
      viewBox={`0 0 ${W} ${H}`}
      width="100%"
      role="img"
      aria-label={label}
      data-testid={testId}
    >
      <line x1={L} x2={W - 8} y1={H - B} y2={H - B} stroke="#9aa4b5" />
      <line x1={L} x2={L} y1={8} y2={H - B} stroke="#9aa4b5" />
      {[0, 0.5, 1].map((f) => (
        <g key={f}>
          <line x1={L} x2={W - 8} y1={y(yMax * f)} y2={y(yMax * f)} stroke="#eef0f4" />
          <text x={L - 4} y={y(yMax * f) + 3} textAnchor="end">
            {tick(yMax * f)}
          </text>
        </g>
      ))}
      <path d={d} fill="none" stroke="#2f6fde" strokeWidth={2} />
      {points.map((p) => (
        <g key={p.bytes} className="point" data-bytes={p.bytes} data-value={p.v}>
          <circle cx={x(p.bytes)} cy={y(p.v)} r={3} fill="#2f6fde">
            <title>
              {p.bytes} B: {tick(p.v)} {unit}
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
        {unit}
      </text>
    </svg>
  );
}

export function ThroughputPlot({ points }: { points: SweepPoint[] }) {
  if (points.length === 0)
    return (
      <p className="empty">Run the throughput lesson&apos;s sweep (verbs.log(&quot;sweep&quot;, …)) to plot it here.</p>
    );
  const bandwidth = points.flatMap((p) => (p.gbps === undefined ? [] : [{ bytes: p.bytes, v: p.gbps }]));
  const packets = points.flatMap((p) =>
    p.packetsPerMsg === undefined ? [] : [{ bytes: p.bytes, v: p.packetsPerMsg }],
  );
  return (
    <div className="throughput">
      <h4>Bandwidth</h4>
      {bandwidth.length > 0 ? (
        <Curve points={bandwidth} unit="Gb/s" label="bandwidth by message size" testId="plot-bandwidth" />
      ) : (
        <p className="muted" data-testid="plot-no-bandwidth">
          Not measured: on the simulator time passes only while a program waits, and the sweep&apos;s WRITEs take none
          of it, so the program logs MB/s as null. Run it on real rxe for the curve.
        </p>
      )}
      {packets.length > 0 && (
        <>
          <h4>Packets per message</h4>
          <Curve points={packets} unit="packets" label="packets per message by size" testId="plot-packets" />
          <p className="muted">
            rxe&apos;s sent_pkts per message: ⌈bytes / path MTU⌉ request packets, plus the responder&apos;s ACK (both
            QPs are on rxe0). Exact on both backends.
          </p>
        </>
      )}
    </div>
  );
}
