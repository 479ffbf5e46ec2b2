/**
 * A throwaway PostgreSQL for tests, from Debian's package: initdb in a temp dir and pg_ctl
 * on a free loopback port. PostgreSQL refuses to run as root, so as root (CI) it runs as
 * the package's `postgres` user.
 */
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { freePort } from "./test-hub.js";

const BIN = process.env.VERBSLAB_PG_BIN ?? "/usr/lib/postgresql/15/bin";
export const hasPostgres = existsSync(join(BIN, "initdb")) && existsSync(join(BIN, "pg_ctl"));

export interface TestPostgres {
  /** postgresql://verbslab@127.0.0.1:PORT/postgres */
  readonly url: string;
  stop(): Promise<void>;
}

function uidOf(name: string): number | null {
  try {
    return Number(execFileSync("id", ["-u", name], { encoding: "utf8" }).trim());
  } catch {
    return null;
  }
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), "verbslab-pg-"));
  const asRoot = userInfo().uid === 0;
  const pgUid = asRoot ? uidOf("postgres") : null;
  if (asRoot && pgUid === null) throw new Error("running as root and there is no postgres user to run PostgreSQL as");
  if (pgUid !== null) chownSync(dir, pgUid, pgUid);
  const run = (bin: string, args: string[]) =>
    asRoot
      ? execFileSync("runuser", ["-u", "postgres", "--", join(BIN, bin), ...args], { stdio: "pipe", cwd: dir })
      : execFileSync(join(BIN, bin), args, { stdio: "pipe", cwd: dir });
  const data = join(dir, "data");
  run("initdb", ["-D", data, "-A", "trust", "-U", "verbslab", "--no-sync"]);
  const port = await freePort();
  run("pg_ctl", [
    "-D",
    data,
    "-l",
    join(dir, "log"),
    "-w",
    "-o",
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
    "start",
  ]);
  return {
    url: `postgresql://verbslab@127.0.0.1:${port}/postgres`,
    async stop() {
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
