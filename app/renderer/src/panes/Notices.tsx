/** Host notices (backend died / restarted, lost connection), dismissable. */
import { useStrings } from "../i18n.js";
import { memo } from "react";
import type { Notice } from "../lab/store.js";

export const Notices = memo(function Notices({
  notices,
  onDismiss,
}: {
  notices: Notice[];
  onDismiss: (id: number) => void;
}) {
  const t = useStrings();
  if (notices.length === 0) return null;
  return (
    <div className="notices" aria-live="polite">
      {notices.map((n) => (
        <div key={n.id} className={`toast ${n.level}`} data-level={n.level}>
          <span>{typeof n.text === "function" ? n.text(t) : n.text}</span>
          <button onClick={() => onDismiss(n.id)} aria-label={t.dismiss}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
});
