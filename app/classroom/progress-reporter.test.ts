/** The learner server's progress reporting, against a real HTTP endpoint standing in for the service. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HostCore } from "../backend/host.js";
import { decodeValue, encodeValue } from "../session/wire.js";
import type { Verdict } from "../../lessons/checks.js";
import { reportProgress } from "./progress-reporter.js";
import { progressEventSchema } from "./progress-event.js";

const failing: Verdict = {
  passed: false,
  results: [
    {
      check: { kind: "qp_state", qp: 0, state: "IBV_QPS_RTS", goal: { en: "a ends in RTS", zh: "a 在 RTS" } },
      passed: true,
      detail: "",
    },
    {
      check: { kind: "qp_state", qp: 1, state: "IBV_QPS_RTS", goal: { en: "b ends in RTS", zh: "b 在 RTS" } },
      passed: false,
      detail: "b is in INIT",
    },
  ],
  unexpectedError: { verb: "ibv_modify_qp", code: "EINVAL", message: "missing IBV_QP_DEST_QPN" },
} as unknown as Verdict;

function core(verdict: Verdict): HostCore {
  return {
    async handle(method) {
      if (method === "lessons.check") return encodeValue({ ok: true, result: verdict });
      if (method === "transcript.export")
        return encodeValue({ ok: true, result: { filename: "t.md", mime: "text/markdown", content: "# t" } });
      return encodeValue({ ok: true, result: { method } });
    },
    onEvent: () => () => {},
  };
}

describe("progress reporting", () => {
  let server: Server;
  let url: string;
  const got: { auth?: string; body: unknown }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        got.push({ auth: req.headers.authorization, body: JSON.parse(body) });
        res.writeHead(201).end("{}");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/services/instructor/api/events`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("posts a checked step's first failed goal, error and transcript with the server's token; answers unchanged", async () => {
    got.length = 0;
    const wrapped = reportProgress(core(failing), { eventsUrl: url, token: "server-token" });
    const answer = decodeValue(
      await wrapped.handle("lessons.check", encodeValue({ lessonId: "first-message", step: 2 })),
    );
    expect(answer).toEqual({ ok: true, result: failing });
    await wrapped.idle();
    expect(got).toHaveLength(1);
    expect(got[0]!.auth).toBe("token server-token");
    const event = progressEventSchema.parse(got[0]!.body);
    expect(event).toMatchObject({
      lessonId: "first-message",
      step: 2,
      passed: false,
      failingGoal: "b ends in RTS",
      failingDetail: "b is in INIT",
      error: "ibv_modify_qp: EINVAL: missing IBV_QP_DEST_QPN",
      transcript: "# t",
    });
  });

  it("does not report break-it runs (they fail on purpose) or other requests", async () => {
    got.length = 0;
    const wrapped = reportProgress(core(failing), { eventsUrl: url, token: "t" });
    await wrapped.handle("lessons.check", encodeValue({ lessonId: "first-message", step: 2, breakIt: "x" }));
    await wrapped.handle("gate.state", encodeValue({}));
    await wrapped.idle();
    expect(got).toHaveLength(0);
  });

  it("a service that is down costs the learner nothing", async () => {
    const wrapped = reportProgress(core(failing), { eventsUrl: "http://127.0.0.1:9/nowhere", token: "t" });
    const answer = decodeValue(await wrapped.handle("lessons.check", encodeValue({ lessonId: "a", step: 1 })));
    expect(answer).toMatchObject({ ok: true });
    await wrapped.idle();
  });
});
