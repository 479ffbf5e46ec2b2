/**
 * The instructor service's database: every progress event the learners' servers reported, and
 * each learner's latest transcript. SQLite by default (sql.js: SQLite compiled to wasm, no
 * native download; the whole file is rewritten, atomically, after each write), PostgreSQL
 * (`pg`, pure JS) when the location is a `postgres://` or `postgresql://` URL — as JupyterHub
 * itself does. One schema and the same queries on both (`?` placeholders, numbered for pg).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import type { ProgressEvent } from "./progress-event.js";

const require = createRequire(import.meta.url);

/** Where a learner is: their latest (lesson, step), and how it went there. */
export interface LearnerRow {
  learner: string;
  lessonId: string;
  step: number;
  /** Checked runs of this step. */
  attempts: number;
  /** The step was passed (its last run met every goal). */
  passed: boolean;
  /** First run of this step, and the latest, ms since the epoch. */
  firstAt: number;
  lastAt: number;
  /** The latest failing run of this step: its first failed goal, what it saw, and the error thrown. */
  failingGoal: string | null;
  failingDetail: string | null;
  error: string | null;
}

export interface Store {
  /** `postgres` or `sqlite`, for messages. */
  readonly kind: "sqlite" | "postgres";
  record(learner: string, event: ProgressEvent): Promise<void>;
  /** Every learner who reported anything, by name. */
  learners(): Promise<LearnerRow[]>;
  /** The learner's latest transcript (Markdown), or null. */
  transcript(learner: string): Promise<{ content: string; lessonId: string; step: number; at: number } | null>;
  close(): Promise<void>;
}

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS progress_events (
     learner TEXT NOT NULL,
     lesson_id TEXT NOT NULL,
     step INTEGER NOT NULL,
     passed INTEGER NOT NULL,
     failing_goal TEXT,
     failing_detail TEXT,
     error TEXT,
     at BIGINT NOT NULL,
     seq BIGINT NOT NULL
   )`,
  `CREATE INDEX IF NOT EXISTS progress_events_learner ON progress_events (learner, lesson_id, step)`,
  `CREATE TABLE IF NOT EXISTS transcripts (
     learner TEXT PRIMARY KEY,
     lesson_id TEXT NOT NULL,
     step INTEGER NOT NULL,
     content TEXT NOT NULL,
     at BIGINT NOT NULL
   )`,
];

/** Per learner and step: runs, first and last, and the last pass; the latest step per learner is picked in JS. */
const STEPS = `SELECT learner, lesson_id, step, COUNT(*) AS attempts, MIN(at) AS first_at, MAX(at) AS last_at,
  MAX(seq) AS last_seq FROM progress_events GROUP BY learner, lesson_id, step`;
const LAST_RUN = `SELECT passed FROM progress_events WHERE learner = ? AND lesson_id = ? AND step = ? ORDER BY seq DESC LIMIT 1`;
const LAST_FAILURE = `SELECT failing_goal, failing_detail, error FROM progress_events
  WHERE learner = ? AND lesson_id = ? AND step = ? AND passed = 0 ORDER BY seq DESC LIMIT 1`;
const INSERT = `INSERT INTO progress_events (learner, lesson_id, step, passed, failing_goal, failing_detail, error, at, seq)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const UPSERT_TRANSCRIPT = `INSERT INTO transcripts (learner, lesson_id, step, content, at) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (learner) DO UPDATE SET lesson_id = excluded.lesson_id, step = excluded.step,
  content = excluded.content, at = excluded.at`;
const TRANSCRIPT = `SELECT lesson_id, step, content, at FROM transcripts WHERE learner = ?`;

type Row = Record<string, unknown>;

/** The two databases behind one tiny surface: run a statement, or get its rows. */
interface Sql {
  run(sql: string, params?: unknown[]): Promise<void>;
  all(sql: string, params?: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

// The parts of sql.js and pg used here (neither ships its own types).
interface SqlJsDatabase {
  run(sql: string, params?: unknown[]): void;
  prepare(sql: string): {
    bind(params: unknown[]): void;
    step(): boolean;
    getAsObject(): Row;
    free(): void;
  };
  export(): Uint8Array;
  close(): void;
}
type InitSqlJs = () => Promise<{ Database: new (data?: Uint8Array) => SqlJsDatabase }>;
interface PgPool {
  query(sql: string, params?: unknown[]): Promise<{ rows: Row[] }>;
  end(): Promise<void>;
  on(event: "error", listener: (err: Error) => void): void;
}
type PgModule = { Pool: new (options: { connectionString: string; max?: number }) => PgPool };

async function openSqlite(file: string): Promise<Sql> {
  const initSqlJs = require("sql.js") as InitSqlJs;
  const SQL = await initSqlJs();
  const db = new SQL.Database(existsSync(file) ? readFileSync(file) : undefined);
  mkdirSync(dirname(file), { recursive: true });
  const save = () => {
    // sql.js keeps the database in memory: write it out whole, replacing the file in one rename.
    writeFileSync(file + ".tmp", db.export());
    renameSync(file + ".tmp", file);
  };
  return {
    async run(sql, params = []) {
      db.run(sql, params);
      save();
    },
    async all(sql, params = []) {
      const stmt = db.prepare(sql);
      try {
        stmt.bind(params);
        const rows: Row[] = [];
        while (stmt.step()) rows.push(stmt.getAsObject());
        return rows;
      } finally {
        stmt.free();
      }
    },
    async close() {
      db.close();
    },
  };
}

async function openPostgres(url: string): Promise<Sql> {
  const { Pool } = require("pg") as PgModule;
  const pool = new Pool({ connectionString: url, max: 4 });
  pool.on("error", (err) => console.error(`instructor: PostgreSQL connection error: ${err.message}`));
  const numbered = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  };
  return {
    async run(sql, params = []) {
      await pool.query(numbered(sql), params);
    },
    async all(sql, params = []) {
      return (await pool.query(numbered(sql), params)).rows;
    },
    close: () => pool.end(),
  };
}

/** Whether a store location is a PostgreSQL URL (else a SQLite file path). */
export const isPostgresUrl = (location: string) => /^postgres(ql)?:\/\//.test(location);

/** Opens (creating its tables if needed) the store at `location`: a SQLite file, or a PostgreSQL URL. */
export async function openStore(location: string): Promise<Store> {
  const kind = isPostgresUrl(location) ? "postgres" : "sqlite";
  const sql = kind === "postgres" ? await openPostgres(location) : await openSqlite(location);
  for (const statement of SCHEMA) await sql.run(statement);
  // Events are ordered by when they arrived (learners' clocks may differ); resumes after a restart.
  let seq = Number((await sql.all(`SELECT MAX(seq) AS seq FROM progress_events`))[0]?.seq ?? 0);
  // One write at a time: sql.js's save and the seq counter are not for concurrent writers.
  let writes: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = writes.then(work);
    writes = next.catch(() => {});
    return next;
  };
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    kind,
    record: (learner, e) =>
      serial(async () => {
        await sql.run(INSERT, [
          learner,
          e.lessonId,
          e.step,
          e.passed ? 1 : 0,
          e.failingGoal ?? null,
          e.failingDetail ?? null,
          e.error ?? null,
          e.at,
          ++seq,
        ]);
        if (e.transcript !== undefined)
          await sql.run(UPSERT_TRANSCRIPT, [learner, e.lessonId, e.step, e.transcript, e.at]);
      }),
    async learners() {
      const latest = new Map<string, Row>();
      for (const row of await sql.all(STEPS)) {
        const name = String(row.learner);
        const seen = latest.get(name);
        if (!seen || Number(row.last_seq) > Number(seen.last_seq)) latest.set(name, row);
      }
      const rows: LearnerRow[] = [];
      for (const [learner, row] of [...latest].sort(([a], [b]) => a.localeCompare(b))) {
        const key = [learner, row.lesson_id, row.step];
        const [last] = await sql.all(LAST_RUN, key);
        const [failure] = await sql.all(LAST_FAILURE, key);
        rows.push({
          learner,
          lessonId: String(row.lesson_id),
          step: Number(row.step),
          attempts: Number(row.attempts),
          passed: Number(last?.passed) === 1,
          firstAt: Number(row.first_at),
          lastAt: Number(row.last_at),
          failingGoal: text(failure?.failing_goal),
          failingDetail: text(failure?.failing_detail),
          error: text(failure?.error),
        });
      }
      return rows;
    },
    async transcript(learner) {
      const [row] = await sql.all(TRANSCRIPT, [learner]);
      if (!row) return null;
      return {
        content: String(row.content),
        lessonId: String(row.lesson_id),
        step: Number(row.step),
        at: Number(row.at),
      };
    },
    async close() {
      await writes;
      await sql.close();
    },
  };
}
