/**
 * WQE → packets → CQE, top to bottom as they happened on the virtual clock, one lane per QP:
 * each WQE a program posts, every packet it puts on the wire (opcode, PSN, length; ACKs,
 * NAKs, RNR NAKs and drops with why), and the CQE the program polled. The simulator logs
 * packets; on the native backend only the WQEs and CQEs show.
 */
import { useEffect, useRef, type CSSProperties } from "react";
import type { TimelineRow, TimelineView } from "../model/view.js";
import { qpName } from "../model/names.js";
import { hex, rnrWait } from "../model/format.js";
import { useStrings } from "../i18n.js";

type Of<K extends TimelineRow["kind"]> = Extract<TimelineRow, { kind: K }>;

const LEGEND = ["wqe", "request", "response", "ack", "rnr", "nak", "dropped", "cqe", "cqe-bad"];

export function PacketTimeline({ packets: tl }: { packets: TimelineView }) {
  const t = useStrings();
  const WAIT: Record<Of<"wait">["why"], string> = {
    rnr: t.waitRnr,
    retransmit: t.waitRetransmit,
    program: t.waitProgram,
    wire: t.waitWire,
  };
  // A live log: new rows scroll into view (the tab's body is the scroller).
  const end = useRef<HTMLDivElement>(null);
  const last = tl.rows[tl.rows.length - 1]?.key;
  useEffect(() => {
    // Braces: Chromium's scrollIntoView returns a promise, and an effect may only return a cleanup.
    end.current?.scrollIntoView({ block: "nearest" });
  }, [last]);
  const native = tl.observable === false;
  const n = tl.lanes.length;
  const index = new Map(tl.lanes.map((l, i) => [l.key, i]));
  // Lanes spread across the track, the outer ones near the edges: arrows get room for their labels.
  const x = (lane: string) => {
    const i = index.get(lane) ?? 0;
    return n <= 1 ? 50 : 10 + (80 * i) / (n - 1);
  };
  /** A pill on a lane: it grows away from the nearer edge. */
  const pill = (lane: string): CSSProperties =>
    x(lane) <= 50 ? { left: `calc(${x(lane)}% - 6px)` } : { right: `calc(${100 - x(lane)}% - 6px)` };
  let lastTime: string | undefined;
  const time = (t: number) => {
    const s = t.toFixed(3);
    if (s === lastTime) return "";
    lastTime = s;
    return s;
  };

  const wqe = (r: Of<"wqe">) => (
    <div key={r.key} className={`pt-row pt-wqe${r.refused ? " pt-bad" : ""}`} data-kind="wqe">
      <span className="pt-t">{time(r.t)}</span>
      <div className="pt-cell">
        <span className={`pt-pill ${x(r.lane) <= 50 ? "pt-from-left" : "pt-from-right"}`} style={pill(r.lane)}>
          <b>{r.queue === "SQ" ? "post" : "post recv"}</b> {r.opcode} <span className="pt-dim">wr_id</span> {r.wr_id}
          <span className="pt-dim"> · {r.bytes} B</span>
          {r.signaled === false && <span className="pt-dim"> · unsignaled</span>}
          {r.refused && <b> · refused: {r.refused}</b>}
        </span>
      </div>
    </div>
  );

  const packet = (r: Of<"packet">) => {
    const a = x(r.from);
    const b = x(r.to);
    const lo = Math.min(a, b);
    const width = Math.max(Math.abs(b - a), 4);
    const dir = b >= a ? "pt-right" : "pt-left";
    const klass = r.dropped ? "dropped" : r.klass;
    const row = (
      <div key={r.key} className={`pt-row pt-packet pt-${klass}`} data-kind="packet" title={t.packetDetail(r.detail)}>
        <span className="pt-t">{time(r.t)}</span>
        <div className="pt-cell">
          <span className={`pt-arrow ${dir}`} style={{ left: `${lo}%`, width: `${r.dropped ? width / 2 : width}%` }} />
          <span className="pt-label" style={{ left: `${lo + width / 2}%` }}>
            <b>{t.packetLabel(r.label, r.detail)}</b> <span className="pt-dim">psn</span> {hex(r.psn)}
            {r.len > 0 && <span className="pt-dim"> · {r.len} B</span>}
          </span>
        </div>
      </div>
    );
    if (!r.dropped) return row;
    // Why it was dropped gets a line of its own that wraps: beside the packet's label it ran
    // off the pane ("UDP 4791 blocked (nftables input rule on veth1's host)").
    return [
      row,
      <div key={`${r.key}-why`} className="pt-row pt-drop-why" data-kind="drop-why">
        ✗ {t.droppedBecause((r.drop && t.dropReason(r.drop)) || r.dropped)}
      </div>,
    ];
  };

  const cqe = (r: Of<"cqe">) => (
    <div
      key={r.key}
      className={`pt-row pt-cqe${r.bad ? " pt-bad" : ""}`}
      data-kind="cqe"
      title={r.why && t.wcReason(r.why)}
    >
      <span className="pt-t">{time(r.t)}</span>
      <div className="pt-cell">
        <span className={`pt-pill ${x(r.lane) <= 50 ? "pt-from-left" : "pt-from-right"}`} style={pill(r.lane)}>
          <b>CQE</b> {r.opcode} <span className="pt-dim">wr_id</span> {r.wr_id} · <b>{r.status}</b>
          {!r.bad && r.bytes > 0 && <span className="pt-dim"> · {r.bytes} B</span>}
        </span>
      </div>
    </div>
  );

  return (
    <div className="pt">
      {native && (
        <p className="pt-note" data-testid="packets-native">
          {t.packetsNative}
        </p>
      )}
      {tl.rows.length === 0 ? (
        !native && <p className="empty">{t.packetsEmpty}</p>
      ) : (
        <>
          <div className="pt-head">
            <span className="pt-t">t (ms)</span>
            <div className="pt-cell">
              {tl.lanes.map((l) => (
                <span key={l.key} className="pt-lane-name" style={pill(l.key)}>
                  <b>{l.name ?? qpName(l.qp_num)}</b>
                  {/* A name that carries its device (QP numbers repeat across devices) says it once. */}
                  {l.device && !l.name?.includes(l.device) && <span className="pt-dim"> {l.device}</span>}
                </span>
              ))}
            </div>
          </div>
          {(tl.hiddenRows > 0 || tl.earlierPackets > 0) && (
            <div className="pt-more">
              {tl.hiddenRows > 0 ? `${tl.hiddenRows} earlier rows not shown` : "earlier rows not shown"}
              {tl.earlierPackets > 0 && ` (the ${tl.earlierPackets} oldest packets are no longer kept)`}
            </div>
          )}
          <div className="pt-body">
            <div className="pt-track" aria-hidden>
              {tl.lanes.map((l) => (
                <i key={l.key} style={{ left: `${x(l.key)}%` }} />
              ))}
            </div>
            {tl.rows.map((r) => {
              switch (r.kind) {
                case "wqe":
                  return wqe(r);
                case "packet":
                  return packet(r);
                case "cqe":
                  return cqe(r);
                case "gap":
                  return (
                    <div key={r.key} className="pt-row pt-gap" data-kind="gap">
                      {t.gap(r.count)}
                    </div>
                  );
                case "wait":
                  return (
                    <div key={r.key} className="pt-row pt-wait" data-kind="wait">
                      <span>
                        {t.clock(r.ms)} {WAIT[r.why]}
                        {r.rnrTimer !== undefined && (
                          <span className="pt-rnr-note" data-testid="rnr-note">
                            {" "}
                            ({t.rnrNote(r.rnrTimer, rnrWait(r.rnrTimer), r.sinceNakMs ?? r.ms)})
                          </span>
                        )}
                      </span>
                    </div>
                  );
              }
            })}
            <div ref={end} />
          </div>
        </>
      )}
      <div className="legend pt-legend">
        {LEGEND.map((k) => (
          <span key={k}>
            <i className={`pt-key pt-key-${k}`} />
            {t.legend[k]}
          </span>
        ))}
      </div>
    </div>
  );
}
