import { describe, expect, it } from "vitest";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_SEND_SIGNALED,
  IBV_WC_REM_ACCESS_ERR,
  IBV_WC_SUCCESS,
  IBV_WR_RDMA_WRITE,
  IBV_WR_SEND,
} from "../../../../verbs/constants.js";
import { RDMA_PS_TCP } from "../../../../verbs/cm.js";
import { buildView, createViewBuilder, describeCall, retireSend } from "./reduce.js";
import { loopback, record, twoDevices } from "./traffic.test-util.js";

describe("SQ/RQ occupancy", () => {
  it("keeps unsignaled sends on the SQ until a later signaled completion retires them", async () => {
    const views: { sq: number; rq: number }[] = [];
    const { session } = await record(async (verbs, session) => {
      const { cq, mr, a, b } = await loopback(verbs);
      const occupancy = () => {
        const qp = buildView({ events: session.events() }).qps[0]!;
        views.push({ sq: qp.sqOutstanding, rq: qp.rqOutstanding });
      };
      const write = (wr_id: number, send_flags: number) =>
        a.postSend({
          wr_id,
          opcode: IBV_WR_RDMA_WRITE,
          send_flags,
          sg_list: [mr.sge(0, 64)],
          rdma: { remote_addr: mr.addr + 4096, rkey: mr.rkey },
        });
      await write(1, 0);
      await write(2, 0);
      await write(3, 0);
      occupancy(); // three unsignaled WRITEs: no CQE will ever say they are gone
      expect(await cq.poll(4)).toEqual([]);
      occupancy();
      await write(4, IBV_SEND_SIGNALED);
      occupancy();
      const [wc] = await cq.poll(4);
      expect(wc).toMatchObject({ wr_id: 4, status: IBV_WC_SUCCESS });
      occupancy(); // the signaled one retired itself and the three before it
      await b.postRecv([
        { wr_id: 10, sg_list: [mr.sge(6144, 512)] },
        { wr_id: 11, sg_list: [mr.sge(6656, 512)] },
      ]);
      await a.postSend({ wr_id: 5, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 32)] });
      occupancy();
      expect(await cq.poll(4)).toHaveLength(2);
      occupancy();
    });
    // buildView's qps[0] is QP a; b's queues are checked below from the final view.
    expect(views).toEqual([
      { sq: 3, rq: 0 },
      { sq: 3, rq: 0 },
      { sq: 4, rq: 0 },
      { sq: 0, rq: 0 },
      { sq: 1, rq: 0 },
      { sq: 0, rq: 0 },
    ]);
    const b = buildView({ events: session.events() }).qps[1]!;
    expect(b.rqOutstanding).toBe(1);
  });

  it("retires in order up to the completed WR, and on an error completion even if unsignaled", () => {
    const slots = [
      { wr_id: 1, signaled: false },
      { wr_id: 2, signaled: true },
      { wr_id: 3, signaled: false },
    ];
    retireSend(slots, { wr_id: 2, status: IBV_WC_SUCCESS });
    expect(slots).toEqual([{ wr_id: 3, signaled: false }]);
    retireSend(slots, { wr_id: 3, status: 5 /* IBV_WC_WR_FLUSH_ERR */ });
    expect(slots).toEqual([]);
  });
});

describe("ViewBuilder.pausedBefore", () => {
  it("is the view's 'paused before' for any held verb, as buildView makes it (useLabView relies on it)", async () => {
    const { session } = await record(async (verbs) => {
      await loopback(verbs);
    });
    const events = session.events();
    const verbs = events.filter((e) => e.kind === "verb");
    expect(verbs.length).toBeGreaterThan(3);
    const builder = createViewBuilder();
    builder.build({ events });
    for (const e of verbs) {
      const pending = { seq: 99, verb: e.verb, target: e.target, method: e.method, args: e.args };
      const gate = { mode: "step" as const, pending, stopped: false };
      const whole = buildView({ events, gate }).pausedBefore;
      expect(whole).toBeDefined();
      expect(builder.pausedBefore(pending)).toEqual(whole);
    }
  });
});

describe("two devices whose QPs share a number", () => {
  it("a failed completion polled on rxe0 marks rxe0's QP, not rxe1's QP of the same number", async () => {
    const { session } = await record(async (verbs) => {
      const { a, b } = await twoDevices(verbs);
      expect(a.qp.qp_num).toBe(b.qp.qp_num);
      await a.qp.postSend({
        wr_id: 7,
        opcode: IBV_WR_RDMA_WRITE,
        send_flags: IBV_SEND_SIGNALED,
        sg_list: [a.mr.sge(0, 8)],
        rdma: { remote_addr: b.mr.addr + 4092, rkey: b.mr.rkey },
      });
      const [wc] = await a.cq.pollWait(1, 1000);
      expect(wc!.status).toBe(IBV_WC_REM_ACCESS_ERR);
    });
    const [qa, qb] = buildView({ events: session.events() }).qps;
    expect(qa).toMatchObject({ device: "rxe0", failure: { status: IBV_WC_REM_ACCESS_ERR, wr_id: 7 } });
    expect(qb!.device).toBe("rxe1");
    expect(qb!.failure).toBeUndefined();
    expect(qa!.sqOutstanding).toBe(0);
    // Each QP's one name says its device, since the number alone names both.
    expect([qa!.name, qb!.name]).toEqual(["QP 0x11, rxe0", "QP 0x11, rxe1"]);
  });
});

describe("describeCall", () => {
  it("names a regMr's access flags as verbs.h does, not as a number", () => {
    expect(describeCall("regMr", [4096, IBV_ACCESS_LOCAL_WRITE])).toBe("4096 bytes, access LOCAL_WRITE");
    expect(describeCall("regMr", [256, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE])).toBe(
      "256 bytes, access LOCAL_WRITE | REMOTE_WRITE",
    );
    expect(describeCall("regMr", [64, 0])).toBe("64 bytes, access 0");
  });
});

describe("objects librdmacm hands out", () => {
  it("an id's context is known with its device and GIDs (the Connection tab's GID row reads them)", async () => {
    const { session } = await record(async (verbs) => {
      const ch = await verbs.cm.createEventChannel();
      const id = await ch.createId(RDMA_PS_TCP);
      await id.resolveAddr({ addr: "10.77.0.1", port: 0 }, { addr: "10.77.0.2", port: 7000 }, 100);
      await (await ch.getEvent(100))!.ack();
      await id.verbs!.allocPd();
    });
    const view = buildView({ events: session.events() });
    expect(view.devices.map((d) => [d.name, d.ports[0]!.gids.find((g) => g.index === 1)?.gid])).toEqual([
      ["rxe0", "::ffff:10.77.0.1"],
    ]);
    expect(view.pds.map((p) => p.device)).toEqual(["rxe0"]);
  });
});
