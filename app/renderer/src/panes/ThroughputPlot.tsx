/**
 * Lesson 12's sweep: message size (log-scale x) against bandwidth, the ib_write_bw curve, where
 * the backend's clock measured it (real rxe), and against packets per message, which both
 * backends count exactly (on the simulator, the only part of the sweep that transfers).
 */
import type { SweepPoint } from "../model/view.js";
import { useStrings } from "../i18n.js";

const W = 540;
const H = 200;
const L = 48;
const B = 30;
const size = (b: number) => (b >= 1 << 20 ? `${b >> 20}M` : b >= 1024 ? `${b >> 10}K` : `${b}`);
const tick = (v: number) => (v >= 10 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(1));

/** One curve over the sweep's sizes. */
function Curve({
  xLabel,
  points,
  unit,
  label,
  testId,
}: {
  xLabel: string;
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
        {xLabel}
      </text>
      <text x={10} y={H / 2} transform={`rotate(-90 10 ${H / 2})`} textAnchor="middle">
        {unit}
      </text>
    </svg>
  );
}

export function ThroughputPlot({ points }: { points: SweepPoint[] }) {
  const t = useStrings();
  if (points.length === 0) return <p className="empty">{t.sweepEmpty}</p>;
  const bandwidth = points.flatMap((p) => (p.gbps === undefined ? [] : [{ bytes: p.bytes, v: p.gbps }]));
  const packets = points.flatMap((p) =>
    p.packetsPerMsg === undefined ? [] : [{ bytes: p.bytes, v: p.packetsPerMsg }],
  );
  return (
    <div className="throughput">
      <h4>{t.bandwidth}</h4>
      {bandwidth.length > 0 ? (
        <Curve xLabel={t.messageSize} points={bandwidth} unit="Gb/s" label={t.bandwidth} testId="plot-bandwidth" />
      ) : (
        <p className="muted" data-testid="plot-no-bandwidth">
          {t.noBandwidth}
        </p>
      )}
      {packets.length > 0 && (
        <>
          <h4>{t.packetsPerMsg}</h4>
          <Curve
            xLabel={t.messageSize}
            points={packets}
            unit={t.packetsUnit}
            label={t.packetsPerMsg}
            testId="plot-packets"
          />
          <p className="muted">{t.packetsPerMsgNote}</p>
        </>
      )}
    </div>
  );
}
