/**
 * The transcript as one self-contained HTML file: inline CSS, no scripts, no external
 * resources, readable offline. Per step: the call, outcome, model check, state changes,
 * query diffs, completions and counters.
 */
import { formatCall, formatOutcome, formatValue, formatWc, hex, ms, stateLabel } from "../describe.js";
import type { Transcript, VerbEvent } from "../transcript.js";
import { wcReasonText } from "../../../verbs/wc-reason.js";

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

const CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#1b1f24}
h1{font-size:1.4rem}code,pre{font:13px ui-monospace,Menlo,Consolas,monospace}
pre{background:#f4f6f8;padding:.5rem .75rem;border-radius:4px;white-space:pre-wrap;word-break:break-word;margin:.3rem 0}
section.step{border-left:4px solid #9aa5b1;padding:.2rem .9rem;margin:1rem 0}
section.error{border-color:#d1242f}section.disagree{border-color:#bf8700;background:#fff8e1}
h2{font-size:1rem;margin:.3rem 0}.muted{color:#57606a}.err{color:#d1242f;font-weight:600}
.warn{color:#9a6700}.move{color:#0969da;font-weight:600}
table{border-collapse:collapse;margin:.4rem 0}td,th{border:1px solid #d0d7de;padding:.15rem .5rem;text-align:left}
th{background:#f4f6f8}.log{font-style:italic;color:#57606a}
`;

export function toHtml(t: Transcript): string {
  const h = t.header;
  const title = `VerbsLab transcript${h.program ? `: ${h.program}` : ""}`;
  const disagreements = t.events.filter((e) => e.kind === "verb" && e.check && !e.check.agree).length;
  const body: string[] = [
    `<h1>${escapeHtml(title)}</h1>`,
    `<p class="muted">backend ${escapeHtml(h.backend)}${h.seed !== undefined ? ` (seed ${h.seed})` : ""} · recorded ${escapeHtml(h.created)} · ${t.events.length} events · ${disagreements} model disagreement(s)</p>`,
  ];
  for (const e of t.events) {
    if (e.kind === "log") body.push(`<p class="log">${e.seq}. log: ${escapeHtml(e.message)}</p>`);
    else if (e.kind === "end")
      body.push(
        `<section class="step${e.outcome === "error" ? " error" : ""}"><h2>End: ${escapeHtml(e.outcome)}</h2>${e.error ? `<p class="err">${escapeHtml(`${e.error.name}: ${e.error.message}`)}</p>` : ""}</section>`,
      );
    else body.push(verbSection(e));
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${CSS}</style></head>
<body>
${body.join("\n")}
</body></html>
`;
}

function verbSection(e: VerbEvent): string {
  const cls = ["step", e.error ? "error" : "", e.check && !e.check.agree ? "disagree" : ""].filter(Boolean).join(" ");
  const out = [
    `<section class="${cls}" id="step-${e.seq}">`,
    `<h2>${e.seq}. ${escapeHtml(e.verb)}</h2>`,
    `<pre>await ${escapeHtml(formatCall(e))}</pre>`,
    `<p>${e.error ? `<span class="err">${escapeHtml(formatOutcome(e))}</span>` : escapeHtml(formatOutcome(e))} <span class="muted">· clock ${ms(e.clock)} ms${e.clockAdvance ? ` (+${ms(e.clockAdvance)})` : ""} · ${ms(e.durationMs)} ms</span></p>`,
  ];
  if (e.check)
    out.push(
      e.check.agree
        ? `<p class="muted">model agrees: ${escapeHtml(e.check.expected)}</p>`
        : `<p><span class="warn">model disagrees</span>: expected ${escapeHtml(e.check.expected)}; got ${escapeHtml(e.check.actual)}${e.check.note ? ` — ${escapeHtml(e.check.note)}` : ""}</p>`,
    );
  for (const w of e.prediction?.warnings ?? [])
    out.push(`<p class="warn">⚠ <code>${escapeHtml(w.attribute)}</code>: ${escapeHtml(w.message)}</p>`);
  for (const m of e.moves ?? [])
    out.push(
      `<p class="move">qp${m.qp} (${hex(m.qp_num)}) ${stateLabel(m.from)} → ${stateLabel(m.to)} without a modify: ${escapeHtml(m.cause)}</p>`,
    );
  for (const q of e.qps) {
    if (!q.changes.length) continue;
    const st =
      q.before && q.after && q.before.qp_state !== q.after.qp_state
        ? ` <span class="move">${stateLabel(q.before.qp_state)} → ${stateLabel(q.after.qp_state)}</span>`
        : "";
    out.push(
      `<p>ibv_query_qp qp${q.qp} (${hex(q.qp_num)})${st}</p><table><tr><th>field</th><th>before</th><th>after</th></tr>`,
    );
    for (const c of q.changes) {
      const last = c.field.split(".").pop() ?? c.field;
      out.push(
        `<tr><td><code>${escapeHtml(c.field)}</code></td><td>${escapeHtml(formatValue(c.before, last))}</td><td>${escapeHtml(formatValue(c.after, last))}</td></tr>`,
      );
    }
    out.push("</table>");
  }
  if (e.completions?.length)
    out.push(
      `<p>Completions:</p><ul>${e.completions
        .map(
          (c) =>
            `<li>cq${c.cq}: ${escapeHtml(formatWc(c.wc))}${c.why ? ` — why (${c.why.source}): ${escapeHtml(wcReasonText(c.why.reason))}` : ""}</li>`,
        )
        .join("")}</ul>`,
    );
  for (const n of e.notices ?? []) out.push(`<p class="notice">⚠ ${escapeHtml(n.text)}</p>`);
  for (const c of e.counters ?? [])
    out.push(
      `<p class="muted">counters ctx${c.context}: ${escapeHtml(
        Object.entries(c.delta)
          .map(([k, v]) => `${k} +${v}`)
          .join(", "),
      )}</p>`,
    );
  out.push("</section>");
  return out.join("\n");
}
