import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTranscript } from "../session/transcript.js";
import { main, type CliIo } from "./main.js";

const example = new URL("./examples/rc-loopback.ts", import.meta.url).pathname;
const launcher = new URL("./verbslab.mjs", import.meta.url).pathname;

function io(lines: string[] = []): CliIo & { stdout: string; stderr: string } {
  const it = lines[Symbol.iterator]();
  const o = {
    stdout: "",
    stderr: "",
    out: (s: string) => void (o.stdout += s),
    err: (s: string) => void (o.stderr += s),
    lines: {
      next: async () => {
        const r = it.next();
        return r.done ? { done: true as const, value: undefined } : { done: false as const, value: r.value };
      },
    },
  };
  return o;
}

const haveCc = (() => {
  try {
    execFileSync("cc", ["--version"], { stdio: "ignore" });
    return existsSync("/usr/include/infiniband/verbs.h");
  } catch {
    return false;
  }
})();

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "verbslab-cli-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("verbslab run", () => {
  it("runs a program on the simulator, prints each verb, and writes the transcript as it goes", async () => {
    const out = join(dir, "run.jsonl");
    const o = io();
    const code = await main(["run", example, "--backend", "sim", "--seed", "3", "--transcript", out], o);
    expect(o.stderr).toBe("");
    expect(code).toBe(0);
    expect(o.stdout).toMatch(/^#1 verbs\.openDevice\("rxe0"\) → ctx1$/m);
    expect(o.stdout).toContain("log: RDMA WRITE landed: hello, rdma");
    expect(o.stdout).toMatch(/✓ .*rc-loopback\.ts: ok on sim, 23 event\(s\) \(#1–#23: 20 verb\(s\), 2 log\(s\), end\)/);
    expect(o.stdout).toMatch(/0 model disagreement\(s\), transcript in .*run\.jsonl$/m);
    const t = parseTranscript(readFileSync(out, "utf8"));
    expect(t.header).toMatchObject({ backend: "sim", seed: 3 });
    expect(t.events.filter((e) => e.kind === "verb")).toHaveLength(20);
  });

  it("numbers its summary as the transcript and export do (log lines and the end take numbers too)", async () => {
    const out = join(dir, "numbers.jsonl");
    const o = io();
    expect(await main(["run", example, "--transcript", out], o)).toBe(0);
    const t = parseTranscript(readFileSync(out, "utf8"));
    const verbs = t.events.filter((e) => e.kind === "verb");
    const [, events, last, verbCount] = /ok on sim, (\d+) event\(s\) \(#1–#(\d+): (\d+) verb\(s\)/.exec(o.stdout)!;
    // The last event's number is the count (what export says), and the last verb printed is within it.
    expect(Number(events)).toBe(t.events.length);
    expect(Number(last)).toBe(t.events.at(-1)!.seq);
    expect(Number(verbCount)).toBe(verbs.length);
    const lastPrinted = Number([...o.stdout.matchAll(/^#(\d+) /gm)].at(-1)![1]);
    expect(lastPrinted).toBe(verbs.at(-1)!.seq);
    expect(lastPrinted).toBeLessThanOrEqual(Number(last));
    const e = io();
    expect(await main(["export", out, "-o", join(dir, "numbers.md")], e)).toBe(0);
    expect(e.stdout).toContain(`(md, ${events} events)`);
  });

  it("steps: one key per verb, then stop", async () => {
    const o = io(["", "", "q"]);
    const code = await main(["run", example, "--step", "--quiet"], o);
    expect(code).toBe(130);
    expect(o.stdout.match(/⏸ #\d+/g)).toEqual(["⏸ #1", "⏸ #2", "⏸ #3"]);
    expect(o.stdout).toMatch(/stopped on sim, 3 event\(s\) \(#1–#3: 2 verb\(s\), end\)/);
  });

  it("says what was wrong and what to do", async () => {
    let o = io();
    expect(await main(["run", join(dir, "missing.ts")], o)).toBe(2);
    expect(o.stderr).toMatch(/no such script: .*missing\.ts/);
    o = io();
    expect(await main(["run", example, "--backend", "gpu"], o)).toBe(2);
    expect(o.stderr).toContain('--backend must be sim or native, not "gpu"');
    o = io();
    const noDefault = join(dir, "nodefault.mjs");
    writeFileSync(noDefault, "export const x = 1;\n");
    expect(await main(["run", noDefault], o)).toBe(2);
    expect(o.stderr).toContain("has no default export");
    o = io();
    expect(await main(["frobnicate"], o)).toBe(2);
    expect(o.stderr).toContain('unknown command "frobnicate"');
  });

  it("exits 1 and names the error when the program fails", async () => {
    const bad = join(dir, "bad.mjs");
    writeFileSync(bad, 'export default async function (verbs) { await verbs.openDevice("mlx5_9"); }\n');
    const o = io();
    expect(await main(["run", bad, "--quiet"], o)).toBe(1);
    expect(o.stderr).toMatch(/VerbsError: ibv_open_device: ENODEV/);
  });
});

describe("verbslab export", () => {
  it("writes each format from a transcript, inferring it from -o", async () => {
    const t = join(dir, "exp.jsonl");
    expect(await main(["run", example, "--quiet", "--transcript", t], io())).toBe(0);
    for (const f of ["md", "html", "json", "c"]) {
      const o = io();
      const file = join(dir, `exp.${f}`);
      expect(await main(["export", t, "-o", file], o)).toBe(0);
      expect(o.stdout).toContain(`wrote ${file} (${f}`);
      expect(existsSync(file)).toBe(true);
    }
    expect(readFileSync(join(dir, "exp.c"), "utf8")).toContain("ibv_modify_qp(qp5");
    const o = io();
    expect(await main(["export", t, "--format", "md"], o)).toBe(0);
    expect(o.stdout).toMatch(/^# VerbsLab transcript/);
  });

  it("the C build line names the file it is in, and its binary; on stdout, the prog.c it says to save as", async () => {
    const t = join(dir, "cname.jsonl");
    expect(await main(["run", example, "--quiet", "--transcript", t], io())).toBe(0);
    mkdirSync(join(dir, "sub"), { recursive: true });
    const file = join(dir, "sub", "foo.c");
    const o = io();
    expect(await main(["export", t, "-o", file], o)).toBe(0);
    const c = readFileSync(file, "utf8");
    expect(c).toContain(" * Build: cc foo.c -libverbs -o foo     Run: ./foo");
    expect(c).not.toMatch(/prog\.c|\.\/prog\b/);
    expect(o.stdout).toContain(`build it with: cc ${file} -libverbs -o ${join(dir, "sub", "foo")}\n`);
    for (const argv of [
      ["export", t, "--format", "c"],
      ["export", t, "--format", "c", "-o", "-"],
    ]) {
      const s = io();
      expect(await main(argv, s)).toBe(0);
      expect(s.stdout).toContain(
        " * Build (save this output as prog.c first): cc prog.c -libverbs -o prog     Run: ./prog",
      );
      expect(existsSync("-")).toBe(false);
    }
  });

  it.skipIf(!haveCc)("the build line in an exported file builds it", async () => {
    const t = join(dir, "cbuild.jsonl");
    expect(await main(["run", example, "--quiet", "--transcript", t], io())).toBe(0);
    const work = join(dir, "cbuild");
    mkdirSync(work);
    expect(await main(["export", t, "-o", join(work, "loopback.c")], io())).toBe(0);
    const line = /Build: (cc .*?)     Run/.exec(readFileSync(join(work, "loopback.c"), "utf8"))![1]!;
    execFileSync("sh", ["-c", line], { cwd: work, stdio: "pipe" });
    expect(existsSync(join(work, "loopback"))).toBe(true);
  });

  it("writes the packets as a pcap (from -o's .pcap or --format pcap), and refuses stdout for it", async () => {
    const t = join(dir, "pcap.jsonl");
    expect(await main(["run", example, "--quiet", "--transcript", t], io())).toBe(0);
    const file = join(dir, "run.pcap");
    const o = io();
    expect(await main(["export", t, "-o", file], o)).toBe(0);
    const bytes = readFileSync(file);
    expect(bytes.readUInt32LE(0)).toBe(0xa1b2c3d4);
    expect(bytes.readUInt32LE(20)).toBe(1); // LINKTYPE_ETHERNET
    // rc-loopback: a SEND and a WRITE between two QPs of rxe0, each ACKed.
    const packets = Number(/\((?:pcap), (\d+) packets/.exec(o.stdout)?.[1]);
    expect(packets).toBe(4);
    expect(await main(["export", t, "--format", "pcap", "-o", join(dir, "other.out")], io())).toBe(0);
    expect(readFileSync(join(dir, "other.out")).equals(bytes)).toBe(true);
    const s = io();
    expect(await main(["export", t, "--format", "pcap"], s)).toBe(2);
    expect(s.stderr).toContain("a pcap is binary: name the file to write with -o");
  });

  it("reports a bad transcript by line and field", async () => {
    const t = join(dir, "broken.jsonl");
    writeFileSync(
      t,
      '{"kind":"header","schema":"verbslab.transcript","version":1,"created":"x","backend":"sim"}\n{"kind":"verb"}\n',
    );
    const o = io();
    expect(await main(["export", t, "--format", "md"], o)).toBe(2);
    expect(o.stderr).toContain('transcript line 2, field "seq"');
    expect(await main(["export", t], io())).toBe(2);
  });
});

describe("verbslab help", () => {
  const commands = ["doctor", "run", "export", "replay"];

  it.each(commands)(
    "%s --help, -h and help <cmd>: its own usage, every option with its default, an example, exit 0",
    async (cmd) => {
      const outputs: string[] = [];
      for (const argv of [
        [cmd, "--help"],
        [cmd, "-h"],
        ["help", cmd],
        [cmd, "some.jsonl", "--help"],
      ]) {
        const o = io();
        expect(await main(argv, o), argv.join(" ")).toBe(0);
        expect(o.stderr).toBe("");
        outputs.push(o.stdout);
      }
      expect(new Set(outputs).size).toBe(1);
      const text = outputs[0]!;
      expect(text).toMatch(new RegExp(`^usage: verbslab ${cmd} `));
      expect(text).toMatch(new RegExp(`example:\\n  verbslab ${cmd}`));
      const options = text.split("options:\n")[1]!.split("\n\n")[0]!.split("\n");
      for (const line of options.filter((l) => !l.includes("--help"))) expect(line).toMatch(/\(default: [^)]+\)$/);
    },
  );

  it("names each option the command parses", async () => {
    const o = io();
    await main(["run", "--help"], o);
    for (const flag of ["--backend", "--device", "--seed", "--step", "--transcript", "--quiet"])
      expect(o.stdout).toContain(flag);
    const r = io();
    await main(["replay", "--help"], r);
    for (const flag of ["--backend", "--seed", "--up-to", "--transcript", "--quiet"]) expect(r.stdout).toContain(flag);
    const e = io();
    await main(["export", "--help"], e);
    for (const flag of ["--format", "-o, --output"]) expect(e.stdout).toContain(flag);
  });

  it("verbslab --help and verbslab help list the commands (exit 0); a bare verbslab or help for nothing exits 2", async () => {
    for (const argv of [["--help"], ["-h"], ["help"]]) {
      const o = io();
      expect(await main(argv, o)).toBe(0);
      for (const c of [...commands, "help"]) expect(o.stdout).toMatch(new RegExp(`^  ${c} `, "m"));
    }
    expect(await main([], io())).toBe(2);
    const o = io();
    expect(await main(["help", "frobnicate"], o)).toBe(2);
    expect(o.stderr).toContain('no help for "frobnicate"');
  });

  it("an unknown option says which, and shows that command's usage", async () => {
    const o = io();
    expect(await main(["export", "x.jsonl", "--bogus"], o)).toBe(2);
    expect(o.stderr).toContain("unknown option --bogus (options: --format, -o, --output, --help)");
    expect(o.stderr).toContain("usage: verbslab export");
  });
});

describe("where verbslab writes", () => {
  it("nowhere unasked: run, replay, export and doctor without an output option leave the working directory empty", async () => {
    const cwd = join(dir, "cwd");
    mkdirSync(cwd);
    const t = join(dir, "asked.jsonl");
    const driver = join(dir, "driver.mts");
    writeFileSync(
      driver,
      `import { main } from ${JSON.stringify(new URL("./main.ts", import.meta.url).pathname)};
const io = { out: () => {}, err: (s: string) => process.stderr.write(s), lines: null };
const codes = [];
codes.push(await main(["run", ${JSON.stringify(example)}, "--quiet"], io));
codes.push(await main(["run", ${JSON.stringify(example)}, "--quiet", "--transcript", ${JSON.stringify(t)}], io));
codes.push(await main(["replay", ${JSON.stringify(t)}, "--quiet"], io));
for (const f of ["md", "html", "json", "c"]) codes.push(await main(["export", ${JSON.stringify(t)}, "--format", f], io));
codes.push(await main(["export", ${JSON.stringify(t)}, "--format", "c", "-o", "-"], io));
await main(["doctor"], io);
await main(["doctor", "--json"], io);
console.log(JSON.stringify(codes));
process.exit();
`,
    );
    // tsx by absolute URL: the working directory has no node_modules.
    const tsx = import.meta.resolve("tsx");
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", tsx, driver], {
      cwd,
      timeout: 60_000,
    });
    expect(JSON.parse(stdout)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(existsSync(t)).toBe(true);
    expect(readdirSync(cwd)).toEqual([]);
  });
});

describe("where verbslab will not write", () => {
  it("over its own input: the script, the recording being replayed, the transcript being exported", async () => {
    const script = join(dir, "keep.mjs");
    const code = 'export default async function (verbs) { await verbs.openDevice("rxe0"); }\n';
    writeFileSync(script, code);
    let o = io();
    expect(await main(["run", script, "--transcript", script], o)).toBe(2);
    expect(o.stderr).toContain(`--transcript ${script} is the file being read`);
    expect(readFileSync(script, "utf8")).toBe(code);

    const t = join(dir, "keep.jsonl");
    expect(await main(["run", script, "--quiet", "--transcript", t], io())).toBe(0);
    const recorded = readFileSync(t, "utf8");
    o = io();
    expect(await main(["replay", t, "--quiet", "--transcript", t], o)).toBe(2);
    expect(o.stderr).toContain("is the file being read");
    o = io();
    expect(await main(["export", t, "--format", "json", "-o", t], o)).toBe(2);
    expect(o.stderr).toContain("is the transcript being read");
    expect(readFileSync(t, "utf8")).toBe(recorded);
  });

  it("where it cannot: exit 2 naming the path, no crash", async () => {
    const nowhere = join(dir, "no-such-dir", "x.jsonl");
    const t = join(dir, "keep2.jsonl");
    expect(await main(["run", example, "--quiet", "--transcript", t], io())).toBe(0);
    let o = io();
    expect(await main(["run", example, "--quiet", "--transcript", nowhere], o)).toBe(2);
    expect(o.stderr).toContain(`cannot write the transcript to ${nowhere}`);
    o = io();
    expect(await main(["export", t, "-o", join(dir, "no-such-dir", "x.md")], o)).toBe(2);
    expect(o.stderr).toContain("cannot write");
  });
});

describe("the verbslab launcher", () => {
  it('runs a TypeScript script outside any package, importing from "verbslab"', async () => {
    const script = join(dir, "outside.ts");
    writeFileSync(
      script,
      `import { IBV_QPT_UD, type Verbs } from "verbslab";
export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe1");
  await verbs.log("UD is", IBV_QPT_UD, ctx.device.name);
}
`,
    );
    const { stdout } = await promisify(execFile)(process.execPath, [launcher, "run", script, "--quiet"], {
      timeout: 60_000,
    });
    expect(stdout).toContain("log: UD is 4 rxe1");
    expect(stdout).toMatch(/✓ .*outside\.ts: ok on sim, 3 event\(s\) \(#1–#3: 1 verb\(s\), 1 log\(s\), end\)/);
  });
});
