/** The instructor store on both databases: SQLite (sql.js, a file) and PostgreSQL (started here). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProgressEvent } from "./progress-event.js";
import { openStore, type Store } from "./store.js";
import { hasPostgres, startTestPostgres, type TestPostgres } from "./test-postgres.js";

const event = (over: Partial<ProgressEvent>): ProgressEvent => ({
  lessonId: "first-message",
  step: 1,
  passed: false,
  at: 1_000,
  ...over,
});

/** The same behaviour on either database; `reopen` gives a second connection to the same data. */
function storeBehaviour(open: () => Promise<Store>) {
  it("puts each learner at their latest step, with its attempts, time and last failure", async () => {
    const store = await open();
    try {
      await store.record(
        "alice",
        event({ step: 1, passed: false, at: 1_000, failingGoal: "a in RTS", error: "EINVAL" }),
      );
      await store.record("alice", event({ step: 1, passed: true, at: 5_000 }));
      await store.record(
        "alice",
        event({ step: 2, passed: false, at: 6_000, failingGoal: "one completion", failingDetail: "none" }),
      );
      await store.record(
        "alice",
        event({ step: 2, passed: false, at: 9_000, failingGoal: "wr_id 7", error: "IBV_WC_REM_ACCESS_ERR" }),
      );
      await store.record("bob", event({ step: 1, passed: false, at: 2_000, failingGoal: "a in RTS" }));
      await store.record("bob", event({ step: 1, passed: true, at: 4_000 }));
      const rows = await store.learners();
      expect(rows.map((r) => r.learner)).toEqual(["alice", "bob"]);
      expect(rows[0]).toEqual({
        learner: "alice",
        lessonId: "first-message",
        step: 2,
        attempts: 2,
        passed: false,
        firstAt: 6_000,
        lastAt: 9_000,
        failingGoal: "wr_id 7",
        failingDetail: null,
        error: "IBV_WC_REM_ACCESS_ERR",
      });
      // Bob passed step 1 after one failure: the failure stays on show, and the step reads passed.
      expect(rows[1]).toMatchObject({
        step: 1,
        attempts: 2,
        passed: true,
        failingGoal: "a in RTS",
        firstAt: 2_000,
        lastAt: 4_000,
      });
    } finally {
      await store.close();
    }
  });

  it("keeps each learner's latest transcript, and what it has across a reopen", async () => {
    const store = await open();
    try {
      expect(await store.transcript("carol")).toBeNull();
      await store.record("carol", event({ transcript: "first run" }));
      await store.record("carol", event({ step: 3, transcript: "second run 'quoted' \u4e2d\u6587", at: 7 }));
    } finally {
      await store.close();
    }
    const again = await open();
    try {
      expect(await again.transcript("carol")).toEqual({
        content: "second run 'quoted' \u4e2d\u6587",
        lessonId: "first-message",
        step: 3,
        at: 7,
      });
      expect((await again.learners()).find((r) => r.learner === "carol")).toMatchObject({ step: 3, attempts: 1 });
      // Events keep arriving in order after a reopen.
      await again.record("carol", event({ step: 1, at: 1 }));
      expect((await again.learners()).find((r) => r.learner === "carol")).toMatchObject({ step: 1 });
    } finally {
      await again.close();
    }
  });
}

describe("instructor store on SQLite (sql.js)", () => {
  const dir = mkdtempSync(join(tmpdir(), "verbslab-store-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  storeBehaviour(() => openStore(join(dir, "sub", "instructor.sqlite")));
});

describe.skipIf(!hasPostgres)("instructor store on PostgreSQL", { timeout: 120_000 }, () => {
  let pg: TestPostgres;
  beforeAll(async () => {
    pg = await startTestPostgres();
  }, 120_000);
  afterAll(async () => {
    await pg?.stop();
  });
  storeBehaviour(() => openStore(pg.url));
});
