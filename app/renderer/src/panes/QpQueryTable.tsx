/** `ibv_query_qp` side by side for up to two QPs, fields a verb just changed highlighted with the old value. */
import { useStrings } from "../i18n.js";
import { flatten } from "../model/diff.js";
import { formatField, stateName } from "../model/format.js";
import type { QpView } from "../model/view.js";

/** The fields a learner reads first; the rest follow in query order. */
const FIRST = [
  "attr.qp_state",
  "attr.path_mtu",
  "attr.dest_qp_num",
  "attr.rq_psn",
  "attr.sq_psn",
  "attr.qp_access_flags",
  "attr.port_num",
  "attr.pkey_index",
  "attr.qkey",
  "attr.ah_attr.is_global",
  "attr.ah_attr.grh.dgid",
  "attr.ah_attr.grh.sgid_index",
  "attr.ah_attr.grh.hop_limit",
  "attr.max_rd_atomic",
  "attr.max_dest_rd_atomic",
  "attr.min_rnr_timer",
  "attr.timeout",
  "attr.retry_cnt",
  "attr.rnr_retry",
  "attr.cap.max_send_wr",
  "attr.cap.max_recv_wr",
  "attr.cap.max_send_sge",
  "attr.cap.max_recv_sge",
  "attr.cap.max_inline_data",
];

export interface QpQueryTableProps {
  qps: QpView[];
  /** Show every field, not just the ones a learner usually needs. */
  all?: boolean;
}

export function QpQueryTable({ qps, all }: QpQueryTableProps) {
  const t = useStrings();
  if (qps.length === 0) return <p className="empty">{t.noQp}</p>;
  const flats = qps.map((q) => (q.query ? flatten(q.query) : {}));
  const prevs = qps.map((q) => (q.previous ? flatten(q.previous) : {}));
  const rest = all ? Object.keys(flats[0]).filter((k) => !FIRST.includes(k)) : [];
  const fields = [...FIRST, ...rest];
  return (
    <table className="grid query-table">
      <thead>
        <tr>
          <th>ibv_qp_attr</th>
          {qps.map((q) => (
            <th key={q.handle}>
              {q.name} <span className={`state-pill state-${stateName(q.state)}`}>{stateName(q.state)}</span>
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {fields.map((path) => (
          <tr key={path}>
            <td className="field">{path.replace(/^attr\./, "")}</td>
            {qps.map((q, i) => {
              const changed = q.changed.includes(path);
              return (
                <td key={q.handle} className={`value${changed ? " changed" : ""}`} data-field={path}>
                  {changed && <span className="was">{formatField(path, prevs[i][path])}</span>}
                  {formatField(path, flats[i][path])}
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
