/**
 * Under the QP diagram, on the main view: what just went wrong without a verb failing — a
 * QP's newest error completion and why, a connection whose two sides disagree — and the
 * beginner mistakes the session noticed. The tabs hold the details; this makes sure the
 * learner sees that there is something to look at.
 */
import { wcStatusName } from "../model/format.js";
import { connection, pairQps } from "../model/oob.js";
import { qpName } from "../model/names.js";
import type { LabView } from "../model/view.js";
import { whySource } from "../model/wc-explain.js";
import { useStrings } from "../i18n.js";

/** How many of the newest notices are shown. */
const NOTICES_SHOWN = 3;

export interface AlertsProps {
  qps: LabView["qps"];
  devices: LabView["devices"];
  mrs: LabView["mrs"];
  notices: LabView["notices"];
}

export function Alerts({ qps, devices, mrs, notices }: AlertsProps) {
  const t = useStrings();
  const failed = qps.filter((q) => q.failure).sort((a, b) => b.failure!.seq - a.failure!.seq);
  const mismatches = pairQps(qps).flatMap(([a, b]) =>
    connection(a, b, devices, mrs).mismatches.map((m) => ({ qp: (m.side === "a" ? a : b).qp_num, ...m })),
  );
  const shown = notices.slice(-NOTICES_SHOWN);
  if (!failed.length && !mismatches.length && !shown.length) return null;
  return (
    <div className="alerts">
      {failed.map((q) => {
        const f = q.failure!;
        return (
          <div key={q.handle} className="mismatch alert" data-testid="wc-failure" data-status={wcStatusName(f.status)}>
            ✗ {q.name}: {wcStatusName(f.status)} (wr_id {f.wr_id}
            {f.why?.posted ? `, ${f.why.posted.replace("IBV_WR_", "")}` : ""})
            {f.why ? (
              <>
                {" "}
                — {t.wcReason(f.why.reason)} <span className="why-source">({whySource(f.why, t)})</span>
              </>
            ) : (
              <span className="muted"> — {t.seeCompletions}</span>
            )}
          </div>
        );
      })}
      {mismatches.map((m, i) => (
        <div key={`m${i}`} className="mismatch alert" data-testid="connection-mismatch">
          ≠ {qps.find((q) => q.qp_num === m.qp)?.name ?? qpName(m.qp)}: {t.peerSays(m.field, m.actual, m.expected)}{" "}
          {t.connectionTab}
        </div>
      ))}
      {shown.map((n) => (
        <div key={`n${n.seq}-${n.id}`} className="alert notice" data-testid="session-notice" data-notice={n.id}>
          ⚠ {t.notice(n)}
        </div>
      ))}
    </div>
  );
}
