/** Completions polled from each CQ, coloured by status, each with what the status means and, when known, why. */
import { useStrings } from "../i18n.js";
import { errorOpcodeNote, explainStatus, statusTone, whySource } from "../model/wc-explain.js";
import { hex, wcOpcodeName, wcStatusName } from "../model/format.js";
import type { CqView } from "../model/view.js";
import { IBV_WC_WITH_IMM } from "../../../../verbs/constants.js";

export function CqEntries({ cqs }: { cqs: CqView[] }) {
  const t = useStrings();
  const any = cqs.some((c) => c.entries.length > 0);
  if (!any) return <p className="empty">{t.completionsEmpty}</p>;
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
                      {tone === "ok" ? (
                        wcOpcodeName(wc.opcode)
                      ) : (
                        <abbr title={errorOpcodeNote(wc, t)} data-testid="error-opcode">
                          {t.opcodeUnset(wc.opcode)}
                        </abbr>
                      )}{" "}
                      wr_id {wc.wr_id} byte_len {wc.byte_len} qp_num {wc.qp_num}
                      {wc.wc_flags & IBV_WC_WITH_IMM ? ` imm_data ${hex(wc.imm_data ?? 0)}` : ""}
                    </span>
                  </div>
                  {tone !== "ok" && <div className="muted">{explainStatus(wc.status, t)}</div>}
                  {wc.why && (
                    <div className="wc-why" data-testid="wc-why" data-source={wc.why.source}>
                      {t.why} {t.wcReason(wc.why.reason)} <span className="why-source">({whySource(wc.why, t)})</span>
                    </div>
                  )}
                </div>
              );
            })}
          </div>
        ))}
    </div>
  );
}
