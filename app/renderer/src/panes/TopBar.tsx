/** Brand, lesson picker, backend and its process status. */
import { useStrings } from "../i18n.js";
import type { WireModel } from "../../../../verbs/lab.js";
import { memo } from "react";
import type { BackendChoice, BackendKind, BackendStatus, LessonSummary } from "../../../bridge/contract.js";
import type { Language } from "../../../../lessons/schema.js";

export interface TopBarProps {
  lessons: LessonSummary[];
  lessonId: string | null;
  lang: Language;
  onLesson: (id: string) => void;
  backend: BackendStatus | null;
  backendKind?: "sim" | "native";
  connected: boolean;
  /** The backends this host offers (backend.list); with `onBackend`, the badge becomes a picker. */
  backends?: BackendChoice[] | null;
  onBackend?: (kind: BackendKind) => void;
  /** No switching while a program runs. */
  busy?: boolean;
  /** The simulator's wire model now (the lab link's `wire`). */
  wire?: WireModel;
}

export const TopBar = memo(function TopBar(p: TopBarProps) {
  const t = useStrings();
  const BACKEND_LABEL: Record<BackendKind, string> = { sim: t.backendSim, native: t.backendNative };
  const stateWord = (s: string) => t.backendStates[s] ?? s;
  const st = p.backend?.state;
  const tone = !p.connected || st === "died" ? "bad" : st === "running" ? "ok" : "warn";
  return (
    <header className="topbar">
      <div className="brand">
        Verbs<span>Lab</span>
      </div>
      <select
        value={p.lessonId ?? ""}
        onChange={(e) => p.onLesson(e.target.value)}
        aria-label="lesson"
        title={t.lessonPicker}
      >
        {p.lessons.map((l) => (
          <option key={l.id} value={l.id}>
            {l.order}. {l.title[p.lang]}
          </option>
        ))}
      </select>
      <div className="spacer" />
      {p.backends && p.onBackend ? (
        <select
          aria-label="backend"
          title={t.backendTitle}
          value={p.backendKind ?? "sim"}
          disabled={p.busy}
          onChange={(e) => p.onBackend?.(e.target.value as BackendKind)}
        >
          {p.backends.map((b) => (
            <option key={b.kind} value={b.kind} title={b.unavailableReason}>
              {BACKEND_LABEL[b.kind]}
              {b.available ? "" : t.notAvailable}
            </option>
          ))}
        </select>
      ) : (
        <span className="badge" title={t.backendTitle}>
          {BACKEND_LABEL[p.backendKind ?? "sim"]}
        </span>
      )}
      {(p.backendKind ?? "sim") === "sim" && (
        <span className="badge" data-testid="wire-model" title={t.wireModelTitle}>
          {t.wireModel(p.wire ?? "rxe")}
        </span>
      )}
      <span
        className={`badge ${tone}`}
        data-testid="backend-state"
        data-state={p.connected ? (st ?? "unknown") : "disconnected"}
      >
        {t.backendState(p.connected ? (st ? stateWord(st) : "…") : stateWord("disconnected"))}
        {p.backend?.restarts ? t.restarted(p.backend.restarts) : ""}
      </span>
    </header>
  );
});
