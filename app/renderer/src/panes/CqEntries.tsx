/** Completions polled from each CQ, coloured by status, each with what the status means. */
import { explainStatus, statusTone } from "../model/wc-explain.js";
import { wcOpcodeName, wcStatusName } from "../model/format.js";
import type { CqView } from "../model/view.js";

export function CqEntries({ cqs }: { cqs: CqView[] }) {
  const any = cqs.some((c) => c.entries.length > 0);
  if (!any) return <p className="empty">No completions polled yet: cq.poll() or cq.pollWait().</p>;
  return (
    <div>
      {cqs
        .filter((c) => c.entries.length > 0)
        .map((c) => (
          <div key={c.handle}>
            <div className="muted" style={{ margin: "4px 0" }}>
              {c.name} (cqe {c.cqe})
            </div>
            {c.entries.slice(-20).map((wc, i) => {
              const tone = statusTone(wc.status);
              return (
                <div key={i} className={`wc ${tone}`} data-status={wcStatusName(wc.status)}>
                  <div>
                    <span className="status">{wcStatusName(wc.status)}</span>{" "}
                    <span className="mono">
                      {wcOpcodeName(wc.opcode)} wr_id {wc.wr_id} byte_len {wc.byte_len} qp_num {wc.qp_num}
                      {wc.wc_flags & 2 ? ` imm_data ${wc.imm_data}` : ""}
                    </span>
                  </div>
                  {tone !== "ok" && <div className="muted">{explainStatus(wc.status)}</div>}
                </div>
              );
            })}
          </div>
        ))}
    </div>
  );
}
