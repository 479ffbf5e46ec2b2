/**
 * The CM pane: every rdma_cm id with its log, the librdmacm calls made on it and the events
 * rdma_get_cm_event handed out about it, oldest first. A listening id holds, under it, the
 * child id each CONNECT_REQUEST carried (event->listen_id and event->id). Events keep their
 * <rdma/rdma_cma.h> names, statuses are named and explained, private data is shown as bytes
 * with its zero padding counted, and the QP moves librdmacm made inside a call or event are
 * said, so the learner sees what happened to the QP behind the program's back.
 */
import { memo } from "react";
import { useStrings } from "../i18n.js";
import { byteHex, hexRows } from "../model/hexdump.js";
import { hex, stateName } from "../model/format.js";
import type { CmIdView, CmLogRow, CmPrivateData } from "../model/view.js";

/** Bytes per hex row: 8 keeps a row inside the middle column at 1280 px. */
const BYTES_PER_ROW = 8;

export interface CmPaneProps {
  ids: CmIdView[];
}

export const CmPane = memo(function CmPane({ ids }: CmPaneProps) {
  const t = useStrings();
  if (ids.length === 0) return <p className="empty">{t.cmEmpty}</p>;
  return (
    <div className="cm-pane" data-testid="cm-pane">
      {ids.map((id) => (
        <CmIdCard key={id.handle} id={id} />
      ))}
    </div>
  );
});

function CmIdCard({ id }: { id: CmIdView }) {
  const t = useStrings();
  const role = id.parent ? "child" : id.listening ? "listener" : "active";
  return (
    <section className={`cm-id ${role}`} data-cm-id={id.name} data-role={role}>
      <div className="cm-id-head">
        <strong className="mono">{id.name}</strong>
        <span className="mono muted">{id.ps}</span>
        {id.channel && <span className="muted">{t.cmOn(id.channel)}</span>}
        {(id.local || id.remote) && (
          <span className="mono">
            {id.local ?? "?"}
            {id.remote && ` ⇄ ${id.remote}`}
          </span>
        )}
        {id.listening && <span className="badge">{t.cmListening}</span>}
        {id.destroyed && <span className="badge muted">{t.cmDestroyed}</span>}
      </div>
      {id.parent && <div className="muted cm-parent">{t.cmChildOf(id.parent.name, id.parent.seq)}</div>}
      <ol className="cm-log">
        {id.rows.map((r) => (
          <CmRow key={r.seq} row={r} />
        ))}
      </ol>
      {id.children.length > 0 && (
        <div className="cm-children">
          {id.children.map((c) => (
            <CmIdCard key={c.handle} id={c} />
          ))}
        </div>
      )}
    </section>
  );
}

function CmRow({ row }: { row: CmLogRow }) {
  const t = useStrings();
  const moves = row.moves.length > 0 && (
    <div className="cm-moves" data-testid="cm-moves">
      {chains(row.moves).map((m, i) => (
        <span key={i}>
          {m.qp}: {m.states.map(stateName).join(" → ")} <span className="cm-by">{t.cmByLibrdmacm}</span>
        </span>
      ))}
    </div>
  );
  if (row.kind === "call")
    return (
      <li className={`cm-row call${row.outcome === "ok" ? "" : " bad"}`} data-seq={row.seq}>
        <span className="muted cm-seq">#{row.seq}</span>
        <span className="mono">{row.verb}</span>
        {row.detail && <span className="mono muted">{row.detail}</span>}
        <span className={row.outcome === "ok" ? "ok" : "err"}>{row.outcome}</span>
        {(row.why || row.reason) && <div className="muted cm-detail">{row.why ? t.verbWhy(row.why) : row.reason}</div>}
        {moves}
      </li>
    );
  const meaning = row.statusName && t.cmStatusMeaning[row.statusName];
  return (
    <li className={`cm-row event${row.bad ? " bad" : ""}`} data-seq={row.seq} data-event={row.event}>
      <span className="muted cm-seq">#{row.seq}</span>
      <strong className="mono cm-event">{row.event}</strong>
      <span className="mono cm-status" data-status={row.status}>
        {t.cmStatus} {row.status}
        {row.statusName && ` ${row.statusName}`}
      </span>
      {meaning && <div className="cm-detail">{meaning}</div>}
      {row.child && <div className="cm-detail">{t.cmNewId(row.child)}</div>}
      {row.ud && (
        <div className="cm-detail mono">
          qp_num {hex(row.ud.qp_num)} qkey {hex(row.ud.qkey)}
        </div>
      )}
      {row.privateData && <PrivateData data={row.privateData} />}
      {moves}
      {!row.acked && <div className="cm-detail warn">{t.cmNotAcked}</div>}
    </li>
  );
}

/** The bytes the sender filled, as hex and text, then the padding as one count ("… 133 × 00"). */
function PrivateData({ data }: { data: CmPrivateData }) {
  const t = useStrings();
  return (
    <div className="cm-private" data-testid="cm-private-data" data-len={data.len}>
      <div className="muted">{t.cmPrivateData(data.len)}</div>
      <div className="hex">
        {hexRows(data.bytes, data.bytes.length, BYTES_PER_ROW).map((r) => (
          <div key={r.offset}>
            <span className="off">{r.offset.toString(16).padStart(4, "0")} </span>
            {r.bytes
              .map(byteHex)
              .join(" ")
              .padEnd(BYTES_PER_ROW * 3 - 1)}
            <span className="off"> {r.ascii}</span>
          </div>
        ))}
        {data.zeros > 0 && <div className="off">{t.cmZeros(data.zeros)}</div>}
      </div>
    </div>
  );
}

/** How many ids the pane shows, children included (the tab's count). */
export const cmIdCount = (ids: CmIdView[]): number => ids.reduce((n, id) => n + 1 + cmIdCount(id.children), 0);

/** Consecutive moves of one QP as one chain of states (INIT → RTR → RTS). */
function chains(moves: CmLogRow["moves"]): { qp: string; states: number[] }[] {
  const out: { qp: string; states: number[] }[] = [];
  for (const m of moves) {
    const last = out[out.length - 1];
    if (last?.qp === m.qp && last.states[last.states.length - 1] === m.from) last.states.push(m.to);
    else out.push({ qp: m.qp, states: [m.from, m.to] });
  }
  return out;
}
