/**
 * What a learner program, a transcript file or a hostile argument can do to the session: none
 * of it may crash it, leak into a half-recorded call, or bloat one event past what the UI takes.
 */
import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../sim/index.js";
import { IBV_ACCESS_LOCAL_WRITE, IBV_QPS_INIT, IBV_QPS_RESET, IBV_QPS_RTR, IBV_QPT_RC } from "../../verbs/constants.js";
import { goodModify } from "../../state-machines/qp-paths.js";
import { replayTranscript } from "./replay.js";
import { createSession } from "./session.js";
import rcLoopback from "../cli/examples/rc-loopback.js";
import { exportTranscript } from "./export/index.js";
import {
  importTranscript,
  TranscriptError,
  reproducibleJsonLines,
  toJsonLines,
  WALL_TIME_FIELDS,
  type VerbEvent,
} from "./transcript.js";
import { VERBS } from "./verb-table.js";
import { EVENT_BYTES_MAX } from "./wire.js";

const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };

const verbEvents = (s: { events(): unknown[] }) =>
  s.events().filter((e) => (e as VerbEvent).kind === "verb") as VerbEvent[];

describe("session robustness", () => {
  it("keeps a large MR's contents out of its events: the first bytes and the length, replayable", async () => {
    const lines: string[] = [];
    const s = createSession({ backend: createSimBackend({ seed: 1 }), sink: { append: (l) => void lines.push(l) } });
    const ctx = await s.verbs.openDevice("rxe0");
    const pd = await ctx.allocPd();
    const size = 4 * 1024 * 1024;
    const buf = new Uint8Array(size).fill(0xab);
    const mr = await pd.regMr(buf, IBV_ACCESS_LOCAL_WRITE);
    expect(mr.length).toBe(size);
    const whole = await mr.read(0, size);
    expect(whole.length).toBe(size);
    await mr.write(0, buf);
    // Every line (each one message to the UI) stays near the bound, not 2 × 4 MiB of hex.
    for (const l of lines) expect(l.length).toBeLessThan(2 * EVENT_BYTES_MAX + 4096);
    const reg = verbEvents(s).find((e) => e.method === "regMr")!;
    expect(reg.args[0]).toMatchObject({ $length: size });
    // The transcript still replays: the MR has its length, and its first bytes.
    const t = importTranscript(lines.join(""));
    const r = await replayTranscript(t, createSimBackend({ seed: 1 }));
    expect(r.divergences).toEqual([]);
    const mrNow = r.session.mrBytes(16)[0]!;
    expect([...mrNow.bytes]).toEqual(new Array(16).fill(0xab));
  });

  it("reports a replay whose recorded create now fails as divergences, not a crash", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 2 }) });
    const ctx = await s.verbs.openDevice("rxe0");
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(8);
    const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    const peer = { dgid: (await ctx.queryGid(1, 0)) as string, dest_qp_num: b.qp_num };
    const init = goodModify(IBV_QPT_RC, IBV_QPS_RESET, IBV_QPS_INIT, peer)!;
    await a.modify(init.attr, init.mask);
    const rtr = goodModify(IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, peer)!;
    await a.modify(rtr.attr, rtr.mask);
    const t = s.transcript();
    // The transcript says b was created; on replay its create asks for more WRs than rxe has.
    const creates = t.events.filter((e) => e.kind === "verb" && e.method === "createQp") as VerbEvent[];
    (creates[1]!.args[0] as { cap: { max_send_wr: number } }).cap.max_send_wr = 1 << 30;
    const r = await replayTranscript(t, createSimBackend({ seed: 2 }));
    expect(r.replayed).toBe(t.events.length);
    expect(r.divergences[0]).toMatchObject({ verb: "ibv_create_qp", recorded: "ok", replayed: "EINVAL" });
    // The RTR modify names b's QPN, which the replay does not have: reported, not thrown.
    const rtrSeq = t.events.at(-1)!.seq;
    expect(r.divergences.find((d) => d.seq === rtrSeq)).toMatchObject({
      verb: "ibv_modify_qp",
      replayed: expect.stringMatching(/^not run: the replay has no object/),
    });
  });

  it("dispatches only the table's methods: constructor, toString, __proto__ … name nothing", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 3 }) });
    const ctx = await s.verbs.openDevice("rxe0");
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(4);
    const handles = [0, 1, 2, 3];
    const before = s.events().length;
    for (const h of handles)
      for (const m of ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf", "bytes", "sge", "apply"]) {
        const err = await s.call(h, m, []).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err, `${h}.${m}`).toBeInstanceOf(TypeError);
        expect((err as Error).message).toContain("has no method");
      }
    expect(s.events().length).toBe(before);
    // The objects still work.
    expect(await cq.poll(1)).toEqual([]);
    expect(pd).toBeDefined();
    // The facade forwards exactly the table's methods.
    expect(
      Object.keys(VERBS.qp).every((m) => typeof (pd as unknown as Record<string, unknown>)[m] === "undefined"),
    ).toBe(true);
  });

  it("arguments the model cannot read reach the backend and are recorded like any failed verb", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 3 }) });
    const ctx = await s.verbs.openDevice("rxe0");
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(4);
    const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    const cases: [string, () => Promise<unknown>][] = [
      ["postSend([null])", () => qp.postSend([null] as never)],
      ["postSend(null)", () => qp.postSend(null as never)],
      ["postRecv([null])", () => qp.postRecv([null] as never)],
      ["modify with a bigint mask", () => qp.modify({ qp_state: IBV_QPS_INIT }, 1n as never)],
      ["modify(null, 1)", () => qp.modify(null as never, 1)],
      ["modify with a bigint attribute", () => qp.modify({ qp_state: 1n } as never, 1)],
    ];
    for (const [what, run] of cases) {
      const before = s.events().length;
      const err = await run().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, what).toBeInstanceOf(Error);
      expect(["VerbsError", "TypeError", "RangeError"], what).toContain((err as Error).name);
      // Recorded: one verb event with the backend's error.
      expect(s.events().length, what).toBe(before + 1);
      const e = s.events().at(-1) as VerbEvent;
      expect(e.error?.name, what).toBe((err as Error).name);
    }
    // The QP is still usable and the model still follows it.
    await qp.modify(
      { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: 0 },
      0x1 | 0x10 | 0x20 | 0x8,
    );
    expect(s.qps()[0]).toMatchObject({ state: IBV_QPS_INIT, observed: IBV_QPS_INIT });
  });

  it("same seed, same calls: the transcript is byte-identical but for its marked wall time", async () => {
    const record = async () => {
      const lines: string[] = [];
      const s = createSession({
        backend: createSimBackend({ seed: 11 }),
        seed: 11,
        program: "rc-loopback.ts",
        sink: { append: (l) => void lines.push(l) },
      });
      await s.run(rcLoopback);
      return lines.join("");
    };
    const one = await record();
    await new Promise((r) => setTimeout(r, 5)); // another wall-clock instant
    const two = await record();
    const a = importTranscript(one);
    const b = importTranscript(two);
    expect(reproducibleJsonLines(a)).toBe(reproducibleJsonLines(b));
    expect(reproducibleJsonLines(a)).not.toContain("durationMs");
    expect(reproducibleJsonLines(a)).not.toContain('"created":"20');
    // What was dropped is exactly the marked fields: put back, the files are the originals.
    expect(toJsonLines(a)).toBe(one);
    expect(Object.keys(a.header)).toContain(WALL_TIME_FIELDS.header[0]);
  });

  it("mr.sge checks its arguments: TypeError or RangeError naming the one at fault", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 3 }) });
    const ctx = await s.verbs.openDevice("rxe0");
    const pd = await ctx.allocPd();
    const mr = await pd.regMr(4096, IBV_ACCESS_LOCAL_WRITE);
    expect(mr.sge(4000, 96)).toEqual({ addr: mr.addr + 4000, length: 96, lkey: mr.lkey });
    expect(mr.sge()).toEqual({ addr: mr.addr, length: 4096, lkey: mr.lkey });
    expect(mr.sge(4096)).toMatchObject({ length: 0 });
    const bad: [unknown, unknown, ErrorConstructor, string][] = [
      [-1, undefined, RangeError, "offset"],
      [4097, undefined, RangeError, "offset"],
      [0, 4097, RangeError, "length"],
      [4000, 97, RangeError, "length"],
      [0, -1, RangeError, "length"],
      ["8", undefined, TypeError, "offset"],
      [1.5, undefined, TypeError, "offset"],
      [0, 10n, TypeError, "length"],
      [NaN, undefined, TypeError, "offset"],
    ];
    for (const [o, l, type, name] of bad) {
      const call = () => (mr.sge as (o: unknown, l: unknown) => unknown)(o, l);
      expect(call, `sge(${String(o)}, ${String(l)})`).toThrow(type);
      expect(call).toThrow(name);
    }
  });

  it("deeply nested values: a clear error from the call or the import, never a stack overflow in an export", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 1 }) });
    await s.verbs.openDevice("rxe0");
    let deep: unknown = 1;
    for (let i = 0; i < 5000; i++) deep = [deep];
    await expect(s.verbs.log(deep as never)).rejects.toThrow(TypeError);
    const text = toJsonLines(s.transcript());
    const hostile = text.replace('"args":["rxe0"]', `"args":[${"[".repeat(100_000)}1${"]".repeat(100_000)}]`);
    expect(hostile.length).toBeGreaterThan(200_000);
    const err = (() => {
      try {
        importTranscript(hostile);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(TranscriptError);
    expect(err).toMatchObject({ line: 2 });
    // Within the limit, every export works.
    const fine = importTranscript(text.replace('"args":["rxe0"]', `"args":[${"[".repeat(40)}1${"]".repeat(40)}]`));
    for (const f of ["md", "html", "json", "c"] as const) expect(exportTranscript(fine, f).length).toBeGreaterThan(0);
  });
});
