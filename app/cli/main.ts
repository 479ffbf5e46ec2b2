/**
 * The `verbslab` command line: doctor, run, export, replay, help. `main(argv, io)` returns the exit code;
 * app/cli/verbslab.mjs runs it under tsx.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { basename, extname, resolve } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import type { VerbsBackend } from "../../verbs/backend.js";
import { summarize } from "../session/describe.js";
import { cBuild, toC } from "../session/export/c.js";
import { usesCm } from "../session/export/c-cm.js";
import { EXPORT_FORMATS, exportTranscript, type ExportFormat } from "../session/export/index.js";
import { createSession } from "../session/session.js";
import type { PendingCall, Session, TranscriptSink } from "../session/session-types.js";
import { appendFileSink } from "../session/transcript-file.js";
import { importTranscript, TranscriptError, type Transcript, type TranscriptEvent } from "../session/transcript.js";
import type { Verbs } from "../session/verbs-api.js";
import { formatCall } from "../session/describe.js";
import { doctor, formatFindings, systemProbe } from "./doctor.js";

export interface CliIo {
  out(s: string): void;
  err(s: string): void;
  /** Lines typed by the user, for --step (null: not interactive). */
  lines?: AsyncIterator<string> | null;
}

type Command = "doctor" | "run" | "export" | "replay" | "serve";

/** One option: its names ("o", "output" → -o, --output), its value's placeholder if it takes one, what it does (default). */
interface OptionHelp {
  names: string[];
  value?: string;
  text: string;
}

/** What `verbslab <cmd> --help` prints: what the command does, every option with its default, an example. */
interface CommandHelp {
  synopsis: string;
  /** One line for `verbslab --help`. */
  short: string;
  what: string;
  /** Every option the command parses (parseFlags reads them from here). */
  options: OptionHelp[];
  example: string;
  more?: string;
}

const HELP: Record<Command, CommandHelp> = {
  doctor: {
    synopsis: "verbslab doctor [--json]",
    short: "what this machine has for RDMA, and what to do about each gap",
    what: "Says what this machine has for RDMA (libibverbs, the native addon, devices, ports, GIDs, rdma_rxe, memlock) and what to do about each gap. Exit 1 if anything failed.",
    options: [{ names: ["json"], text: "print the findings as JSON (default: text)" }],
    example: "verbslab doctor",
  },
  run: {
    synopsis: "verbslab run <script.ts|.js> [options]",
    short: "run a program on the simulator or a real device",
    what: "Runs a program on a backend, printing each verb and its result, then a summary numbered like the transcript.",
    options: [
      { names: ["backend"], value: "sim|native", text: "the simulator or the machine's RDMA device (default: sim)" },
      { names: ["device"], value: "NAME", text: "the device name passed to the program (default: rxe0)" },
      { names: ["seed"], value: "N", text: "the simulator's seed (default: 1)" },
      {
        names: ["step"],
        text: "pause before each verb: [enter] step, c continue, s run to postSend, p run to poll, q stop (default: off)",
      },
      {
        names: ["transcript"],
        value: "FILE",
        text: "write the transcript (JSON lines) to FILE as it runs (default: none, nothing is written)",
      },
      { names: ["quiet"], text: "print only logs and the summary (default: off)" },
    ],
    example: "verbslab run app/cli/examples/rc-loopback.ts --backend sim --transcript /tmp/run.jsonl",
    more: 'A script is an ES module: export default async function main(verbs, { device }) { ... }\nwith constants from "verbslab" (import { IBV_QP_STATE } from "verbslab").',
  },
  export: {
    synopsis: "verbslab export <transcript.jsonl> [options]",
    short: "a transcript as Markdown, HTML, JSON, C or its packets as a pcap",
    what: "Renders a transcript as Markdown, HTML, JSON, a standalone C program over libibverbs, or its packets as a pcap for Wireshark.",
    options: [
      {
        names: ["format"],
        value: "md|html|json|c|pcap",
        text: "the format (default: from -o's extension; needed when printing to stdout)",
      },
      {
        names: ["o", "output"],
        value: "FILE",
        text: "write to FILE (default: stdout; - is stdout too; pcap needs a FILE)",
      },
    ],
    example: "verbslab export /tmp/run.jsonl -o /tmp/run.c   # then: cc /tmp/run.c -libverbs -o /tmp/run",
    more: "pcap: the transcript is replayed on the simulator (its seed) and the packets it sends are written\nas rxe puts them on the wire (Ethernet/IP/UDP 4791/BTH; payload bytes are zeros). Open it in\nWireshark or: tshark -r run.pcap. Only rxe0<->rxe1 traffic crosses a real wire: packets between\ntwo QPs of one device are looped inside rxe, and tcpdump on real rxe never sees them.",
  },
  replay: {
    synopsis: "verbslab replay <transcript.jsonl> [options]",
    short: "run a transcript again and report what differs",
    what: "Performs a transcript's verbs again and reports every result that differs from the recorded one (exit 1 if any).",
    options: [
      {
        names: ["backend"],
        value: "sim|native",
        text: "where to replay (default: the backend the transcript was recorded on)",
      },
      { names: ["seed"], value: "N", text: "the simulator's seed (default: the transcript's, else 1)" },
      { names: ["up-to"], value: "SEQ", text: "stop after event number SEQ (default: replay every event)" },
      {
        names: ["transcript"],
        value: "FILE",
        text: "write the replay's own transcript to FILE (default: none, nothing is written)",
      },
      { names: ["quiet"], text: "no progress line (default: off)" },
    ],
    example: "verbslab replay /tmp/run.jsonl --backend sim",
  },
  serve: {
    synopsis: "verbslab serve [options]",
    short: "web mode: for one person, or as a JupyterHub single-user server",
    what: "Serves the app in the browser. Alone: on 127.0.0.1 behind a random token, printing the URL. With --jupyterhub: as the single-user server JupyterHub spawned (JUPYTERHUB_* variables), under its prefix, letting in only whom the Hub's OAuth and scopes let in, and reporting activity to the Hub. Stops on Ctrl-C (SIGINT) or SIGTERM.",
    options: [
      { names: ["jupyterhub"], text: "run as a JupyterHub single-user server (default: off, local token mode)" },
      {
        names: ["port"],
        value: "N",
        text: "the port, local mode (default: a free one; under the Hub: from JUPYTERHUB_SERVICE_URL)",
      },
      {
        names: ["backend"],
        value: "sim|native",
        text: "default: native when an RDMA device works, else the simulator",
      },
      { names: ["seed"], value: "N", text: "the simulator's seed (default: random)" },
      {
        names: ["data"],
        value: "DIR",
        text: "the data folder (default: $VERBSLAB_DATA_DIR, else $XDG_DATA_HOME/verbslab or ~/.local/share/verbslab)",
      },
    ],
    example: "verbslab serve --jupyterhub --backend sim   # as c.Spawner.cmd in jupyterhub_config.py",
    more: "With --jupyterhub and VERBSLAB_INSTRUCTOR_URL set, each checked lesson run is reported to the instructor service.",
  },
};

function isCommand(s: string | undefined): s is Command {
  return s !== undefined && Object.hasOwn(HELP, s);
}

const flagName = (n: string) => (n.length === 1 ? "-" : "--") + n;
const HELP_OPTION: OptionHelp = { names: ["h", "help"], text: "print this help" };

/** One command's usage: what it does, its options with defaults, an example. */
export function commandUsage(cmd: Command): string {
  const h = HELP[cmd];
  const rows = [...h.options, HELP_OPTION].map(
    (o) => [o.names.map(flagName).join(", ") + (o.value ? ` ${o.value}` : ""), o.text] as const,
  );
  const width = Math.max(...rows.map(([o]) => o.length));
  const opts = rows.map(([o, d]) => `  ${o.padEnd(width)}  ${d}`).join("\n");
  return `usage: ${h.synopsis}\n\n${h.what}\n\noptions:\n${opts}\n\nexample:\n  ${h.example}\n${h.more ? `\n${h.more}\n` : ""}`;
}

const USAGE = `usage: verbslab <command> [options]

commands:
${(Object.keys(HELP) as Command[]).map((c) => `  ${c.padEnd(8)}${HELP[c].short}`).join("\n")}
  help    what a command does, its options and defaults: verbslab help <command> (or <command> --help)

${HELP.run.more}
`;

/** A usage mistake: the message says what was wrong and what to type instead. */
class UsageError extends Error {}

/** Parses a command's arguments against the options its help lists. */
function parseFlags(cmd: Command, args: string[]): { pos: string[]; flags: Record<string, string | true> } {
  const spec: Record<string, "bool" | "value"> = {};
  for (const o of HELP[cmd].options) for (const n of o.names) spec[n] = o.value ? "value" : "bool";
  const pos: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith("-") || a === "-") {
      pos.push(a);
      continue;
    }
    const [name, inline] = a.replace(/^--?/, "").split("=", 2) as [string, string | undefined];
    const kind = Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (!kind)
      throw new UsageError(`unknown option ${a} (options: ${[...Object.keys(spec), "help"].map(flagName).join(", ")})`);
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

/**
 * The --transcript file, or a usage error naming it when it cannot be written or is the
 * command's own input (truncating it would lose the learner's script or recording).
 */
function transcriptSink(path: string, input: string): TranscriptSink {
  if (resolve(path) === resolve(input))
    throw new UsageError(`--transcript ${path} is the file being read (${input}): name another file`);
  try {
    return appendFileSink(path);
  } catch (e) {
    throw new UsageError(`cannot write the transcript to ${path}: ${(e as Error).message}`);
  }
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

/**
 * The run summary's counts, numbered as the transcript is: every event (verb, log line,
 * end) takes the next seq, so "N events (#1–#N)" is what `export` and the transcript show,
 * and the verb count alone is never mistaken for the last event's number.
 */
export function runCounts(events: readonly TranscriptEvent[]): string {
  const verbs = events.filter((e) => e.kind === "verb");
  const logs = events.filter((e) => e.kind === "log").length;
  const ended = events.some((e) => e.kind === "end");
  const disagreements = verbs.filter((e) => e.check && !e.check.agree).length;
  const parts = [`${verbs.length} verb(s)`, ...(logs ? [`${logs} log(s)`] : []), ...(ended ? ["end"] : [])];
  const last = events.at(-1)?.seq ?? 0;
  return `${events.length} event(s)${last ? ` (#1–#${last}: ${parts.join(", ")})` : ""}, ${disagreements} model disagreement(s)`;
}

async function cmdRun(args: string[], io: CliIo): Promise<number> {
  const { pos, flags } = parseFlags("run", args);
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
    ...(typeof flags.transcript === "string" && { sink: transcriptSink(flags.transcript, script) }),
    onLog: (m) => io.out(`log: ${m}\n`),
  });
  if (flags.step === true) await stepPrompt(session, io);
  session.subscribe((e) => {
    if (e.kind === "verb") {
      if (flags.quiet !== true) io.out(summarize(e) + "\n");
      for (const w of e.prediction?.warnings ?? []) io.out(`   ⚠ ${w.message}\n`);
    }
  });
  const r = await session.run((v) => program(v, { device }));
  io.out(
    `${r.outcome === "ok" ? "✓" : "✗"} ${script}: ${r.outcome} on ${backend.kind}, ${runCounts(session.events())}${typeof flags.transcript === "string" ? `, transcript in ${flags.transcript}` : ""}\n`,
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
  const { pos, flags } = parseFlags("export", args);
  if (pos.length !== 1)
    throw new UsageError("verbslab export needs one transcript: verbslab export run.jsonl --format md -o run.md");
  const o = (flags.o ?? flags.output) as string | undefined;
  // "-o -" is stdout, as in most tools (never a file named "-").
  const out = o === "-" ? undefined : o;
  let format = flags.format as string | undefined;
  if (!format && out) format = Object.entries(EXPORT_FORMATS).find(([, f]) => f.extension === extname(out))?.[0];
  if (!format && out && extname(out) === ".pcap") format = "pcap";
  if (!format)
    throw new UsageError(
      "say which format: --format md|html|json|c|pcap (or an -o file ending in .md, .html, .json, .c or .pcap)",
    );
  if (!(format in EXPORT_FORMATS) && format !== "pcap")
    throw new UsageError(`--format must be md, html, json, c or pcap, not "${format}"`);
  if (format === "pcap" && !out) throw new UsageError("a pcap is binary: name the file to write with -o run.pcap");
  let text: string;
  try {
    text = readFileSync(pos[0]!, "utf8");
  } catch (e) {
    throw new UsageError(`cannot read ${pos[0]}: ${(e as Error).message}`);
  }
  if (out && resolve(out) === resolve(pos[0]!))
    throw new UsageError(`-o ${out} is the transcript being read: name another file`);
  const t = importTranscript(text);
  if (format === "pcap") return exportPcap(t, out!, io);
  // The C program's build line names the file it is saved as.
  const rendered = exportTranscript(t, format as ExportFormat, out ? { fileName: basename(out) } : {});
  if (out) {
    try {
      writeFileSync(out, rendered);
    } catch (e) {
      throw new UsageError(`cannot write ${out}: ${(e as Error).message}`);
    }
    io.out(`wrote ${out} (${format}, ${t.events.length} events)\n`);
    if (format === "c") io.out(`build it with: ${cBuild(out, { cm: usesCm(t) }).command}\n`);
  } else io.out(rendered);
  return 0;
}

/** `--format pcap`: the transcript replayed on the simulator, its packets written to `out`. */
async function exportPcap(t: Transcript, out: string, io: CliIo): Promise<number> {
  const { transcriptPcap } = await import("../session/export/pcap-replay.js");
  const sim = await openBackend("sim", t.header.seed ?? 1);
  const r = await transcriptPcap(t, sim);
  try {
    writeFileSync(out, r.bytes);
  } catch (e) {
    throw new UsageError(`cannot write ${out}: ${(e as Error).message}`);
  }
  io.out(`wrote ${out} (pcap, ${r.packets} packets as the simulator sends them; open it in Wireshark)\n`);
  if (t.header.backend !== "sim")
    io.out(
      `note: recorded on ${t.header.backend}: these are the simulator's packets for the same calls (real rxe's: capture the veth, scripts/pcap-rxe.sh)\n`,
    );
  if (r.lost) io.out(`note: the simulator's log kept only the last packets: the first ${r.lost} are not in the file\n`);
  if (r.skipped)
    io.out(`note: ${r.skipped} packet(s) never left their device (no route, link down) and are not in the file\n`);
  if (r.divergences)
    io.out(`note: the replay differed from the recording in ${r.divergences} result(s) (verbslab replay lists them)\n`);
  return 0;
}

async function cmdReplay(args: string[], io: CliIo): Promise<number> {
  const { pos, flags } = parseFlags("replay", args);
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
    ...(typeof flags.transcript === "string" && { sink: transcriptSink(flags.transcript, pos[0]!) }),
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

/** `verbslab serve`: runs until SIGINT or SIGTERM, then closes the server and the backend process. */
async function cmdServe(args: string[], io: CliIo): Promise<number> {
  const { pos, flags } = parseFlags("serve", args);
  if (pos.length > 0) throw new UsageError(`serve takes no arguments (got "${pos.join(" ")}")`);
  if (flags.backend !== undefined && flags.backend !== "sim" && flags.backend !== "native")
    throw new UsageError(`--backend must be sim or native, not "${String(flags.backend)}"`);
  const backend = flags.backend as "sim" | "native" | undefined;
  const number = (name: string): number | undefined => {
    const v = flags[name];
    if (v === undefined) return undefined;
    const n = Number(v);
    if (typeof v !== "string" || !Number.isInteger(n) || n < 0)
      throw new UsageError(`--${name} must be a whole number, not "${String(v)}"`);
    return n;
  };
  const seed = number("seed");
  const port = number("port");
  const common = {
    ...(backend !== undefined && { backend }),
    ...(seed !== undefined && { seed }),
    ...(typeof flags.data === "string" && { dataDir: flags.data }),
  };
  let close: () => Promise<void>;
  if (flags.jupyterhub === true) {
    if (port !== undefined)
      throw new UsageError("--port is the Hub's to choose (JUPYTERHUB_SERVICE_URL) with --jupyterhub");
    const { startHubLearner } = await import("../classroom/learner-server.js");
    const learner = await startHubLearner(common).catch((err: Error) => err);
    if (learner instanceof Error) {
      // Started by hand, or a Hub that sent something unusable: say what, not a stack.
      io.err(`verbslab serve --jupyterhub: ${learner.message}\n`);
      return 1;
    }
    io.out(`VerbsLab for ${learner.auth.env.user} under JupyterHub: listening on ${learner.web.server.url}\n`);
    close = () => learner.close();
  } else {
    const { startWebMode } = await import("../server/cli.js");
    const web = await startWebMode({ ...common, ...(port !== undefined && { port }) });
    io.out(`VerbsLab web mode: open ${web.server.url}\n`);
    close = () => web.close();
  }
  await new Promise<void>((resolveStop) => {
    const stop = () => resolveStop();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await close();
  return 0;
}

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    if (isCommand(cmd) && rest.some((a) => a === "--help" || a === "-h")) {
      io.out(commandUsage(cmd));
      return 0;
    }
    switch (cmd) {
      case "doctor": {
        const { flags } = parseFlags("doctor", rest);
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
      case "serve":
        return await cmdServe(rest, io);
      case "help": {
        const [topic, ...extra] = rest;
        if (topic === undefined) io.out(USAGE);
        else if (isCommand(topic) && extra.length === 0) io.out(commandUsage(topic));
        else throw new UsageError(`no help for "${rest.join(" ")}": the commands are ${Object.keys(HELP).join(", ")}`);
        return 0;
      }
      case undefined:
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
      if (!e.message.includes("\n")) io.err(`\n${isCommand(cmd) ? commandUsage(cmd) : USAGE}`);
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
