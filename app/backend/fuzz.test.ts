/**
 * A seeded fuzz of the bridge as the host sees it: random request names and params (junk,
 * and plausible ones: verbs.call on live handles), validated by the contract and handled by
 * the backend service in-process, for a few seconds. Every answer is a result or a
 * well-formed error; nothing throws anything internal, and the service keeps answering.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../sim/index.js";
import { Rng } from "../../sim/rng.js";
import { errorToData } from "../../verbs/errors.js";
import { parseRequest, requestSchemas } from "../bridge/contract.js";
import { decodeValue, encodeValue } from "../session/wire.js";
import { methodsOf } from "../session/verb-table.js";
import type { HandleType } from "../session/wire.js";
import { INTERNAL } from "../session/fuzz.test-util.js";
import { createBackendService } from "./service.js";

const TYPES: HandleType[] = ["verbs", "context", "pd", "mr", "cq", "channel", "qp", "ah"];
/** Requests that would pause the gate: a paused verbs.call waits for a step that the fuzz never sends. */
const PAUSING = new Set(["gate.pause", "gate.runTo"]);

describe("bridge fuzz", () => {
  it("random requests get results or well-formed errors, and the service keeps answering", async () => {
    const rng = new Rng(Number(process.env.FUZZ_SEED ?? 7));
    const pick = <T>(xs: readonly T[]): T => xs[rng.u32() % xs.length]!;
    const svc = createBackendService(
      { backend: "sim", seed: 3, dataDir: mkdtempSync(join(tmpdir(), "verbslab-fuzz-")) },
      {
        provider: {
          sim: (seed) => createSimBackend(seed === undefined ? {} : { seed }),
          native: async () => ({ unavailable: "no RDMA in this test" }),
        },
        emit: () => {},
        sessionChanged: () => {},
      },
    );
    await svc.start();
    const junk = (depth = 0): unknown => {
      switch (rng.u32() % (depth > 3 ? 7 : 10)) {
        case 0:
          return null;
        case 1:
          return rng.u32() % 10;
        case 2:
          return pick([-1, 1.5, NaN, Infinity, 2 ** 53, 1e300]);
        case 3:
          return pick(["", "rxe0", "md", "c", "__proto__", "constructor", "x".repeat(300)]);
        case 4:
          return pick([true, false]);
        case 5:
          return 10n;
        case 6:
          return new Uint8Array(rng.u32() % 8);
        case 7:
          return Array.from({ length: rng.u32() % 4 }, () => junk(depth + 1));
        default: {
          const o: Record<string, unknown> = {};
          for (let i = rng.u32() % 4; i > 0; i--)
            o[pick(["format", "id", "handle", "method", "args", "stepping", "runId", "ok", "content", "__proto__"])] =
              junk(depth + 1);
          return o;
        }
      }
    };
    const methods = [...Object.keys(requestSchemas).filter((m) => !PAUSING.has(m)), "nope", "__proto__", "toString"];
    const deadline = Date.now() + 3000;
    let requests = 0;
    let answered = 0;
    while (Date.now() < deadline && requests < 3000) {
      requests++;
      const method = rng.u32() % 3 === 0 ? "verbs.call" : pick(methods);
      let params: unknown = junk();
      if (method === "verbs.call" && rng.u32() % 2 === 0) {
        const type = pick(TYPES);
        params = {
          handle: rng.u32() % 12,
          method: pick(methodsOf(type)),
          args: Array.from({ length: rng.u32() % 3 }, () => junk()),
        };
      }
      if ((method === "run.start" || method === "transcript.replay") && params && typeof params === "object")
        (params as { stepping?: boolean }).stepping = false;
      const what = `#${requests} ${method} ${JSON.stringify(encodeValue(params)).slice(0, 120)}`;
      try {
        // What the host does: the wire encoding, then the contract's validation, then the backend.
        const parsed = parseRequest(method, decodeValue(encodeValue(params)));
        if (PAUSING.has(parsed.method)) continue;
        const r = await Promise.race([
          Promise.resolve().then(() => svc.handle(parsed.method, parsed.params)),
          new Promise((resolve) => setTimeout(() => resolve("pending"), 50)),
        ]);
        encodeValue(r ?? null); // every result can go back over the bridge
        answered++;
      } catch (e) {
        expect(e, what).toBeInstanceOf(Error);
        const d = errorToData(e);
        expect(typeof d.name, what).toBe("string");
        expect(d.message, `${what}: ${d.name}: ${d.message}`).not.toMatch(INTERNAL);
      }
    }
    expect(requests).toBeGreaterThan(200);
    expect(answered).toBeGreaterThan(0);
    // Still serving.
    expect(await svc.handle("gate.state", {})).toMatchObject({ mode: expect.any(String) });
  }, 20_000);
});
