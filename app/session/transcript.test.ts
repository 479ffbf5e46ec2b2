import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../sim/index.js";
import { IBV_QPS_INIT, IBV_QPS_RTS } from "../../verbs/constants.js";
import rcLoopback from "../cli/examples/rc-loopback.js";
import { toJson } from "./export/json.js";
import { replayTranscript } from "./replay.js";
import { createSession } from "./session.js";
import {
  importTranscript,
  parseTranscript,
  toJsonLines,
  TranscriptError,
  type Transcript,
  type TranscriptEvent,
} from "./transcript.js";

async function record(seed: number): Promise<Transcript> {
  const s = createSession({ backend: createSimBackend({ seed }), seed, program: "rc-loopback" });
  const r = await s.run(rcLoopback);
  expect(r.outcome).toBe("ok");
  return s.transcript();
}

/** The transcript without what legitimately differs between runs: wall-clock durations. */
function normalized(events: TranscriptEvent[]): unknown[] {
  return events.map((e) => (e.kind === "verb" ? { ...e, durationMs: 0 } : e));
}

describe("transcripts", () => {
  it("round-trip: transcript → JSON → import → replay on the same seed gives the same transcript", async () => {
    const original = await record(7);
    const imported = importTranscript(toJson(original));
    expect(imported).toEqual(original);
    const { session, divergences, replayed } = await replayTranscript(imported, createSimBackend({ seed: 7 }));
    expect(divergences).toEqual([]);
    expect(replayed).toBe(original.events.length);
    expect(normalized(session.events())).toEqual(normalized(original.events));
  });

  it("replays on another seed: keys, addresses and GIDs are remapped, outcomes stay the same", async () => {
    const original = await record(7);
    const { session, divergences } = await replayTranscript(original, createSimBackend({ seed: 99 }));
    expect(divergences).toEqual([]);
    const mrOf = (t: Transcript) =>
      t.events.flatMap((e) => (e.kind === "verb" ? (e.created ?? []) : [])).find((r) => r.type === "mr")!.props!;
    // Different random key bytes and addresses, yet the RDMA WRITE landed the same bytes.
    expect(mrOf(session.transcript()).lkey).not.toBe(mrOf(original).lkey);
    expect(session.events().filter((e) => e.kind === "log")).toEqual(
      original.events.filter((e) => e.kind === "log").map((e) => ({ ...e, clock: expect.any(Number) })),
    );
  });

  it("undo: replaying up to an event recreates the QPs as they were then", async () => {
    const original = await record(7);
    // The last event where the first QP reached INIT, before the second QP moved.
    const upTo = original.events.find(
      (e) => e.kind === "verb" && e.qps.some((q) => q.after?.qp_state === IBV_QPS_INIT),
    )!.seq;
    const { session } = await replayTranscript(original, createSimBackend({ seed: 7 }), { upTo });
    expect(session.events()).toHaveLength(upTo);
    expect(session.qps().map((q) => q.observed)).toEqual([IBV_QPS_INIT, 0]);
    // The replayed session goes on from there: the rest of the original can be replayed into a fresh one.
    const full = await replayTranscript(original, createSimBackend({ seed: 7 }));
    expect(full.session.qps().map((q) => q.state)).toEqual([IBV_QPS_RTS, IBV_QPS_RTS]);
  });

  it("reads JSON lines back, and the JSON export too", async () => {
    const t = await record(2);
    expect(parseTranscript(toJsonLines(t))).toEqual(t);
    expect(importTranscript(toJsonLines(t))).toEqual(t);
  });

  describe("import names the bad line and field", () => {
    const good = async () => toJsonLines(await record(2)).split("\n");
    const fails = (text: string) => {
      try {
        importTranscript(text);
      } catch (e) {
        return e as TranscriptError;
      }
      throw new Error("expected the import to fail");
    };

    it("a header of another schema or version", async () => {
      const lines = await good();
      const h = JSON.parse(lines[0]!);
      let e = fails([JSON.stringify({ ...h, version: 3 }), ...lines.slice(1)].join("\n"));
      expect(e).toBeInstanceOf(TranscriptError);
      expect(e).toMatchObject({ line: 1, field: "version" });
      e = fails([JSON.stringify({ ...h, schema: "x" }), ...lines.slice(1)].join("\n"));
      expect(e).toMatchObject({ line: 1, field: "schema" });
    });

    it("an event with a wrong field", async () => {
      const lines = await good();
      const ev = JSON.parse(lines[3]!);
      const bad = [...lines];
      bad[3] = JSON.stringify({ ...ev, args: "nope" });
      expect(fails(bad.join("\n"))).toMatchObject({ line: 4, field: "args" });
      bad[3] = JSON.stringify({ ...ev, seq: 10 });
      expect(fails(bad.join("\n"))).toMatchObject({ line: 4, field: "seq" });
      bad[3] = JSON.stringify({ ...ev, kind: "dance" });
      expect(fails(bad.join("\n"))).toMatchObject({ line: 4, field: "kind" });
    });

    it("a line cut short by a crash, and an empty file", async () => {
      const lines = (await good()).filter(Boolean);
      const torn = [...lines.slice(0, -1), lines.at(-1)!.slice(0, 20)].join("\n");
      const e = fails(torn);
      expect(e.line).toBe(lines.length);
      expect(e.message).toMatch(/cut short/);
      expect(fails("")).toMatchObject({ line: 1 });
    });

    it("a JSON export with a bad event names its line as in JSON lines", async () => {
      const t = await record(2);
      const doc = JSON.parse(toJson(t));
      doc.events[1].qps = {};
      expect(fails(JSON.stringify(doc))).toMatchObject({ line: 3, field: "qps" });
    });
  });
});
