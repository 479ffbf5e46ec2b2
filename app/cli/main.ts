/**
 * The `verbslab` command line: doctor, run, export. `main(argv, io)` returns the exit code;
 * app/cli/verbslab.mjs runs it under tsx.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { extname, resolve } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import type { VerbsBackend } from "../../verbs/backend.js";
import { summarize } from "../session/describe.js";
import { EXPORT_FORMATS, exportTranscript, type ExportFormat } from "../session/export/index.js";
import { createSession } from "../session/session.js";
import type { PendingCall, Session } from "../session/session-types.js";
import { appendFileSink } from "../session/transcript-file.js";
import { importTranscript, TranscriptError } from "../session/transcript.js";
import type { Verbs } from "../session/verbs-api.js";
import { formatCall } from "../session/describe.js";
import { doctor, formatFindings, systemProbe } from "./doctor.js";

export interface CliIo {
  out(s: string): void;
  err(s: string): void;
  /** Lines typed by the user, for --step (null: not interactive). */
  lines?: AsyncIterator<string> | null;
}

const USAGE = `usage:
  verbslab doctor [--json]
  verbslab run <script.ts|.js> [--backend sim|native] [--device rxe0] [--seed N] [--step] [--transcript out.jsonl] [--quiet]
  verbslab export <transcript.jsonl> [--format md|html|json|c] [-o FILE]
  verbslab replay <transcript.jsonl> [--backend sim|native] [--seed N] [--up-to SEQ] [--transcript out.jsonl]

A script is an ES module: export default async function main(verbs, { device }) { ... }
with constants from "verbslab" (import { IBV_QP_STATE } from "verbslab").
`;

/** A usage mistake: the message says what was wrong and what to type instead. */
class UsageError extends Error {}

function parseFlags(
  args: string[],
  spec: Record<string, "bool" | "value">,
): { pos: string[]; flags: Record<string, string | true> } {
  const pos: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith("-") || a === "-") {
      pos.push(a);
      continue;
    }
    const [name, inline] = a.replace(/^--?/, "").split("=", 2) as [string, string | undefined];
    const kind = spec[name];
    if (!kind)
      throw new UsageError(
        `unknown option ${a} (options: ${Object.keys(spec)
          .map((k) => (k.length === 1 ? "-" : "--") + k)
          .join(", ")})`,
      );
    if (kind === "bool") flags[name] = true;
    else {
      const v = inline ?? args[++i];
      if (v === undefined) throw new UsageError(`${a} needs a value`);
      flags[name] = v;
    }
  }
  return { pos, flags };
}

export async function openBackend(kind: string, seed: number): Promise<VerbsBackend> {
  if (kind === "sim") {
    const { createSimBackend } = await import("../../sim/index.js");
    return createSimBackend({ seed });
  }
  if (kind === "native") {
    const { loadNativeBackend } = await import("../../native/index.js");
    const r = loadNativeBackend();
    if ("unavailable" in r)
      throw new UsageError(
        `the native backend is unavailable: ${r.unavailable}\n(use --backend sim for the simulator; \`verbslab doctor\` says more)`,
      );
    return r.backend;
  }
  throw new UsageError(`--backend must be sim or native, not "${kind}"`);
}

/** Loads a learner program's default export (or a named `main`). */
async function loadProgram(path: string): Promise<(verbs: Verbs, options: { device: string }) => unknown> {
  const url = pathToFileURL(resolve(path)).href;
  let mod: { default?: unknown; main?: unknown };
  try {
    // tsImport loads .ts and .js as ES modules even where no package.json says "type": "module".
    const { tsImport } = await import("tsx/esm/api");
    mod = (await tsImport(url, import.meta.url)) as typeof mod;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === "ERR_MODULE_NOT_FOUND" && String(err.message).includes(resolve(path)))
      throw new UsageError(`no such script: ${path}`);
    throw new UsageError(`could not load ${path}: ${err.message}`);
  }
  // A script loaded as CommonJS comes back wrapped: its exports object is the default.
  const inner = mod.default as { default?: unknown; main?: unknown } | undefined;
  const fn = typeof mod.default === "function" ? mod.default : (inner?.default ?? inner?.main ?? mod.main);
  if (typeof fn !== "function")
    throw new UsageError(`${path} has no default export: write \`export default async function main(verbs) { … }\``);
  return fn as (verbs: Verbs, options: { device: string }) => unknown;
}

async function stepPrompt(session: Session, io: CliIo): Promise<void> {
  const lines = io.lines;
  if (!lines) throw new UsageError("--step needs an interactive terminal");
  const help = "[enter] step  c continue  s run to postSend  p run to poll  q stop";
  let busy = false;
  session.gate.subscribe(async (pending: PendingCall | null) => {
    if (!pending || busy) return;
    busy = true;
    const ev = {
      kind: "verb",
      seq: pending.seq,
      verb: pending.verb,
      target: pending.target,
      method: pending.method,
      args: pending.args,
      qps: [],
    } as unknown as Parameters<typeof formatCall>[0];
    io.out(`⏸ #${pending.seq} ${formatCall(ev)}   ${help}\n`);
    const next = await lines.next();
    busy = false;
    const cmd = next.done ? "q" : next.value.trim();
    if (cmd === "c") session.gate.continue();
    else if (cmd === "s") session.gate.runTo("postSend");
    else if (cmd === "p") session.gate.runTo("poll");
    else if (cmd === "q") session.gate.stop();
    else session.gate.step();
  });
}

async function cmdRun(args: string[], io: CliIo): Promise<number> {
  const { pos, flags } = parseFlags(args, {
    backend: "value",
    device: "value",
    seed: "value",
    step: "bool",
    transcript: "value",
    quiet: "bool",
  });
  if (pos.length !== 1) throw new UsageError("verbslab run needs exactly one script: verbslab run my-program.ts");
  const script = pos[0]!;
  const seed = flags.seed === undefined ? 1 : Number(flags.seed);
  if (!Number.isInteger(seed)) throw new UsageError(`--seed must be an integer, not "${String(flags.seed)}"`);
  const device = typeof flags.device === "string" ? flags.device : "rxe0";
  const backend = await openBackend(typeof flags.backend === "string" ? flags.backend : "sim", seed);
  const program = await loadProgram(script);
  const session = createSession({
    backend,
    step: flags.step === true,
    program: script,
    ...(backend.kind === "sim" && { seed }),
    ...(typeof flags.transcript === "string" && { sink: appendFileSink(flags.transcript) }),
    onLog: (m) => io.out(`log: ${m}\n`),
  });
  if (flags.step === true) await stepPrompt(session, io);
  let verbs = 0;
  let disagreements = 0;
  session.subscribe((e) => {
    if (e.kind === "verb") {
      verbs++;
      if (e.check && !e.check.agree) disagreements++;
      if (flags.quiet !== true) io.out(summarize(e) + "\n");
      for (const w of e.prediction?.warnings ?? []) io.out(`   ⚠ ${w.message}\n`);
    }
  });
  const r = await session.run((v) => program(v, { device }));
  io.out(
    `${r.outcome === "ok" ? "✓" : "✗"} ${script}: ${r.outcome}, ${verbs} verb(s) on ${backend.kind}, ${disagreements} model disagreement(s)${typeof flags.transcript === "string" ? `, transcript in ${flags.transcript}` : ""}\n`,
  );
  if (r.outcome === "error") {
    const e = r.error as { name?: string; message?: string; stack?: string };
    io.err(`${e?.name ?? "Error"}: ${e?.message ?? String(r.error)}\n`);
    const frame = e?.stack?.split("\n").find((l) => l.includes(resolve(script)));
    if (frame) io.err(`  ${frame.trim()}\n`);
    return 1;
  }
  return r.outcome === "ok" ? 0 : 130;
}

async function cmdExport(args: string[], io: CliIo): Promise<number> {
  const { pos, flags } = parseFlags(args, { format: "value", o: "value", output: "value" });
  if (pos.length !== 1)
    throw new UsageError("verbslab export needs one transcript: verbslab export run.jsonl --format md -o run.md");
  const out = (flags.o ?? flags.output) as string | undefined;
  let format = flags.format as string | undefined;
  if (!format && out) format = Object.entries(EXPORT_FORMATS).find(([, f]) => f.extension === extname(out))?.[0];
  if (!format)
    throw new UsageError("say which format: --format md|html|json|c (or an -o file ending in .md, .html, .json or .c)");
  if (!(format in EXPORT_FORMATS)) throw new UsageError(`--format must be md, html, json or c, not "${format}"`);
  let text: string;
  try {
    text = readFileSync(pos[0]!, "utf8");
  } catch (e) {
    throw new UsageError(`cannot read ${pos[0]}: ${(e as Error).message}`);
  }
  const t = importTranscript(text);
  const rendered = exportTranscript(t, format as ExportFormat);
  if (out) {
    writeFileSync(out, rendered);
    io.out(`wrote ${out} (${format}, ${t.events.length} events)\n`);
    if (format === "c") io.out(`build it with: cc ${out} -libverbs -o ${out.replace(/\.c$/, "")}\n`);
  } else io.out(rendered);
  return 0;
}

async function cmdReplay(args: string[], io: CliIo): Promise<number> {
  const { pos, flags } = parseFlags(args, {
    backend: "value",
    seed: "value",
    "up-to": "value",
    transcript: "value",
    quiet: "bool",
  });
  if (pos.length !== 1) throw new UsageError("verbslab replay needs one transcript: verbslab replay run.jsonl");
  let text: string;
  try {
    text = readFileSync(pos[0]!, "utf8");
  } catch (e) {
    throw new UsageError(`cannot read ${pos[0]}: ${(e as Error).message}`);
  }
  const t = importTranscript(text);
  const kind = typeof flags.backend === "string" ? flags.backend : t.header.backend;
  const seed = flags.seed !== undefined ? Number(flags.seed) : (t.header.seed ?? 1);
  if (!Number.isInteger(seed)) throw new UsageError(`--seed must be an integer, not "${String(flags.seed)}"`);
  const upTo = flags["up-to"] !== undefined ? Number(flags["up-to"]) : undefined;
  if (upTo !== undefined && !Number.isInteger(upTo)) throw new UsageError(`--up-to must be an event number`);
  const backend = await openBackend(kind, seed);
  const { replayTranscript } = await import("../session/replay.js");
  const total = t.events.filter((e) => upTo === undefined || e.seq <= upTo).length;
  const r = await replayTranscript(t, backend, {
    ...(upTo !== undefined && { upTo }),
    ...(backend.kind === "sim" && { seed }),
    ...(typeof flags.transcript === "string" && { sink: appendFileSink(flags.transcript) }),
    onProgress: (done) => {
      if (flags.quiet !== true && (done % 50 === 0 || done === total)) io.err(`replayed ${done}/${total}\r`);
    },
  });
  if (flags.quiet !== true) io.err("\n");
  for (const d of r.divergences) io.out(`✗ #${d.seq} ${d.verb}: recorded ${d.recorded}, replay gave ${d.replayed}\n`);
  io.out(
    `${r.divergences.length ? "✗" : "✓"} replayed ${r.replayed} event(s) of ${pos[0]} on ${backend.kind}: ${r.divergences.length} divergence(s)\n`,
  );
  return r.divergences.length ? 1 : 0;
}

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case "doctor": {
        const { flags } = parseFlags(rest, { json: "bool" });
        const findings = doctor(systemProbe());
        io.out(flags.json ? JSON.stringify(findings, null, 2) + "\n" : formatFindings(findings));
        return findings.some((f) => f.status === "fail") ? 1 : 0;
      }
      case "run":
        return await cmdRun(rest, io);
      case "export":
        return await cmdExport(rest, io);
      case "replay":
        return await cmdReplay(rest, io);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        io.out(USAGE);
        return cmd === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${cmd}"`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`verbslab: ${e.message}\n`);
      if (!e.message.includes("\n")) io.err(`\n${USAGE}`);
      return 2;
    }
    if (e instanceof TranscriptError) {
      io.err(`verbslab: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

/** The process entry: real stdout/stderr and stdin lines. */
export async function cli(argv: string[]): Promise<number> {
  const rl = process.stdin.isTTY ? createInterface({ input: process.stdin }) : null;
  const lines = rl
    ? rl[Symbol.asyncIterator]()
    : process.stdin.readable
      ? createInterface({ input: process.stdin })[Symbol.asyncIterator]()
      : null;
  try {
    return await main(argv, {
      out: (s) => process.stdout.write(s),
      err: (s) => process.stderr.write(s),
      lines,
    });
  } finally {
    rl?.close();
  }
}
