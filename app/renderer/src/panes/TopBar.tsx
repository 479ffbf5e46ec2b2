/** Brand, lesson picker, backend and its process status. */
import { memo } from "react";
import type { BackendStatus, LessonSummary } from "../../../bridge/contract.js";
import type { Language } from "../../../../lessons/schema.js";

export interface TopBarProps {
  lessons: LessonSummary[];
  lessonId: string | null;
  lang: Language;
  onLesson: (id: string) => void;
  backend: BackendStatus | null;
  backendKind?: "sim" | "native";
  connected: boolean;
}

export const TopBar = memo(function TopBar(p: TopBarProps) {
  const st = p.backend?.state;
  const tone = !p.connected || st === "died" ? "bad" : st === "running" ? "ok" : "warn";
  return (
    <header className="topbar">
      <div className="brand">
        Verbs<span>Lab</span>
      </div>
      <select value={p.lessonId ?? ""} onChange={(e) => p.onLesson(e.target.value)} aria-label="lesson">
        {p.lessons.map((l) => (
          <option key={l.id} value={l.id}>
            {l.order}. {l.title[p.lang]}
          </option>
        ))}
      </select>
      <div className="spacer" />
      <span className="badge" title="which verbs backend runs the program">
        {p.backendKind === "native" ? "real rxe (libibverbs)" : "simulator (rxe-faithful)"}
      </span>
      <span
        className={`badge ${tone}`}
        data-testid="backend-state"
        data-state={p.connected ? (st ?? "unknown") : "disconnected"}
      >
        backend {p.connected ? (st ?? "…") : "disconnected"}
        {p.backend?.restarts ? ` · restarted ${p.backend.restarts}×` : ""}
      </span>
    </header>
  );
});
