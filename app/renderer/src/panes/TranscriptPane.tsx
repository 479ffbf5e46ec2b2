/** Every verb the program called, with its outcome; export in four formats and its packets as a pcap, import a transcript to replay. */
import { useStrings } from "../i18n.js";
import { memo, useRef } from "react";
import type { TranscriptRow } from "../model/view.js";
import type { SourceSite } from "../../../session/transcript.js";
import { CHUNK_PX_GUESS, ROWS_PER_CHUNK as CHUNK, useChunkWindow } from "./TranscriptWindow.js";

export type ExportFormat = "md" | "html" | "json" | "c" | "pcap";

export interface TranscriptPaneProps {
  rows: TranscriptRow[];
  onExport?: (format: ExportFormat) => void;
  onImport?: (text: string) => void;
  /** A row with a line of main.ts was clicked: show that line. */
  onSource?: (source: SourceSite) => void;
}

export const TranscriptPane = memo(function TranscriptPane({
  rows,
  onExport,
  onImport,
  onSource,
}: TranscriptPaneProps) {
  const file = useRef<HTMLInputElement>(null);
  const t = useStrings();
  return (
    <div className="transcript">
      <div className="toolbar" style={{ padding: "0 0 6px", border: "none" }}>
        <span className="muted">{t.exportLabel}</span>
        {(["md", "html", "json", "c", "pcap"] as const).map((f) => (
          <button
            key={f}
            onClick={() => onExport?.(f)}
            disabled={!onExport || rows.length === 0}
            data-export={f}
            title={f === "pcap" ? t.exportPcapTitle : undefined}
          >
            {f === "md" ? "Markdown" : f === "c" ? t.exportC : f === "pcap" ? t.exportPcap : f.toUpperCase()}
          </button>
        ))}
        <span style={{ flex: 1 }} />
        <button onClick={() => file.current?.click()} disabled={!onImport} data-testid="transcript-import-button">
          {t.importReplay}
        </button>
        <input
          ref={file}
          type="file"
          accept=".json,.jsonl"
          hidden
          data-testid="transcript-import"
          onChange={async (e) => {
            const f = e.target.files?.[0];
            if (f && onImport) onImport(await f.text());
            e.target.value = "";
          }}
        />
      </div>
      {rows.length === 0 ? (
        <p className="empty">{t.transcriptEmpty}</p>
      ) : (
        <>
          <table className="grid transcript-head">
            <Columns />
            <thead>
              <tr>
                <th>#</th>
                <th>{t.colVerb}</th>
                <th>{t.colWhat}</th>
                <th>{t.colResult}</th>
              </tr>
            </thead>
          </table>
          <ChunkList rows={rows} onSource={onSource} />
        </>
      )}
    </div>
  );
});

/** An unpainted chunk's height until it has been drawn once (content-visibility then remembers it). */
const CHUNK_SIZE = { containIntrinsicSize: `auto ${CHUNK_PX_GUESS}px` };

const Columns = () => (
  <colgroup>
    <col className="c-seq" />
    <col className="c-verb" />
    <col />
    <col className="c-result" />
  </colgroup>
);

/**
 * The chunks on screen, with a spacer for those above and those below (TranscriptWindow.tsx):
 * the DOM holds a few hundred rows however long the transcript is.
 */
function ChunkList({ rows, onSource }: { rows: TranscriptRow[]; onSource?: (s: SourceSite) => void }) {
  const list = useRef<HTMLDivElement>(null);
  const chunks = Math.ceil(rows.length / CHUNK);
  const { first, end, chunkPx } = useChunkWindow(list, chunks);
  const above = first * chunkPx;
  // The last chunk may be short: the rows after the window, at the measured height per row.
  const below = Math.max(0, rows.length - end * CHUNK) * (chunkPx / CHUNK);
  return (
    <div ref={list} className="transcript-list" data-rows={rows.length}>
      {above > 0 && <div className="transcript-spacer" style={{ height: above }} />}
      {Array.from({ length: end - first }, (_, k) => {
        const i = first + k;
        return <Chunk key={i} rows={rows.slice(i * CHUNK, (i + 1) * CHUNK)} onSource={onSource} />;
      })}
      {below > 0 && <div className="transcript-spacer" style={{ height: below }} />}
    </div>
  );
}

/**
 * A long transcript is a stack of small tables (CHUNK rows each) with the same fixed columns,
 * each skipped by layout and paint while off screen (content-visibility): in one table, every
 * step's new row would re-lay-out and repaint all earlier rows (about half of the main thread's
 * time per step at 200 steps). Rows are cached per event, so a chunk whose first and last rows
 * are unchanged is unchanged.
 */
const Chunk = memo(
  function Chunk({ rows, onSource }: { rows: TranscriptRow[]; onSource?: (s: SourceSite) => void }) {
    return (
      <div className="transcript-chunk" style={CHUNK_SIZE}>
        <table className="grid">
          <Columns />
          <tbody>
            {rows.map((r) => (
              <Row key={r.seq} r={r} onSource={onSource} />
            ))}
          </tbody>
        </table>
      </div>
    );
  },
  (a, b) =>
    a.onSource === b.onSource &&
    a.rows.length === b.rows.length &&
    a.rows[0] === b.rows[0] &&
    a.rows.at(-1) === b.rows.at(-1),
);

/** One call; rows are cached per event, so only new ones render. A row with a line links to it. */
const Row = memo(function Row({ r, onSource }: { r: TranscriptRow; onSource?: (s: SourceSite) => void }) {
  const t = useStrings();
  const source = r.source;
  const link = source && onSource;
  return (
    <tr
      className={[r.divergence && "diverged", link && "linked"].filter(Boolean).join(" ") || undefined}
      title={r.divergence ? t.divergence(r.divergence) : source ? t.showLine(source.line) : undefined}
      data-line={source?.line}
      onClick={link ? () => onSource(source) : undefined}
    >
      <td className="muted">{r.seq}</td>
      <td className="field">{r.verb}</td>
      <td className="mono" title={r.on ? `${r.on}: ${r.detail}` : r.detail}>
        {r.on && <span className="on">{r.detail ? `${r.on}: ` : r.on}</span>}
        {r.detail}
      </td>
      <td className={r.outcome === "ok" ? "ok" : "err"} title={(r.why && t.verbWhy(r.why)) || r.reason}>
        {r.outcome}
        {r.attribute && <code> {r.attribute}</code>}
      </td>
    </tr>
  );
});
