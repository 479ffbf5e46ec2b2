/**
 * The Network panel: the lab link between rxe0 and rxe1 as it is now (getLink), and labelled
 * controls that set or clear its faults (bridge `lab.set` / `lab.clear`, recorded as
 * verbslab_set_link). It says where the faults apply, and shows a backend's refusal as it came.
 */
import { useCallback, useEffect, useRef, useState, type FormEvent } from "react";
import type { Bridge } from "../../../bridge/client.js";
import type { BackendKind, LabLinkInfo } from "../../../bridge/contract.js";
import { useStrings, type Strings } from "../i18n.js";
import { WIRE_MODELS } from "../../../../verbs/lab.js";
import type { VerbFailure } from "../../../../verbs/verb-failure.js";
import { faultsFromForm, formOf, type FieldProblem, type LinkField, type LinkForm } from "../model/link-form.js";

export interface NetworkPaneProps {
  bridge: Pick<Bridge, "request">;
  /** The backend the app is on (until the first answer tells). */
  kind: BackendKind;
  /** A program is running: the host refuses link changes until it ends. */
  running: boolean;
  /** The link as App last read it (lab.get, after each session and run), or null before. */
  info: LabLinkInfo | null;
  /** Why that read failed, if it did. */
  loadError?: string;
  /** Told the link a set or clear answered with. */
  onInfo: (info: LabLinkInfo) => void;
}

/** What the panel shows besides the form: the answer of the last request, or what went wrong. */
export type NetworkMessage =
  | { kind: "problem"; problem: FieldProblem }
  | { kind: "refused"; text: string; why?: VerbFailure }
  | { kind: "nothing" };

const FIELD_LABEL: Record<LinkField, (t: Strings) => string> = {
  loss: (t) => t.netLoss,
  delay: (t) => t.netDelay,
  reorder: (t) => t.netReorder,
  mtu0: (t) => t.netMtu("rxe0"),
  mtu1: (t) => t.netMtu("rxe1"),
  block: (t) => t.netBlock,
  wire: (t) => t.netWire,
};

export function NetworkPane({ bridge, kind, running, info, loadError, onInfo }: NetworkPaneProps) {
  const [form, setForm] = useState<LinkForm | null>(() => (info?.link ? formOf(info.link) : null));
  const [message, setMessage] = useState<NetworkMessage | null>(null);
  const [busy, setBusy] = useState(false);
  // The form starts again from each link the panel is shown.
  useEffect(() => {
    setForm(info?.link ? formOf(info.link) : null);
  }, [info]);
  useEffect(() => {
    if (loadError) setMessage({ kind: "refused", text: loadError });
  }, [loadError]);

  const act = useCallback(
    async (request: () => Promise<LabLinkInfo>) => {
      setBusy(true);
      try {
        onInfo(await request());
        setMessage(null);
      } catch (e) {
        const why = (e as { why?: VerbFailure }).why;
        setMessage({ kind: "refused", text: (e as Error).message, ...(why && { why }) });
      } finally {
        setBusy(false);
      }
    },
    [onInfo],
  );
  const onApply = useCallback(
    (e: FormEvent) => {
      e.preventDefault();
      if (!form || !info?.link) return;
      const r = faultsFromForm(form, info.link);
      if ("field" in r) return setMessage({ kind: "problem", problem: r });
      if (Object.keys(r.faults).length === 0) return setMessage({ kind: "nothing" });
      void act(() => bridge.request("lab.set", { faults: r.faults }));
    },
    [form, info, act, bridge],
  );
  const onClear = useCallback(() => void act(() => bridge.request("lab.clear", {})), [act, bridge]);

  return (
    <NetworkView
      info={info}
      kind={info?.backend ?? kind}
      form={form}
      message={message}
      disabled={running || busy}
      running={running}
      onChange={setForm}
      onApply={onApply}
      onClear={onClear}
    />
  );
}

export interface NetworkViewProps {
  info: LabLinkInfo | null;
  kind: BackendKind;
  form: LinkForm | null;
  message: NetworkMessage | null;
  disabled: boolean;
  running: boolean;
  onChange: (f: LinkForm) => void;
  onApply: (e: FormEvent) => void;
  onClear: () => void;
}

/** The panel from plain data (what the component test renders). */
export function NetworkView({
  info,
  kind,
  form,
  message,
  disabled,
  running,
  onChange,
  onApply,
  onClear,
}: NetworkViewProps) {
  const t = useStrings();
  const link = info?.link ?? null;
  // The tab's body is short in a 1280×720 window: an answer below the fold would go unseen.
  const said = useRef<HTMLParagraphElement>(null);
  // A block, not an expression: Chromium's scrollIntoView may return a promise, which React
  // would take for the effect's cleanup and call (the whole app went blank).
  useEffect(() => {
    said.current?.scrollIntoView?.({ block: "nearest" });
  }, [message]);
  const bad = message?.kind === "problem" ? message.problem.field : undefined;
  const input = (field: Exclude<LinkField, "block" | "wire">, step: string) =>
    form && (
      <label className="net-field">
        <span>{FIELD_LABEL[field](t)}</span>
        <input
          type="number"
          inputMode="decimal"
          step={step}
          data-field={field}
          aria-invalid={bad === field}
          value={form[field]}
          disabled={disabled}
          onChange={(e) => onChange({ ...form, [field]: e.target.value })}
        />
      </label>
    );
  const faults = link ? t.netSummary(link) : [];
  return (
    <div className="network" data-backend={kind}>
      <h3>
        {t.netTitle}{" "}
        {link && (
          <span className={`badge ${faults.length ? "warn" : "ok"}`} data-testid="net-link-now">
            {t.netNow} {faults.length ? faults.join(" · ") : t.netClean} · {t.netMtuNow(link)}
            {kind === "sim" && ` · ${t.wireModelName(link.wire)}`}
          </span>
        )}
      </h3>
      <p className="muted" data-testid="net-where">
        {info && !link ? t.netUnsupported : kind === "native" ? t.netWhereNative : t.netWhereSim}
      </p>
      {link && form && (
        <form className="net-form" onSubmit={onApply}>
          {input("loss", "0.1")}
          {input("delay", "1")}
          {input("reorder", "1")}
          {input("mtu0", "1")}
          {input("mtu1", "1")}
          <label className="net-field" title={kind === "native" ? t.netWireNative : t.netWireTitle}>
            <span>{t.netWire}</span>
            <select
              data-field="wire"
              value={form.wire}
              disabled={disabled || kind === "native"}
              onChange={(e) => onChange({ ...form, wire: e.target.value as LinkForm["wire"] })}
            >
              {WIRE_MODELS.map((m) => (
                <option key={m} value={m}>
                  {t.wireModelName(m)}
                </option>
              ))}
            </select>
          </label>
          <div className="net-actions">
            <label>
              <input
                type="checkbox"
                data-field="block"
                checked={form.block}
                disabled={disabled}
                onChange={(e) => onChange({ ...form, block: e.target.checked })}
              />
              <span>{t.netBlock}</span>
            </label>
            <button type="submit" data-action="net-apply" disabled={disabled}>
              {t.netApply}
            </button>
            <button type="button" data-action="net-clear" disabled={disabled} onClick={onClear}>
              {t.netClear}
            </button>
          </div>
        </form>
      )}
      {running && <p className="muted">{t.netRunning}</p>}
      {message && (
        <p
          ref={said}
          aria-live="polite"
          className={message.kind === "nothing" ? "muted" : "mismatch"}
          data-testid="net-message"
          data-kind={message.kind}
        >
          {messageText(t, message)}
        </p>
      )}
      <p className="muted net-note">
        {t.netLoopback} {t.netKept}
      </p>
    </div>
  );
}

function messageText(t: Strings, m: NetworkMessage): string {
  if (m.kind === "nothing") return t.netNothing;
  if (m.kind === "refused") return t.netRefused(m.why ? t.verbWhy(m.why) : m.text);
  const p = m.problem;
  const label = FIELD_LABEL[p.field](t);
  if (p.kind === "range") return t.netRange(label, p.min, p.max, p.whole);
  return t.netReason(label, p.why ? t.verbWhy(p.why) : p.text);
}
