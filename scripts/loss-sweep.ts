/**
 * The conformance suite's loss scenario on the simulator over seeds (sim/loss-sweep.ts):
 * `npx tsx scripts/loss-sweep.ts [first=1] [last=15]` prints each counter's median (min–max)
 * at 1% and 5%, the figures sim/RXE-FACTS.md §11 compares with rxe.
 */
import { lossRun, median, type LossRun } from "../sim/loss-sweep.js";

const first = Number(process.argv[2] ?? 1);
const last = Number(process.argv[3] ?? 15);
const keys = [
  "sent_pkts",
  "rcvd_seq_err",
  "completer_retry_err",
  "out_of_seq_request",
  "duplicate_request",
  "resp_sent_pkts",
] as const;
for (const loss of [0.01, 0.05]) {
  const runs: LossRun[] = [];
  for (let seed = first; seed <= last; seed++) runs.push(await lossRun(seed, loss));
  const cells = keys.map((k) => {
    const xs = runs.map((r) => r[k]);
    return `${k} ${median(xs)} (${Math.min(...xs)}–${Math.max(...xs)})`;
  });
  console.log(`loss ${loss * 100}%: ${cells.join(", ")}; all ok: ${runs.every((r) => r.ok)}`);
  console.log(`  sent_pkts by seed: ${runs.map((r) => r.sent_pkts).join(" ")}`);
}
