/**
 * The C export of rdma_cm programs, on any machine: lessons 17 and 18 (solutions and
 * break-its) recorded on the simulator become C over librdmacm that compiles with gcc -Wall
 * -Wextra -Werror against Debian's librdmacm-dev, awaits each event the transcript recorded,
 * and reads what librdmacm hands out off the object that holds it. What those programs print
 * on real rxe (fixtures/cm-*.rxe.txt, from c-cm-rxe.test.ts in the lab VM) is compared with
 * the transcripts here.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importProgram, replayProgram } from "../../../lessons/replay.js";
import { createSimBackend } from "../../../sim/index.js";
import { RDMA_CM_EVENT_ESTABLISHED, rdmaEventStr } from "../../../verbs/cm.js";
import { importTranscript, type Transcript, type VerbEvent } from "../transcript.js";
import { usesCm } from "./c-cm.js";
import { compareCOutput } from "./c-output.js";
import { cBuild, toC } from "./c.js";

const lessons = fileURLToPath(new URL("../../../lessons/", import.meta.url));
const PROGRAMS = {
  "17-solution": "17-connecting-with-rdma-cm/step-1.solution.ts",
  "17-own-context": "17-connecting-with-rdma-cm/step-1.break-own-context.ts",
  "17-no-route": "17-connecting-with-rdma-cm/step-1.break-no-route.ts",
  "18-solution": "18-when-rdma-cm-says-no/step-1.solution.ts",
  "18-unacked-destroy": "18-when-rdma-cm-says-no/step-1.break-unacked-destroy.ts",
  "18-padding-in-text": "18-when-rdma-cm-says-no/step-1.break-padding-in-text.ts",
} as const;

const text = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");
const fixture = (name: string) => importTranscript(text(name));

const haveRdmacm = (() => {
  try {
    execFileSync("gcc", ["--version"], { stdio: "ignore" });
    return existsSync("/usr/include/rdma/rdma_cma.h") && existsSync("/usr/include/infiniband/verbs.h");
  } catch {
    return false;
  }
})();
if (!haveRdmacm) console.warn("[c-cm] compile tests SKIPPED: no gcc or no librdmacm-dev headers");

/** A transcript's calls as a learner follows them: verb, outcome, and the event each wait got. */
function outline(t: Transcript): string[] {
  return t.events.flatMap((e) => {
    if (e.kind !== "verb") return [];
    const ev = e.method === "getEvent" ? (e.created?.[0]?.props as { event?: number } | undefined) : undefined;
    return [`${e.seq} ${e.verb} ${e.error ? e.error.code : "ok"}${ev ? ` ${rdmaEventStr(ev.event ?? -1)}` : ""}`];
  });
}

/** The lines of the C program for one transcript step (from its comment to the next one). */
function stepOf(c: string, seq: number): string {
  const start = c.indexOf(`/* ${seq}. `);
  const end = c.indexOf(`/* ${seq + 1}. `, start);
  return c.slice(start, end < 0 ? undefined : end);
}

let recorded: Record<keyof typeof PROGRAMS | "tour" | "mcast", Transcript>;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "verbslab-c-cm-"));
  const out: Partial<Record<keyof typeof PROGRAMS, Transcript>> = {};
  for (const [name, file] of Object.entries(PROGRAMS) as [keyof typeof PROGRAMS, string][]) {
    const r = await replayProgram(createSimBackend({ seed: 1 }), await importProgram(join(lessons, file)), [], {
      name: file,
      seed: 1,
    });
    out[name] = r.transcript;
  }
  const tour = await replayProgram(createSimBackend({ seed: 1 }), (await import("./cm-programs/tour.js")).default, [], {
    name: "app/session/export/cm-programs/tour.ts",
    seed: 1,
  });
  const mcast = await replayProgram(
    createSimBackend({ seed: 1 }),
    (await import("./cm-programs/mcast.js")).default,
    [],
    {
      name: "app/session/export/cm-programs/mcast.ts",
      seed: 1,
    },
  );
  recorded = {
    ...(out as Record<keyof typeof PROGRAMS, Transcript>),
    tour: tour.transcript,
    mcast: mcast.transcript,
  };
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the C export of rdma_cm programs", () => {
  it("the fixtures are what lessons 17 and 18 record now: the same calls, outcomes and events", () => {
    expect(outline(fixture("cm-connect.sim.jsonl"))).toEqual(outline(recorded["17-solution"]));
    expect(outline(fixture("cm-reject.sim.jsonl"))).toEqual(outline(recorded["18-solution"]));
    expect(outline(fixture("cm-tour.sim.jsonl"))).toEqual(outline(recorded.tour));
    expect(outline(fixture("cm-mcast.sim.jsonl"))).toEqual(outline(recorded.mcast));
    expect(recorded.tour.events.at(-1)).toMatchObject({ kind: "end", outcome: "ok" });
    expect(recorded.mcast.events.at(-1)).toMatchObject({ kind: "end", outcome: "ok" });
  });

  it("multicast: joins and leaves the group, and sends to it with remote_qpn 0xffffff", () => {
    const t = recorded.mcast;
    const c = toC(t);
    const seqOf = (method: string) =>
      t.events.find((e): e is VerbEvent => e.kind === "verb" && e.method === method)!.seq;
    expect(stepOf(c, seqOf("joinMulticast"))).toMatch(/rdma_join_multicast\(cmid\d+, mcaddr\d+, NULL\)/);
    expect(c).toMatch(/make_addr\(&mcaddr\d+_ss, "239\.7\.0\.1", 0\)/);
    expect(stepOf(c, seqOf("leaveMulticast"))).toMatch(/rdma_leave_multicast\(cmid\d+, mcaddr\d+\)/);
    expect(stepOf(c, seqOf("postSend"))).toContain("wr.ud.remote_qpn = 0xffffff;");
    expect(c).toContain('inet_pton(AF_INET6, "::ffff:239.7.0.1", ah_attr');
    expect(c).not.toContain("no C equivalent");
  });

  it("UD through the CM: sends with the ah_attr, qp_num and qkey ESTABLISHED carried", () => {
    const t = recorded.tour;
    const c = toC(t);
    const est = t.events.find((e): e is VerbEvent => {
      const p = e.kind === "verb" ? (e.created?.[0]?.props as { event?: number; param?: { ud?: unknown } }) : undefined;
      return p?.event === RDMA_CM_EVENT_ESTABLISHED && p.param?.ud !== undefined;
    });
    expect(est).toBeDefined();
    expect(stepOf(c, est!.seq)).toContain("!= RDMA_CM_EVENT_ESTABLISHED) {");
    // The server's QP by its own object, whatever rxe numbers it: on the simulator both ends'
    // QPs are 0x12 (one per device), and the client must not send to itself.
    const post = t.events.find(
      (e): e is VerbEvent => e.kind === "verb" && e.method === "postSend" && e.target.$handle === 29,
    );
    expect(post).toBeDefined();
    expect(stepOf(c, post!.seq)).toContain("wr.ud.remote_qpn = qp34->qp_num;");
    expect(c).toContain("wr.ud.remote_qkey = 0x1234567;");
    expect(c).toMatch(/inet_pton\(AF_INET6, "::ffff:10\.77\.0\.2", ah_attr\d+\.grh\.dgid\.raw\);/);
    expect(c).toContain("rdma_create_id(cmch1, &cmid23, NULL, RDMA_PS_UDP)");
    expect(c).toMatch(/rdma_getaddrinfo\("10\.77\.0\.2", "7472", &hints\d+, &ai\d+\)/);
    expect(c).toContain("rdma_disconnect(cmid5)");
    expect(c).toContain("rdma_destroy_event_channel(cmch1);");
  });

  it("calls librdmacm for each CM verb of lesson 17, with its arguments, and builds with -lrdmacm -libverbs", () => {
    const t = recorded["17-solution"];
    expect(usesCm(t)).toBe(true);
    const c = toC(t, { fileName: "l17.c" });
    expect(c).toContain("#include <rdma/rdma_cma.h>");
    expect(c).toContain("Build: cc l17.c -lrdmacm -libverbs -o l17");
    expect(c).toContain("rdma_create_id(cmch1, &cmid2, NULL, RDMA_PS_TCP)");
    expect(c).toMatch(/make_addr\(&addr\d+_ss, "10\.77\.0\.2", 7471\);/);
    expect(c).toMatch(/rdma_bind_addr\(cmid2, addr\d+\)/);
    expect(c).toContain("rdma_listen(cmid2, 8)");
    expect(c).toMatch(/rdma_resolve_addr\(cmid5, src\d+, dst\d+, 2000\)/);
    expect(c).toContain("rdma_resolve_route(cmid5, 2000)");
    expect(c).toMatch(/rdma_create_qp\(cmid5, pd9, &init_attr\d+\)/);
    expect(c).toContain("qp11 = rc ? NULL : cmid5->qp;");
    // rdma_conn_param as the program gave it (no private data: none is set).
    const connect = stepOf(c, 18);
    expect(connect).toMatch(/conn_param\d+\.responder_resources = 1;/);
    expect(connect).toMatch(/conn_param\d+\.retry_count = 7;/);
    expect(connect).toMatch(/conn_param\d+\.rnr_retry_count = 7;/);
    expect(connect).not.toContain("private_data");
    expect(connect).toMatch(/rdma_connect\(cmid5, &conn_param\d+\)/);
    expect(stepOf(c, 27)).toMatch(/rdma_accept\(cmid12, &conn_param\d+\)/);
    // Each wait: the recorded timeout, then the recorded event (or stop, naming the one it got).
    const wait = stepOf(c, 19);
    expect(wait).toContain("get_cm_event(cmch1, 2000, &cmev13)");
    expect(wait).toContain("if (cmev13->event != RDMA_CM_EVENT_CONNECT_REQUEST) {");
    expect(wait).toContain(
      'printf("%s: got %s, where the transcript got %s (stopping)\\n", "19. rdma_get_cm_event", rdma_event_str(cmev13->event), "RDMA_CM_EVENT_CONNECT_REQUEST");',
    );
    expect(wait).toContain("if (cmev13->listen_id != cmid2) {");
    expect(c.match(/rdma_ack_cm_event\(cmev\d+\)/g)).toHaveLength(5);
    // The QP states librdmacm made are printed where it made them.
    expect(stepOf(c, 27)).toContain('print_qp_state("qp16", qp16);');
    expect(stepOf(c, 28)).toContain('print_qp_state("qp11", qp11);');
  });

  it("reads what librdmacm hands out off its holder: id->verbs, the CONNECT_REQUEST's child id", () => {
    const c = toC(recorded["17-solution"]);
    // The client's context is librdmacm's, known once ADDR_RESOLVED is in.
    expect(stepOf(c, 8)).toContain("ctx6 = cmid5->verbs;");
    expect(c).not.toContain("ibv_open_device");
    // The server's side is the new id the event carries, on the device the request came in on.
    const req = stepOf(c, 19);
    expect(req.indexOf("cmid12 = cmev13->id;")).toBeGreaterThan(req.indexOf("!= RDMA_CM_EVENT_CONNECT_REQUEST"));
    expect(req).toContain("ctx3 = cmid12->verbs;");
    expect(stepOf(c, 22)).toContain("pd14 = ibv_alloc_pd(ctx3);");
    expect(c).toContain("struct rdma_cm_id *cmid12 = NULL;");
    expect(c).toContain("struct ibv_context *ctx3 = NULL;");
  });

  it("lesson 18: rejects with the private data's bytes; a destroy VerbsLab refused is not called", () => {
    const c = toC(recorded["18-solution"]);
    const bytes = [...new TextEncoder().encode("busy, try later")].map((b) => `0x${b.toString(16).padStart(2, "0")}`);
    expect(c).toContain(`rej_data`);
    expect(c).toContain(`[15] = { ${bytes.join(", ")} };`);
    expect(c).toMatch(/rdma_reject\(cmid12, rej_data\d+, sizeof rej_data\d+\)/);
    expect(c).toMatch(/get_cm_event\(cmch4, 2000, &cmev\d+\)/);
    expect(c).toContain("!= RDMA_CM_EVENT_REJECTED) {");

    const b = recorded["18-unacked-destroy"];
    const refused = b.events.find((e): e is VerbEvent => e.kind === "verb" && e.verb === "rdma_destroy_id")!;
    expect(refused.error?.code).toBe("EBUSY");
    const step = stepOf(toC(b), refused.seq);
    expect(step).toContain("Not called: VerbsLab refused it");
    expect(step).toContain(`report("${refused.seq}. rdma_destroy_id", EBUSY);`);
    expect(step).not.toMatch(/rdma_destroy_id\(/);
  });

  it("a verbs-only transcript stays a libibverbs program", () => {
    const t = fixture("rc-loopback.sim.jsonl");
    expect(usesCm(t)).toBe(false);
    const c = toC(t, { fileName: "rc.c" });
    expect(c).not.toContain("rdma_cma.h");
    expect(c).toContain("Build: cc rc.c -libverbs -o rc");
    expect(cBuild("x.c", { cm: true }).command).toBe("cc x.c -lrdmacm -libverbs -o x");
  });

  it.skipIf(!haveRdmacm)("every export compiles with gcc -Wall -Wextra -Werror against librdmacm", () => {
    for (const [name, t] of Object.entries(recorded)) {
      const src = join(dir, `${name}.c`);
      writeFileSync(src, toC(t));
      const r = spawnSync(
        "gcc",
        ["-std=gnu11", "-Wall", "-Wextra", "-Werror", src, "-lrdmacm", "-libverbs", "-o", join(dir, name)],
        { encoding: "utf8" },
      );
      expect(r.status, `${name}: ${r.stderr}`).toBe(0);
    }
  });

  it.skipIf(!haveRdmacm || existsSync("/dev/infiniband/rdma_cm"))(
    "stops at its first call, saying why, on a machine without rdma_cm",
    () => {
      const src = join(dir, "nocm.c");
      writeFileSync(src, toC(recorded["17-solution"]));
      execFileSync("gcc", [src, "-lrdmacm", "-libverbs", "-o", join(dir, "nocm")]);
      const r = spawnSync(join(dir, "nocm"), { encoding: "utf8" });
      expect(r.status).toBe(1);
      expect(r.stdout).toMatch(
        /^1\. rdma_create_event_channel: failed: .+ \(the transcript succeeded here; stopping\)$/m,
      );
    },
  );
});

describe("rdma_cm programs' output on real rxe", () => {
  // fixtures/cm-*.rxe.txt: what the exports of fixtures/cm-*.sim.jsonl printed in the lab VM
  // (c-cm-rxe.test.ts, Linux 6.1 rxe, rdma-core 44), each exiting 0.
  const connect = text("cm-connect.rxe.txt");
  const reject = text("cm-reject.rxe.txt");

  it("reproduces the transcripts: every event with its param and private data, the states librdmacm made, the completions", () => {
    expect(compareCOutput(fixture("cm-connect.sim.jsonl"), connect)).toEqual([]);
    expect(compareCOutput(fixture("cm-reject.sim.jsonl"), reject)).toEqual([]);
    expect(reject).toContain("event RDMA_CM_EVENT_REJECTED status 28");
    expect(reject).toMatch(/private_data: 62 75 73 79 2c 20 74 72 79 20 6c 61 74 65 72 00 /);
    // The tour (disconnect, TIMEWAIT_EXIT, UD through the CM) and the multicast group, likewise.
    expect(compareCOutput(fixture("cm-tour.sim.jsonl"), text("cm-tour.rxe.txt"))).toEqual([]);
    const mcast = text("cm-mcast.rxe.txt");
    expect(compareCOutput(fixture("cm-mcast.sim.jsonl"), mcast)).toEqual([]);
    expect(mcast).toMatch(
      /event RDMA_CM_EVENT_MULTICAST_JOIN status 0\n  ud: private_data_len 0, qp_num 0xffffff, qkey 0x1234567/,
    );
  });

  it("still matches the transcripts lessons 17 and 18 record now on the simulator", () => {
    expect(compareCOutput(recorded["17-solution"], connect)).toEqual([]);
    expect(compareCOutput(recorded["18-solution"], reject)).toEqual([]);
  });

  it("tells QPs of different devices apart even when they have the same number", () => {
    // On a fresh boot both ends' QPs are 0x11, each on its own device; on a used one they differ.
    const renumbered = connect
      .replace("17. rdma_create_qp: ok\n  qp_num 0x11", "17. rdma_create_qp: ok\n  qp_num 0x5a")
      .replace(
        "cq10: wr_id 2, status success (0), opcode 0, byte_len 18, qp_num 0x11",
        "cq10: wr_id 2, status success (0), opcode 0, byte_len 18, qp_num 0x5a",
      );
    expect(renumbered).not.toBe(connect);
    expect(compareCOutput(fixture("cm-connect.sim.jsonl"), renumbered)).toEqual([]);
  });

  it("reports a different event, status, private data or state librdmacm made", () => {
    const tampered = reject
      .replace("event RDMA_CM_EVENT_REJECTED status 28", "event RDMA_CM_EVENT_UNREACHABLE status -110")
      .replace("private_data: 62 75 73 79", "private_data: 62 75 73 78")
      .replace("qp11 state ERR", "qp11 state INIT");
    const diffs = compareCOutput(fixture("cm-reject.sim.jsonl"), tampered);
    expect(diffs).toHaveLength(3);
    expect(diffs[0]).toBe(
      '#21 rdma_get_cm_event: recorded "event RDMA_CM_EVENT_REJECTED status 28", the program printed "event RDMA_CM_EVENT_UNREACHABLE status -110"',
    );
    expect(diffs[1]).toMatch(/^#21 rdma_get_cm_event: recorded private_data 62 75 73 79 /);
    expect(diffs[2]).toBe("#21 rdma_get_cm_event: librdmacm moved qp11 to ERR, the program printed INIT");
  });
});
