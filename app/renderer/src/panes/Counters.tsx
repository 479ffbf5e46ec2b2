/** rxe's hardware counters with what the last run changed. */
import { useStrings } from "../i18n.js";
import type { CounterView } from "../model/view.js";

export function Counters({ counters }: { counters: CounterView[] }) {
  const t = useStrings();
  if (counters.length === 0) return <p className="empty">{t.countersEmpty}</p>;
  return (
    <table className="grid">
      <thead>
        <tr>
          <th>{t.colDevice}</th>
          <th>{t.colCounter}</th>
          <th>{t.colValue}</th>
          <th>Δ</th>
        </tr>
      </thead>
      <tbody>
        {counters.map((c) => (
          <tr key={`${c.device}/${c.name}`}>
            <td>{c.device}</td>
            <td className="field">{c.name}</td>
            <td className="value">{c.value}</td>
            <td className={`value${c.delta ? " changed" : ""}`}>{c.delta ? `+${c.delta}` : ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
