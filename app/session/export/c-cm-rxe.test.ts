/**
 * VM only (`npm run test:rxe`): the C export of rdma_cm transcripts, compiled against
 * librdmacm and run on real rxe, server and client in one single-threaded process. The
 * transcripts are lesson 17's solution (listen, connect, accept, one SEND) and lesson 18's
 * (a server that rejects with private data), and cm-programs/tour.ts (rdma_getaddrinfo, addresses,
 * rdma_init_qp_attr, disconnect and TIMEWAIT_EXIT, UD through the CM) and cm-programs/mcast.ts
 * (a group joined on rxe1, one datagram from rxe0 to it, the leave), recorded on the simulator (fixtures/cm-*.sim.jsonl,
 * kept equal to what the lessons record by c-cm.test.ts). Each program must exit 0 and print
 * what its transcript recorded: every event, its param and private data, the QP states
 * librdmacm made, the completions. Its output is kept in .vm/c-cm/ (fixtures/cm-connect.rxe.txt
 * and cm-reject.rxe.txt, which c-cm.test.ts compares on any machine, are copies of it).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { rdmaEventStr, RDMA_CM_EVENT_ROUTE_RESOLVED } from "../../../verbs/cm.js";
import { importTranscript, type Transcript, type VerbEvent } from "../transcript.js";
import { compareCOutput } from "./c-output.js";
import { toC } from "./c.js";

const inVm = process.env.VERBSLAB_IN_RXE_VM === "1";
if (!inVm) console.warn("[c-cm-rxe] SKIPPED: runs only in the lab VM (scripts/rxe-vm, npm run test:rxe)");

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const fixture = (name: string) =>
  importTranscript(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8"));

/** The events a transcript got, by name, in order. */
const recordedEvents = (t: Transcript) =>
  t.events
    .filter((e): e is VerbEvent => e.kind === "verb" && e.method === "getEvent")
    .map((e) => rdmaEventStr((e.created?.[0]?.props as { event?: number } | undefined)?.event ?? -1));

/** The events a program printed, by name, in order. */
const printedEvents = (out: string) =>
  [...out.matchAll(/^\d+\. rdma_get_cm_event: event (\S+) status/gm)].map((m) => m[1]);

describe.skipIf(!inVm)("exported rdma_cm programs on real rxe", () => {
  const dir = mkdtempSync(join(tmpdir(), "verbslab-c-cm-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Compiles the export of `t` (gcc -Wall -Werror, -lrdmacm -libverbs) and runs it. */
  function run(name: string, t: Transcript): { status: number | null; out: string } {
    const src = join(dir, `${name}.c`);
    writeFileSync(src, toC(t, { fileName: `${name}.c` }));
    execFileSync(
      "gcc",
      ["-std=gnu11", "-Wall", "-Wextra", "-Werror", src, "-lrdmacm", "-libverbs", "-o", join(dir, name)],
      {
        stdio: "pipe",
      },
    );
    const r = spawnSync(join(dir, name), { encoding: "utf8", timeout: 120_000 });
    return { status: r.status, out: r.stdout + r.stderr };
  }

  for (const [name, file] of [
    ["cm-connect", "cm-connect.sim.jsonl"],
    ["cm-reject", "cm-reject.sim.jsonl"],
    ["cm-tour", "cm-tour.sim.jsonl"],
    ["cm-mcast", "cm-mcast.sim.jsonl"],
  ] as const) {
    it(`${name}: exits 0 and prints the events, states and completions its transcript recorded`, () => {
      const t = fixture(file);
      const { status, out } = run(name, t);
      mkdirSync(join(repo, ".vm", "c-cm"), { recursive: true });
      writeFileSync(join(repo, ".vm", "c-cm", `${name}.rxe.txt`), out);
      expect(status, out).toBe(0);
      expect(printedEvents(out)).toEqual(recordedEvents(t));
      expect(compareCOutput(t, out), out).toEqual([]);
    }, 300_000);
  }

  it("stops, naming the event it got, where that is not the one the transcript recorded", () => {
    const t = structuredClone(fixture("cm-connect.sim.jsonl"));
    const first = t.events.find((e): e is VerbEvent => e.kind === "verb" && e.method === "getEvent")!;
    (first.created![0]!.props as { event: number }).event = RDMA_CM_EVENT_ROUTE_RESOLVED;
    const { status, out } = run("cm-wrong-event", t);
    expect(status, out).toBe(1);
    expect(out).toContain(
      `${first.seq}. rdma_get_cm_event: got RDMA_CM_EVENT_ADDR_RESOLVED, where the transcript got RDMA_CM_EVENT_ROUTE_RESOLVED (stopping)`,
    );
  }, 300_000);
});
