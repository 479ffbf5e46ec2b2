/**
 * The C export of a transcript whose every string is hostile: a learner's device name, log
 * text and attribute keys, or a hand-edited file. Whatever it holds stays inside C string
 * literals and comments: it never becomes code.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createSimBackend } from "../../../sim/index.js";
import rcLoopback from "../../cli/examples/rc-loopback.js";
import { createSession } from "../session.js";
import { importTranscript, type Transcript, type VerbEvent } from "../transcript.js";
import { toC } from "./c.js";

/** Ends strings and comments, splices lines, forms a trigraph and printf directives; PWNED marks it. */
const EVIL = `x"); PWNED(); /* */ PWNED(); // ??/\n\\" PWNED %n%s%p \u0000 é */ PWNED(); /*`;

/** Every string (and object key) in `v`, made hostile. */
function poison(v: unknown): unknown {
  if (typeof v === "string") return EVIL;
  if (Array.isArray(v)) return v.map(poison);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === "$handle" || k === "type" || k === "$sym") out[k] = x;
      else if (k === "$bigint" || k === "$bytes") out[k] = EVIL;
      else out[k] = poison(x);
    }
    return out;
  }
  return v;
}

/** The C source with its string literals, character constants and comments removed: what would run. */
function codeOnly(c: string): string {
  let out = "";
  for (let i = 0; i < c.length;) {
    if (c.startsWith("/*", i)) {
      const end = c.indexOf("*/", i + 2);
      i = end < 0 ? c.length : end + 2;
      out += " ";
    } else if (c.startsWith("//", i)) {
      while (i < c.length && c[i] !== "\n") i++;
    } else if (c[i] === '"' || c[i] === "'") {
      const q = c[i++];
      while (i < c.length && c[i] !== q) i += c[i] === "\\" ? 2 : 1;
      if (c[i - 1] === "\n") throw new Error("a string literal runs across a line");
      i++;
      out += '""';
    } else out += c[i++];
  }
  return out;
}

let t: Transcript;
beforeAll(async () => {
  const s = createSession({ backend: createSimBackend({ seed: 4 }), seed: 4, program: "rc-loopback.ts" });
  await s.run(rcLoopback);
  t = s.transcript();
});

describe("C export of hostile strings", () => {
  it("keeps them in literals and comments in every field it emits", () => {
    const h = structuredClone(t);
    h.header.program = EVIL;
    h.header.created = EVIL;
    for (const e of h.events) {
      if (e.kind === "log") e.message = EVIL;
      if (e.kind === "end") e.error = { name: EVIL, message: EVIL };
      if (e.kind !== "verb") continue;
      const v = e as VerbEvent;
      v.verb = EVIL;
      v.args = poison(v.args) as VerbEvent["args"];
      if (v.method === "modify") (v.args[0] as Record<string, unknown>)[EVIL] = 1;
      v.error = { name: EVIL, message: EVIL, code: EVIL, reason: EVIL } as VerbEvent["error"];
      for (const q of v.qps) if (q.after && q.before) (q.after as { qp_state: unknown }).qp_state = EVIL;
      for (const c of v.completions ?? []) (c.wc as unknown as Record<string, unknown>).status = EVIL;
    }
    // The device name reaches both openDevice emitters (the created context's "opened" line).
    const open = h.events.find((e) => e.kind === "verb" && e.method === "openDevice") as VerbEvent;
    expect(open.args[0]).toBe(EVIL);
    expect(open.created?.length).toBe(1);
    const c = toC(h);
    expect(c).toContain("ibv_get_device_name");
    expect(codeOnly(c)).not.toContain("PWNED");
    expect(codeOnly(c)).not.toMatch(/%n/);
  });

  it.skipIf(!existsSync("/usr/include/infiniband/verbs.h"))("still compiles", () => {
    const h = structuredClone(t);
    h.header.program = EVIL;
    const open = h.events.find((e) => e.kind === "verb" && e.method === "openDevice") as VerbEvent;
    open.args[0] = EVIL;
    for (const e of h.events) if (e.kind === "log") e.message = EVIL;
    const dir = mkdtempSync(join(tmpdir(), "verbslab-c-hostile-"));
    try {
      writeFileSync(join(dir, "prog.c"), toC(h));
      execFileSync("cc", ["-fsyntax-only", "-Wall", "-Werror", "-std=gnu11", "-trigraphs", join(dir, "prog.c")], {
        stdio: "pipe",
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a file naming an object by something other than a handle number", () => {
    const h = structuredClone(t);
    const e = h.events.find((x) => x.kind === "verb" && x.created?.length) as VerbEvent;
    (e.created![0] as { $handle: unknown }).$handle = "1; PWNED()";
    expect(() => toC(h)).toThrow(TypeError);
  });

  it("an rdma_cm transcript's strings (addresses, private data, error text) stay in literals too, and it compiles", () => {
    for (const name of ["cm-connect.sim.jsonl", "cm-reject.sim.jsonl"]) {
      const h = importTranscript(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8"));
      for (const e of h.events) {
        if (e.kind === "log") e.message = EVIL;
        if (e.kind !== "verb") continue;
        e.verb = EVIL;
        e.args = poison(e.args) as VerbEvent["args"];
        // A value claiming more bytes than it holds, and one claiming fewer.
        for (const a of e.args) if (a && typeof a === "object" && "$bytes" in a) (a as { $length: number }).$length = 3;
        if (e.method === "destroy")
          e.error = { name: EVIL, message: EVIL, code: EVIL, reason: EVIL } as VerbEvent["error"];
      }
      const c = toC(h);
      expect(c).toContain("rdma_bind_addr(");
      expect(codeOnly(c)).not.toContain("PWNED");
      expect(codeOnly(c)).not.toMatch(/%n/);
      if (!existsSync("/usr/include/rdma/rdma_cma.h")) continue;
      const dir = mkdtempSync(join(tmpdir(), "verbslab-c-hostile-cm-"));
      try {
        writeFileSync(join(dir, "prog.c"), c);
        execFileSync("cc", ["-fsyntax-only", "-Wall", "-Werror", "-std=gnu11", "-trigraphs", join(dir, "prog.c")], {
          stdio: "pipe",
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});
