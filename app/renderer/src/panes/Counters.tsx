/** rxe's hardware counters with what the last run changed. */
import type { CounterView } from "../model/view.js";

export function Counters({ counters }: { counters: CounterView[] }) {
  if (counters.length === 0) return <p className="empty">Counters appear after the first run.</p>;
  return (
    <table className="grid">
      <thead>
        <tr>
          <th>device</th>
          <th>counter</th>
          <th>value</th>
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
