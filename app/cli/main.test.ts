import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
    expect(o.stdout).toMatch(/✓ .*rc-loopback\.ts: ok, 20 verb\(s\) on sim, 0 model disagreement\(s\)/);
    const t = parseTranscript(readFileSync(out, "utf8"));
    expect(t.header).toMatchObject({ backend: "sim", seed: 3 });
    expect(t.events.filter((e) => e.kind === "verb")).toHaveLength(20);
  });

  it("steps: one key per verb, then stop", async () => {
    const o = io(["", "", "q"]);
    const code = await main(["run", example, "--step", "--quiet"], o);
    expect(code).toBe(130);
    expect(o.stdout.match(/⏸ #\d+/g)).toEqual(["⏸ #1", "⏸ #2", "⏸ #3"]);
    expect(o.stdout).toMatch(/stopped, 2 verb\(s\)/);
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
    expect(stdout).toMatch(/✓ .*outside\.ts: ok, 1 verb/);
  });
});
