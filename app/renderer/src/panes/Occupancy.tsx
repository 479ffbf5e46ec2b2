/** How full a QP's send and receive queues are: outstanding WRs against the depth it was created with. */
import type { QpView } from "../model/view.js";

function Bar({ label, used, depth }: { label: string; used: number; depth: number }) {
  const pct = depth > 0 ? Math.min(100, (100 * used) / depth) : 0;
  return (
    <div className="occupancy" style={{ display: "flex", gap: 6, alignItems: "center", fontSize: 11 }}>
      <span className="muted" style={{ width: 18 }}>
        {label}
      </span>
      <div className="bar" style={{ width: 90 }}>
        <div style={{ width: `${pct}%`, background: pct >= 100 ? "var(--bad)" : undefined }} />
      </div>
      <span className="mono">
        {used}/{depth}
      </span>
    </div>
  );
}

export function Occupancy({ qp }: { qp: QpView }) {
  const cap = qp.query?.attr.cap ?? qp.query?.init_attr.cap;
  return (
    <div style={{ display: "flex", gap: 12, marginTop: 2 }}>
      <Bar label="SQ" used={qp.sqOutstanding} depth={cap?.max_send_wr ?? 0} />
      <Bar label="RQ" used={qp.rqOutstanding} depth={cap?.max_recv_wr ?? 0} />
    </div>
  );
}
