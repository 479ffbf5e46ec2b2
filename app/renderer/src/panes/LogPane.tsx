/** What the program logged with verbs.log, oldest first; a line with its place in main.ts links to it. */
import { memo } from "react";
import type { LogLine } from "../model/view.js";
import type { SourceSite } from "../../../session/transcript.js";
import { formatLogLine } from "../model/format.js";
import { useStrings } from "../i18n.js";

export interface LogPaneProps {
  lines: LogLine[];
  /** A line with a place in main.ts was clicked: show that line. */
  onSource?: (source: SourceSite) => void;
}

export const LogPane = memo(function LogPane({ lines, onSource }: LogPaneProps) {
  const t = useStrings();
  if (lines.length === 0) return <p className="empty">{t.logEmpty}</p>;
  return (
    <pre className="mono log" style={{ margin: 0, whiteSpace: "pre-wrap" }}>
      {lines.map((l, i) => {
        const s = l.source;
        return (
          <div
            key={i}
            className={s && onSource ? "log-line linked" : "log-line"}
            data-line={s?.line}
            title={s ? t.showLine(s.line) : undefined}
            onClick={s && onSource ? () => onSource(s) : undefined}
          >
            {(l.ended && t.endedLine(l.ended)) || formatLogLine(l.text)}
          </div>
        );
      })}
    </pre>
  );
});
