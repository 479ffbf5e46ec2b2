import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../sim/index.js";
import rcLoopback from "../cli/examples/rc-loopback.js";
import { createSession } from "./session.js";
import type { PendingCall, Session } from "./session-types.js";

/** Resolves with the next call that waits at the gate. */
function nextPending(s: Session): Promise<PendingCall> {
  return new Promise((resolve) => {
    if (s.gate.pending) return resolve(s.gate.pending);
    const off = s.gate.subscribe((p) => {
      if (p) {
        off();
        resolve(p);
      }
    });
  });
}

const verbCount = (s: Session) => s.events().filter((e) => e.kind === "verb").length;

describe("the step gate", () => {
  it("holds each verb until step, without running it", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 1 }), step: true });
    const run = s.run(rcLoopback);
    const p1 = await nextPending(s);
    expect(p1).toMatchObject({ seq: 1, verb: "ibv_open_device", method: "openDevice", args: ["rxe0"] });
    expect(verbCount(s)).toBe(0);
    s.gate.step();
    const p2 = await nextPending(s);
    expect(p2).toMatchObject({ seq: 2, verb: "ibv_query_gid" });
    expect(verbCount(s)).toBe(1);
    s.gate.continue();
    expect((await run).outcome).toBe("ok");
    expect(s.gate.mode).toBe("run");
  });

  it("runs to the next postSend, then to the next poll", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 1 }), step: true });
    const run = s.run(rcLoopback);
    await nextPending(s);
    s.gate.runTo("postSend");
    const p = await nextPending(s);
    expect(p.method).toBe("postSend");
    // Everything before it ran: the bring-up and the postRecv are in the transcript.
    expect(s.events().at(-1)).toMatchObject({ kind: "verb", verb: "ibv_post_recv" });
    s.gate.runTo("poll");
    const q = await nextPending(s);
    expect(q.method).toBe("pollWait");
    s.gate.continue();
    expect((await run).outcome).toBe("ok");
  });

  it("stop fails the waiting verb, ends the program as stopped, and records nothing for it", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 1 }), step: true });
    const run = s.run(rcLoopback);
    await nextPending(s);
    s.gate.step();
    await nextPending(s);
    s.gate.stop();
    const r = await run;
    expect(r.outcome).toBe("stopped");
    expect(verbCount(s)).toBe(1);
    expect(s.events().at(-1)).toMatchObject({ kind: "end", outcome: "stopped" });
    await expect(s.verbs.sleep(1)).rejects.toMatchObject({ name: "SessionStoppedError" });
  });

  it("pause switches a free run to stepping at the next verb", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 1 }) });
    s.gate.pause();
    const run = s.run(rcLoopback);
    const p = await nextPending(s);
    expect(p.seq).toBe(1);
    s.gate.continue();
    expect((await run).outcome).toBe("ok");
  });
});
