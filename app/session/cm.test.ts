import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../sim/index.js";
import { IBV_QPS_INIT, IBV_QPS_RTS } from "../../verbs/constants.js";
import { RDMA_PS_UDP } from "../../verbs/cm.js";
import lesson17 from "../../lessons/17-connecting-with-rdma-cm/step-1.solution.js";
import { createSession } from "./session.js";
import type { VerbEvent } from "./transcript.js";

const verbEvents = (s: { events(): unknown[] }) =>
  s.events().filter((e) => (e as VerbEvent).kind === "verb") as VerbEvent[];

describe("the session with rdma_cm", () => {
  it("records librdmacm's QP transitions with the CM call they happened in, marked as made by librdmacm", async () => {
    const s = createSession({ backend: createSimBackend({ seed: 3 }) });
    await lesson17(s.verbs as never);
    const evs = verbEvents(s);
    const made = evs.flatMap((e) => (e.librdmacm ?? []).map((t) => `${e.verb}:${t.by}:${t.from}->${t.to}`));
    expect(made).toEqual([
      `rdma_create_qp:ucma_init_conn_qp:0->${IBV_QPS_INIT}`,
      `rdma_create_qp:ucma_init_conn_qp:0->${IBV_QPS_INIT}`,
      `rdma_accept:ucma_modify_qp_rtr:${IBV_QPS_INIT}->${IBV_QPS_INIT}`,
      `rdma_accept:ucma_modify_qp_rtr:${IBV_QPS_INIT}->2`,
      `rdma_accept:ucma_modify_qp_rts:2->${IBV_QPS_RTS}`,
      `rdma_get_cm_event:ucma_modify_qp_rtr:${IBV_QPS_INIT}->${IBV_QPS_INIT}`,
      `rdma_get_cm_event:ucma_modify_qp_rtr:${IBV_QPS_INIT}->2`,
      `rdma_get_cm_event:ucma_modify_qp_rts:2->${IBV_QPS_RTS}`,
    ]);
    const accept = evs.find((e) => e.verb === "rdma_accept")!;
    expect(accept.moves?.[0]?.cause).toMatch(/^made by librdmacm/);
    expect(accept.qps.some((q) => q.after?.qp_state === IBV_QPS_RTS)).toBe(true);
    // No move the session could not explain.
    expect(evs.flatMap((e) => e.moves ?? []).filter((m) => m.cause.startsWith("unexplained"))).toEqual([]);
    const polls = evs.filter((e) => e.verb === "verbslab_poll_wait");
    expect(polls.map((e) => e.completions?.[0]?.wc.status)).toEqual([0, 0]);
  });

  it("a run's rdma_cm ids are released when its session ends, so the next run can bind the same port", async () => {
    const backend = createSimBackend({ seed: 3 });
    const first = createSession({ backend });
    await first.run(lesson17 as never);
    const second = createSession({ backend });
    // Not released: the first run's listener still holds the port, as on a real device.
    expect((await second.run(lesson17 as never)).error).toMatchObject({ code: "EADDRINUSE" });
    first.release();
    second.release();
    const third = createSession({ backend });
    expect(await third.run(lesson17 as never)).toEqual({ outcome: "ok" });
  });

  it("an id's fields follow the calls that fill them in: after rdma_bind_addr to rxe1's address, id.verbs is rxe1", async () => {
    // Through the facade, as a learner's program sees it (on the backend directly this always held).
    const s = createSession({ backend: createSimBackend({ seed: 3 }) });
    const ch = await s.verbs.cm.createEventChannel();
    const id = await ch.createId(RDMA_PS_UDP);
    expect(id.verbs).toBeUndefined();
    await id.bindAddr({ addr: "10.77.0.2", port: 0 });
    expect(id.verbs).toBeDefined();
    expect(await id.verbs!.queryGid(1, 1)).toBe("::ffff:10.77.0.2");
  });
});
