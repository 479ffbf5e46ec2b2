import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimBackend } from "../../../sim/index.js";
import { IBV_QPS_INIT, IBV_QPT_RC, IBV_QP_STATE } from "../../../verbs/constants.js";
import rcLoopback from "../../cli/examples/rc-loopback.js";
import { createSession } from "../session.js";
import { importTranscript, type Transcript } from "../transcript.js";
import { compareCOutput } from "./c-output.js";
import { exportTranscript, toC, toHtml, toJson, toMarkdown } from "./index.js";

let t: Transcript;
let failing: Transcript;

beforeAll(async () => {
  const s = createSession({ backend: createSimBackend({ seed: 4 }), seed: 4, program: "rc-loopback.ts" });
  await s.run(rcLoopback);
  t = s.transcript();
  // A run with an error and a model warning in it.
  const f = createSession({ backend: createSimBackend({ seed: 4 }), seed: 4 });
  await f.run(async (verbs) => {
    const ctx = await verbs.openDevice("rxe0");
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(2);
    const cap = { max_send_wr: 1, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
    const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    await qp.modify({ qp_state: IBV_QPS_INIT }, IBV_QP_STATE);
  });
  failing = f.transcript();
});

describe("Markdown", () => {
  it("has a section per verb with the call, the state changes and the completions", () => {
    const md = toMarkdown(t);
    const verbs = t.events.filter((e) => e.kind === "verb").length;
    expect(md.match(/^## \d+\. /gm)).toHaveLength(verbs);
    expect(md).toContain("await qp5.modify({ qp_state: IBV_QPS_INIT");
    expect(md).toContain("| qp_state | IBV_QPS_RESET | IBV_QPS_INIT |");
    expect(md).toMatch(/cq3: wr_id 2, status IBV_WC_SUCCESS, opcode IBV_WC_RECV, byte_len 11/);
    expect(md).toContain("log: RDMA WRITE landed: hello, rdma");
    expect(md).toContain("## End: ok");
  });

  it("shows an error with the model's agreement", () => {
    const md = toMarkdown(failing);
    expect(md).toContain("**EINVAL: RESET → INIT needs");
    expect(md).toContain("model: agrees");
    expect(md).toContain("## End: error");
  });
});

describe("HTML", () => {
  it("is one self-contained file: no scripts, no external resources", () => {
    const html = toHtml(t);
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).not.toMatch(/<script|<link|src=|https?:\/\//i);
    expect(html.match(/<section class="step[^"]*" id="step-\d+"/g)).toHaveLength(
      t.events.filter((e) => e.kind === "verb").length,
    );
    expect(html).toContain("<td><code>qp_state</code></td><td>IBV_QPS_RESET</td><td>IBV_QPS_INIT</td>");
    expect(html).toContain("status IBV_WC_SUCCESS");
  });

  it("escapes what the program wrote", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 1 }) });
    await s.run(async (v) => {
      await v.log("<img src=x onerror=alert(1)>");
    });
    const html = toHtml(s.transcript());
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(html).not.toContain("<img");
  });

  it("marks an error step", () => {
    expect(toHtml(failing)).toMatch(/<section class="step error" id="step-5">/);
  });
});

describe("JSON", () => {
  it("imports back to the same transcript", () => {
    expect(importTranscript(toJson(t))).toEqual(t);
    expect(exportTranscript(t, "json")).toBe(toJson(t));
    expect(() => exportTranscript(t, "pdf" as "md")).toThrow(TypeError);
  });
});

describe("C", () => {
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
    dir = mkdtempSync(join(tmpdir(), "verbslab-c-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("performs the same verbs with the same attributes, naming keys, addresses and QPNs by their objects", () => {
    const c = toC(t);
    expect(c).toContain("#include <infiniband/verbs.h>");
    expect(c).toContain("qp5 = ibv_create_qp(pd2, &");
    expect(c).toMatch(/\.dest_qp_num = qp6->qp_num;/);
    expect(c).toMatch(/\.lkey = mr4->lkey/);
    expect(c).toMatch(/wr\.rdma\.rkey = mr4->rkey;/);
    expect(c).toMatch(/wr\.rdma\.remote_addr = \(uintptr_t\)buf_mr4 \+ 2048;/);
    expect(c).toMatch(/ibv_query_gid\(ctx1, 1, 0, &attr\d+\.ah_attr\.grh\.dgid\);/);
    expect(c).toContain(
      "IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_RQ_PSN | IBV_QP_MIN_RNR_TIMER | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_DEST_QPN",
    );
    expect(c).toContain("/* expected: qp5 RESET -> INIT */");
    expect(c).toContain('print_qp_state("qp5", qp5);');
    expect(c.match(/ibv_modify_qp\(/g)).toHaveLength(6);
    expect(c.match(/ibv_post_send\(/g)).toHaveLength(2);
  });

  it.skipIf(!haveCc)("compiles with cc prog.c -libverbs (and -Wall -Werror)", () => {
    for (const [name, tr] of [
      ["rc", t],
      ["failing", failing],
    ] as const) {
      const src = join(dir, `${name}.c`);
      writeFileSync(src, toC(tr));
      execFileSync("cc", ["-Wall", "-Werror", src, "-libverbs", "-o", join(dir, name)], { stdio: "pipe" });
      expect(existsSync(join(dir, name))).toBe(true);
    }
  });

  it.skipIf(!haveCc)("stops with a clear message where this machine has no device", () => {
    const src = join(dir, "run.c");
    writeFileSync(src, toC(t));
    execFileSync("cc", [src, "-libverbs", "-o", join(dir, "run")]);
    let out = "";
    try {
      out = execFileSync(join(dir, "run"), { encoding: "utf8" });
    } catch (e) {
      out = String((e as { stdout?: string }).stdout);
    }
    // Here (no RDMA) it stops at the first verb; on rxe it goes on (see scripts/rxe-vm).
    expect(out).toMatch(/1\. ibv_open_device: (opened rxe0|no such device: rxe0 \(stopping\))/);
  });
});

describe("C output on real rxe", () => {
  // fixtures/rc-loopback.rxe.txt is what `verbslab export --format c` of fixtures/rc-loopback.sim.jsonl
  // printed when run on real rxe in the lab VM (scripts/rxe-vm/probe.sh, Linux 6.1, rdma-core 44).
  const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");
  const rxe = fixture("rc-loopback.rxe.txt");

  it("reproduces the recorded transcript: outcomes, states and completions", () => {
    const recorded = importTranscript(fixture("rc-loopback.sim.jsonl"));
    expect(compareCOutput(recorded, rxe)).toEqual([]);
  });

  it("still matches a transcript recorded now on the simulator", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 9 }) });
    await s.run(rcLoopback);
    expect(compareCOutput(s.transcript(), rxe)).toEqual([]);
  });

  it("a transcript recorded on rxe (native backend) matches its C program's output there, errors included", () => {
    // when-it-breaks.rxe.txt: the C export of when-it-breaks.sim.jsonl run in the lab VM; the native
    // transcript was recorded in the same VM boot by `verbslab run --backend native`.
    const native = importTranscript(fixture("when-it-breaks.native.jsonl"));
    expect(native.header.backend).toBe("native");
    expect(native.events.filter((e) => e.kind === "verb" && e.error)).toHaveLength(2);
    expect(compareCOutput(native, fixture("when-it-breaks.rxe.txt"))).toEqual([]);
  });

  it("reports a difference in a state or a completion", () => {
    const recorded = importTranscript(fixture("rc-loopback.sim.jsonl"));
    const tampered = rxe
      .replace("qp6 state RTS", "qp6 state ERR")
      .replace("status success (0), opcode 1,", "status remote access error (10), opcode 1,");
    const diffs = compareCOutput(recorded, tampered);
    expect(diffs).toHaveLength(2);
    expect(diffs[0]).toMatch(/^#13 ibv_modify_qp: recorded state RTS, the program printed ERR$/);
    expect(diffs[1]).toMatch(/^#20 verbslab_poll_wait: recorded completions \[3\/0\/1\/11\/qp5\]/);
  });
});
