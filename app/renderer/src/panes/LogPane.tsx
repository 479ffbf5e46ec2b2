/** What the program logged with verbs.log, oldest first. */
import { memo } from "react";
import { formatLogLine } from "../model/format.js";
export const LogPane = memo(function LogPane({ lines }: { lines: string[] }) {
  if (lines.length === 0) return <p className="empty">verbs.log(…) lines appear here.</p>;
  return (
    <pre className="mono" style={{ margin: 0, whiteSpace: "pre-wrap" }}>
      {lines.map(formatLogLine).join("\n")}
    </pre>
  );
});
