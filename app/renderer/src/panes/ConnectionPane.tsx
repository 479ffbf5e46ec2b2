/** Both ends of each connection with the out-of-band tuple they must exchange, mismatches flagged. */
import { useStrings } from "../i18n.js";
import { connection, pairQps, type OobSide } from "../model/oob.js";
import { formatField, hex, psn, wcStatusName } from "../model/format.js";
import { whySource } from "../model/wc-explain.js";
import type { DeviceView, MrView, QpView } from "../model/view.js";

export interface ConnectionPaneProps {
  qps: QpView[];
  devices: DeviceView[];
  mrs: MrView[];
}

const ROWS: { key: keyof OobSide; label: string; show: (v: unknown) => string }[] = [
  { key: "qp_num", label: "QPN", show: (v) => (v === undefined ? "—" : `${v} (${hex(v as number)})`) },
  { key: "sq_psn", label: "SQ PSN", show: (v) => (v === undefined ? "—" : psn(v as number)) },
  { key: "rq_psn", label: "RQ PSN", show: (v) => (v === undefined ? "—" : psn(v as number)) },
  { key: "gid", label: "GID", show: (v) => (v as string) ?? "—" },
  { key: "sgid_index", label: "GID index", show: (v) => (v === undefined ? "—" : String(v)) },
  { key: "dest_qp_num", label: "dest_qp_num", show: (v) => (v === undefined ? "—" : String(v)) },
  { key: "dgid", label: "dgid", show: (v) => (v as string) || "—" },
  { key: "path_mtu", label: "path_mtu", show: (v) => formatField("path_mtu", v) },
  { key: "rkey", label: "rkey", show: (v) => (v === undefined ? "—" : hex(v as number)) },
  { key: "addr", label: "addr", show: (v) => (v === undefined ? "—" : hex(v as number)) },
];

const FIELD_OF: Record<string, keyof OobSide> = {
  dest_qp_num: "dest_qp_num",
  rq_psn: "rq_psn",
  "ah_attr.grh.dgid": "dgid",
  path_mtu: "path_mtu",
};

export function ConnectionPane({ qps, devices, mrs }: ConnectionPaneProps) {
  const t = useStrings();
  const pairs = pairQps(qps);
  if (pairs.length === 0) return <p className="empty">{t.connectionEmpty}</p>;
  return (
    <div>
      {pairs.map(([a, b]) => {
        const c = connection(a, b, devices, mrs);
        const bad = (side: "a" | "b", key: keyof OobSide) =>
          c.mismatches.find((m) => m.side === side && FIELD_OF[m.field] === key);
        return (
          <div key={`${a.handle}-${b.handle}`} className="connection">
            <table className="grid">
              <thead>
                <tr>
                  <th>{t.outOfBand}</th>
                  <th>
                    {a.device} {a.name}
                  </th>
                  <th>
                    {b.device} {b.name}
                  </th>
                </tr>
              </thead>
              <tbody>
                {ROWS.map((r) => (
                  <tr key={r.key}>
                    <td className="field">{r.label}</td>
                    {(["a", "b"] as const).map((s) => {
                      const m = bad(s, r.key);
                      return (
                        <td
                          key={s}
                          className={`value${m ? " mismatch" : ""}`}
                          data-field={r.key}
                          title={m ? t.expected(m.expected) : undefined}
                        >
                          {r.show(c[s][r.key])}
                          {m && <span> ≠ {m.expected}</span>}
                        </td>
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
            {[a, b]
              .filter((q) => q.failure)
              .map((q) => (
                <p key={q.handle} className="mismatch" data-testid="connection-failure">
                  {q.name}: {t.wrFailedWith(wcStatusName(q.failure!.status))}
                  {q.failure!.why ? (
                    <>
                      : {t.wcReason(q.failure!.why.reason)}{" "}
                      <span className="why-source">({whySource(q.failure!.why, t)})</span>
                    </>
                  ) : (
                    `: ${t.notInTable}`
                  )}
                </p>
              ))}
            {c.mismatches.length === 0 ? (
              !a.failure && !b.failure && <p className="muted">{t.sidesAgree}</p>
            ) : (
              <ul className="mismatches">
                {c.mismatches.map((m, i) => (
                  <li key={i}>
                    <span className="mismatch">
                      {(m.side === "a" ? a : b).name}: {t.peerSays(m.field, m.actual, m.expected)}
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </div>
        );
      })}
    </div>
  );
}
