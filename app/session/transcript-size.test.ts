/**
 * A transcript's cost per verb: compact lines (version 2 leaves out the snapshot halves a reader
 * can rebuild) that import back to the same full events, old version 1 files that still import,
 * and a session that keeps only its recent events in memory when its file holds the rest.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../sim/index.js";
import rcLoopback from "../cli/examples/rc-loopback.js";
import { createSession } from "./session.js";
import { appendFileSink, readTranscriptFile } from "./transcript-file.js";
import { importTranscript, toJsonLines, TranscriptError, type TranscriptEvent } from "./transcript.js";

const fixture = (name: string) => readFileSync(join(import.meta.dirname, "export", "fixtures", name), "utf8");

describe("transcript size", () => {
  it("writes compact lines that import back to the very events the session recorded", async () => {
    const lines: string[] = [];
    const s = createSession({ backend: createSimBackend({ seed: 2 }), sink: { append: (l) => lines.push(l) } });
    expect((await s.run(rcLoopback)).outcome).toBe("ok");
    const file = lines.join("");
    const full = [s.header, ...s.events()].map((l) => JSON.stringify(l) + "\n").join("");
    // rc-loopback: ~1,560 bytes a verb written in full, ~2.5× less compact (snapshots are most of it).
    expect(file.length).toBeLessThan(full.length / 2);
    expect(JSON.parse(lines[0]!).version).toBe(2);
    const back = importTranscript(file);
    expect(back.events).toEqual(s.events());
    expect(importTranscript(toJsonLines(back)).events).toEqual(s.events());
    // What the learner sees is there: a modify's QP state before and after.
    const modify = back.events.find((e) => e.kind === "verb" && e.method === "modify");
    expect(modify?.kind === "verb" && modify.qps[0]!.before?.qp_state).toBe(0);
  });

  it("still imports version 1 transcripts (every snapshot in full)", () => {
    const t = importTranscript(fixture("rc-loopback.sim.jsonl"));
    expect(t.header.version).toBe(1);
    const verbs = t.events.filter((e) => e.kind === "verb");
    expect(verbs.length).toBeGreaterThan(10);
    for (const e of verbs) for (const q of e.qps) expect(q.before !== undefined && q.after !== undefined).toBe(true);
  });

  it("names the line of a compact snapshot whose QP was never snapshotted before", () => {
    const lines = toJsonLines({ header: importTranscript(fixture("rc-loopback.sim.jsonl")).header, events: [] });
    const bad = JSON.stringify({
      kind: "verb",
      seq: 1,
      verb: "ibv_query_qp",
      target: { $handle: 5, type: "qp" },
      method: "query",
      args: [],
      clock: 0,
      clockAdvance: 0,
      durationMs: 0,
      qps: [{ qp: 5, qp_num: 17, changes: [] }],
    });
    let err: unknown;
    try {
      importTranscript(lines + bad + "\n");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TranscriptError);
    expect(err).toMatchObject({ line: 2, field: "qps[0].before" });
  });

  it("keeps only recent events in memory when the file holds the rest, and reads them back whole", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "verbslab-")), "t.jsonl");
    const file = appendFileSink(path);
    let reads = 0;
    const sink = { append: file.append, close: file.close, read: () => (reads++, file.read!()) };
    const s = createSession({ backend: createSimBackend({ seed: 3 }), sink, keepEvents: 10 });
    const seen: TranscriptEvent[] = [];
    s.subscribe((e) => seen.push(e));
    const r = await s.run(async (v) => {
      for (let i = 0; i < 5; i++) await rcLoopback(v);
    });
    expect(r.outcome).toBe("ok");
    expect(seen.length).toBeGreaterThan(50);
    expect(s.eventCount()).toBe(seen.length);
    // The session held at most 2 × keepEvents event objects: events() reads the file back, in full.
    expect(s.events()).toEqual(seen);
    expect(reads).toBe(1);
    expect(readTranscriptFile(path).events).toEqual(seen);
    expect(s.transcript().events.map((e) => e.seq)).toEqual(seen.map((e, i) => i + 1));
  });
});
