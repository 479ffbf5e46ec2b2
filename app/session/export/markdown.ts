/** The transcript as Markdown: one section per verb with its outcome, state changes, query diffs and completions. */
import { formatCall, formatOutcome, formatValue, formatWc, hex, ms, stateLabel } from "../describe.js";
import type { Transcript, VerbEvent } from "../transcript.js";
import { wcReasonText } from "../../../verbs/wc-reason.js";

const code = (s: string) => "`" + s.replace(/`/g, "ˋ") + "`";

export function toMarkdown(t: Transcript): string {
  const h = t.header;
  const out: string[] = [
    `# VerbsLab transcript${h.program ? `: ${h.program}` : ""}`,
    "",
    `- backend: ${h.backend}${h.seed !== undefined ? ` (seed ${h.seed})` : ""}`,
    `- recorded: ${h.created}`,
    `- events: ${t.events.length}`,
  ];
  const disagreements = t.events.filter((e) => e.kind === "verb" && e.check && !e.check.agree).length;
  out.push(`- model disagreements: ${disagreements}`, "");
  for (const e of t.events) {
    if (e.kind === "log") out.push(`> **${e.seq}.** log: ${e.message}`, "");
    else if (e.kind === "end")
      out.push(
        `## End: ${e.outcome}`,
        "",
        ...(e.error
          ? [`${code(`${e.error.name}${e.error.code ? ` ${e.error.code}` : ""}: ${e.error.message}`)}`, ""]
          : []),
      );
    else out.push(...verbSection(e));
  }
  return out.join("\n") + "\n";
}

function verbSection(e: VerbEvent): string[] {
  const out = [
    `## ${e.seq}. ${e.verb}`,
    "",
    "```js",
    `await ${formatCall(e)}`,
    "```",
    "",
    `- result: ${e.error ? "**" + formatOutcome(e) + "**" : formatOutcome(e)}`,
    `- clock: ${ms(e.clock)} ms${e.clockAdvance ? ` (+${ms(e.clockAdvance)} ms)` : ""}, took ${ms(e.durationMs)} ms`,
  ];
  if (e.prediction) {
    out.push(
      e.check?.agree === false
        ? `- model: **disagrees** — expected ${e.check.expected}, got ${e.check.actual}`
        : `- model: agrees — ${e.check?.expected ?? e.prediction.outcome}`,
    );
    if (e.check?.note) out.push(`  - ${e.check.note}`);
    for (const w of e.prediction.warnings) out.push(`- ⚠ ${code(w.attribute)}: ${w.message}`);
  }
  for (const m of e.moves ?? [])
    out.push(
      `- qp${m.qp} (${hex(m.qp_num)}) moved ${stateLabel(m.from)} → ${stateLabel(m.to)} without a modify: ${m.cause}`,
    );
  for (const q of e.qps) {
    if (!q.changes.length) continue;
    const st =
      q.before && q.after && q.before.qp_state !== q.after.qp_state
        ? ` ${stateLabel(q.before.qp_state)} → ${stateLabel(q.after.qp_state)}`
        : "";
    out.push("", `ibv_query_qp qp${q.qp} (${hex(q.qp_num)})${st}:`, "", "| field | before | after |", "|---|---|---|");
    for (const c of q.changes) {
      const last = c.field.split(".").pop() ?? c.field;
      out.push(`| ${c.field} | ${formatValue(c.before, last)} | ${formatValue(c.after, last)} |`);
    }
  }
  if (e.completions?.length) {
    out.push("", "Completions:", "");
    for (const c of e.completions)
      out.push(
        `- cq${c.cq}: ${formatWc(c.wc)}${c.why ? ` — why (${c.why.source}): ${wcReasonText(c.why.reason)}` : ""}`,
      );
  }
  for (const n of e.notices ?? []) out.push("", `> ⚠ ${n.text}`);
  if (e.counters?.length) {
    for (const c of e.counters)
      out.push(
        `- counters (ctx${c.context}): ${Object.entries(c.delta)
          .map(([k, v]) => `${k} +${v}`)
          .join(", ")}`,
      );
  }
  out.push("");
  return out;
}
