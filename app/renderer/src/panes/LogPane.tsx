/** What the program logged with verbs.log, oldest first. */
import { memo } from "react";
import { formatLogLine } from "../model/format.js";
import { useStrings } from "../i18n.js";
export const LogPane = memo(function LogPane({ lines }: { lines: string[] }) {
  const t = useStrings();
  if (lines.length === 0) return <p className="empty">{t.logEmpty}</p>;
  return (
    <pre className="mono" style={{ margin: 0, whiteSpace: "pre-wrap" }}>
      {lines.map(formatLogLine).join("\n")}
    </pre>
  );
});
