import { expect, it } from "vitest";
import { createSession } from "../app/session/session.js";
import { createSimBackend } from "../sim/index.js";
import { evaluateCheck } from "./checks.js";
import { recordFromTranscript } from "./record.js";

it("a wait for a CQ event that timed out does not count as a call that succeeded", async () => {
  const s = createSession({ backend: createSimBackend({ seed: 1 }) });
  const ctx = await s.verbs.openDevice("rxe0");
  const channel = await ctx.createCompChannel();
  await ctx.createCq(16, { channel });
  // Never armed: no event comes, and the wait returns null after its timeout.
  expect(await channel.getCqEvent(10)).toBeNull();
  const run = recordFromTranscript(s.events());
  expect(run.calls.find((c) => c.verb === "ibv_get_cq_event")).toMatchObject({ ok: false });
  const goal = { kind: "verb_count", verb: "ibv_get_cq_event", ok: true, count: { min: 1 } } as const;
  expect(evaluateCheck(goal, run).passed).toBe(false);
  expect(evaluateCheck({ ...goal, ok: false }, run).passed).toBe(true);
});
