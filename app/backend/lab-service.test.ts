/**
 * The Network panel's requests (lab.get, lab.set, lab.clear) in the backend service: the link
 * set before a run is the first recorded event of that run's transcript, every later run starts
 * on it until it is cleared, bad values are EINVAL naming the field, and a native backend off the
 * lab VM refuses (EPERM, saying why) instead of doing nothing.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../sim/index.js";
import { NativeLabLink } from "../../native/lab-link.js";
import type { BridgeEvents, EventName, RequestResults } from "../bridge/contract.js";
import { createVerbsFacade } from "../session/facade.js";
import type { VerbEvent } from "../session/transcript.js";
import type { VerbsBackend } from "../../verbs/backend.js";
import { CLEAN_LINK } from "../../verbs/lab.js";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_RC,
  IBV_SEND_SIGNALED,
  IBV_WC_RETRY_EXC_ERR,
  IBV_WC_SUCCESS,
  IBV_WR_SEND,
} from "../../verbs/constants.js";
import { goodModify } from "../../state-machines/qp-paths.js";
import { createBackendService } from "./service.js";

function service(native?: () => VerbsBackend) {
  const logs: string[] = [];
  const svc = createBackendService(
    { backend: "sim", seed: 3, dataDir: mkdtempSync(join(tmpdir(), "verbslab-lab-")) },
    {
      provider: {
        sim: (seed) => createSimBackend(seed === undefined ? {} : { seed }),
        native: async () => (native ? { backend: native() } : { unavailable: "no RDMA in this test" }),
      },
      emit: <E extends EventName>(event: E, payload: BridgeEvents[E]) => {
        if (event === "log") logs.push((payload as BridgeEvents["log"]).text);
      },
      sessionChanged: () => {},
    },
  );
  const ask = <M extends keyof RequestResults>(method: M, params: unknown) =>
    svc.handle(method, params) as Promise<RequestResults[M]>;
  return { svc, ask, logs };
}

type Ask = ReturnType<typeof service>["ask"];

/** One run: an RC SEND from a QP on rxe0 to one on rxe1 (timeout 12, retry_cnt 1); the sender's completion status. */
async function sendAcross(ask: Ask): Promise<number> {
  const { runId } = await ask("run.start", { stepping: false, program: "send across" });
  const v = createVerbsFacade(
    { call: async (handle, method, args) => (await ask("verbs.call", { handle, method, args })).value },
    "sim",
  );
  const cap = { max_send_wr: 4, max_recv_wr: 4, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const ends = [];
  for (const dev of ["rxe0", "rxe1"]) {
    const ctx = await v.openDevice(dev);
    const pd = await ctx.allocPd();
    const cq = await ctx.createCq(8);
    const mr = await pd.regMr(64, IBV_ACCESS_LOCAL_WRITE);
    const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
    ends.push({ gid: await ctx.queryGid(1, 1), cq, mr, qp });
  }
  const [a, b] = ends as [(typeof ends)[0], (typeof ends)[0]];
  for (const [me, peer] of [
    [a, b],
    [b, a],
  ] as const)
    for (const [from, next] of [
      [IBV_QPS_RESET, IBV_QPS_INIT],
      [IBV_QPS_INIT, IBV_QPS_RTR],
      [IBV_QPS_RTR, IBV_QPS_RTS],
    ] as const) {
      const m = goodModify(IBV_QPT_RC, from, next, { dgid: peer.gid, dest_qp_num: peer.qp.qp_num })!;
      // GID index 1 is rxe's IPv4-mapped one, the address each side's dgid names.
      if (next === IBV_QPS_RTR) m.attr.ah_attr!.grh!.sgid_index = 1;
      if (next === IBV_QPS_RTS) Object.assign(m.attr, { timeout: 12, retry_cnt: 1 });
      await me.qp.modify(m.attr, m.mask);
    }
  await b.qp.postRecv({ wr_id: 2, sg_list: [b.mr.sge(0, 64)] });
  await a.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 8)] });
  const [wc] = await a.cq.pollWait(1, 5000);
  await ask("run.end", { runId, ok: true });
  return wc!.status;
}

const verbsOf = async (ask: Ask) =>
  (await ask("transcript.get", {})).events.filter((e): e is VerbEvent => e.kind === "verb").map((e) => e.verb);

describe("the Network panel's requests", () => {
  it("blocks UDP 4791 for the runs that follow, recorded first in each run's transcript, until cleared", async () => {
    const { svc, ask } = service();
    await svc.start();
    expect(await ask("lab.get", {})).toEqual({ backend: "sim", link: CLEAN_LINK, faults: null });

    const set = await ask("lab.set", { faults: { blockRoceUdp: true } });
    expect(set).toEqual({
      backend: "sim",
      link: { ...CLEAN_LINK, blockRoceUdp: true },
      faults: { blockRoceUdp: true },
    });
    // Recorded at once in the session the run will take.
    expect(await verbsOf(ask)).toEqual(["verbslab_set_link"]);

    expect(await sendAcross(ask)).toBe(IBV_WC_RETRY_EXC_ERR);
    const first = await verbsOf(ask);
    expect(first[0]).toBe("verbslab_set_link");
    expect(first.filter((v) => v === "verbslab_set_link")).toHaveLength(1);

    // Exported and replayed, the run keeps its link: the replay ends the same way.
    const json = (await ask("transcript.export", { format: "json" })).content;
    await ask("transcript.import", { content: json });
    expect((await ask("transcript.replay", {})).divergences).toEqual([]);
    const replayed = (await ask("transcript.get", {})).events as VerbEvent[];
    expect(replayed[0]!.verb).toBe("verbslab_set_link");
    expect(replayed.flatMap((e) => e.completions ?? []).map((c) => c.wc.status)).toContain(IBV_WC_RETRY_EXC_ERR);

    // The next run gets a fresh session, which begins on the same link.
    expect(await sendAcross(ask)).toBe(IBV_WC_RETRY_EXC_ERR);
    const t = await ask("transcript.get", {});
    const head = t.events[0] as VerbEvent;
    expect(head).toMatchObject({ verb: "verbslab_set_link", args: [{ blockRoceUdp: true }] });
    expect(head.result).toMatchObject({ blockRoceUdp: true });

    // Cleared after a run: the link is clean now, and the next run starts with nothing to set.
    expect(await ask("lab.clear", {})).toEqual({ backend: "sim", link: CLEAN_LINK, faults: null });
    expect(await sendAcross(ask)).toBe(IBV_WC_SUCCESS);
    expect(await verbsOf(ask)).not.toContain("verbslab_set_link");
  });

  it("merges what is set in turns; a bad value is EINVAL naming the field and changes nothing", async () => {
    const { svc, ask } = service();
    await svc.start();
    await ask("lab.set", { faults: { loss: 0.01, mtu: { rxe1: 1200 } } });
    await ask("lab.set", { faults: { delay: 5, mtu: { rxe0: 4000 } } });
    const bad = await ask("lab.set", { faults: { reorder: 2 } }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: "EINVAL", attribute: "reorder" });
    const info = await ask("lab.get", {});
    expect(info.faults).toEqual({ loss: 0.01, delay: 5, mtu: { rxe0: 4000, rxe1: 1200 } });
    expect(info.link).toEqual({
      loss: 0.01,
      delay: 5,
      reorder: 0,
      mtu: { rxe0: 4000, rxe1: 1200 },
      blockRoceUdp: false,
      dropPsn: null,
      wire: "rxe",
    });
    // The refused call is in the transcript too, as a failed verbslab_set_link.
    const last = (await ask("transcript.get", {})).events.at(-1) as VerbEvent;
    expect(last).toMatchObject({ verb: "verbslab_set_link", error: { code: "EINVAL" } });
  });

  it("refuses while a program runs", async () => {
    const { svc, ask } = service();
    await svc.start();
    const { runId } = await ask("run.start", { stepping: false });
    await expect(ask("lab.set", { faults: { loss: 0.1 } })).rejects.toMatchObject({ name: "RunInProgressError" });
    await ask("run.end", { runId, ok: true });
    expect((await ask("lab.get", {})).link).toEqual(CLEAN_LINK);
  });

  it("native off the lab VM: EPERM with the reason, before and after a run, and nothing kept", async () => {
    // The simulator's verbs with native's lab link: the refusal is native/lab-link.ts's own check.
    const { svc, ask } = service(() =>
      Object.assign(createSimBackend({ seed: 1 }), { kind: "native" as const, lab: new NativeLabLink() }),
    );
    await svc.start();
    await ask("lab.set", { faults: { loss: 0.5 } });
    await ask("backend.choose", { kind: "native" });
    for (const when of ["fresh", "after a run"]) {
      const err = await ask("lab.set", { faults: { blockRoceUdp: true } }).catch((e: unknown) => e);
      expect(err, when).toMatchObject({ code: "EPERM" });
      expect((err as Error).message, when).toMatch(/only on the lab network VerbsLab creates/);
      const info = await ask("lab.get", {});
      expect(info, when).toEqual({ backend: "native", link: CLEAN_LINK, faults: null });
      if (when === "fresh")
        await ask("run.end", await ask("run.start", { stepping: false }).then((r) => ({ ...r, ok: true })));
    }
  });
});
