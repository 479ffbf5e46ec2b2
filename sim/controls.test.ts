import { describe, expect, it } from "vitest";
import {
  IBV_EVENT_GID_CHANGE,
  IBV_EVENT_PORT_ACTIVE,
  IBV_EVENT_PORT_ERR,
  IBV_PORT_ACTIVE,
  IBV_PORT_DOWN,
  IBV_QPS_RTS,
  IBV_SEND_SIGNALED,
  IBV_WC_SUCCESS,
  IBV_WR_SEND,
} from "../verbs/constants.js";
import { VerbsError } from "../verbs/errors.js";
import { createSimBackend } from "./index.js";
import { connectRc, makeEnd } from "./testing.js";

describe("simulator controls", () => {
  it("setLinkState takes both veth ends down (PORT_ERR, DOWN, ENETUNREACH at RTR) and back up (PORT_ACTIVE twice)", async () => {
    const b = createSimBackend();
    const c0 = b.openDevice("rxe0");
    const c1 = b.openDevice("rxe1");
    b.setLinkState("rxe0", false);
    expect(c0.queryPort(1).state).toBe(IBV_PORT_DOWN);
    expect(c1.queryPort(1).state).toBe(IBV_PORT_DOWN);
    expect((await c0.getAsyncEvent(0))?.event_type).toBe(IBV_EVENT_PORT_ERR);
    expect((await c1.getAsyncEvent(0))?.event_type).toBe(IBV_EVENT_PORT_ERR);
    expect(c0.queryCounters().link_downed).toBe(1);
    const a = makeEnd(c0);
    const z = makeEnd(c1);
    let err: unknown;
    try {
      connectRc(a, z);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(VerbsError);
    expect((err as VerbsError).code).toBe("ENETUNREACH");
    b.setLinkState("rxe0", true);
    expect(c0.queryPort(1).state).toBe(IBV_PORT_ACTIVE);
    expect((await c0.getAsyncEvent(0))?.event_type).toBe(IBV_EVENT_PORT_ACTIVE);
    expect((await c0.getAsyncEvent(0))?.event_type).toBe(IBV_EVENT_PORT_ACTIVE);
    expect(await c0.getAsyncEvent(5)).toBeNull();
  });

  it("addIpAddress adds a RoCEv2 GID (raising GID_CHANGE) that carries traffic", async () => {
    const b = createSimBackend();
    const c0 = b.openDevice("rxe0");
    const c1 = b.openDevice("rxe1");
    expect(b.addIpAddress("rxe1", "192.168.5.2")).toBe(2);
    expect(c1.queryGid(1, 2)).toBe("::ffff:192.168.5.2");
    expect(c1.queryGidEx(1, 2).gid_type).toBe(2);
    expect((await c1.getAsyncEvent(0))?.event_type).toBe(IBV_EVENT_GID_CHANGE);
    b.addIpAddress("rxe0", "192.168.5.1");
    const a = makeEnd(c0);
    const z = makeEnd(c1);
    connectRc(a, z, { sgid_index: 2 });
    connectRc(z, a, { sgid_index: 2 });
    expect(a.qp.query().attr.qp_state).toBe(IBV_QPS_RTS);
    z.qp.postRecv({ wr_id: 1, sg_list: [z.mr.sge(0, 64)] });
    a.qp.postSend({ wr_id: 2, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [a.mr.sge(0, 8)] });
    expect(a.cq.poll(1)[0].status).toBe(IBV_WC_SUCCESS);
    expect(z.cq.poll(1)[0].status).toBe(IBV_WC_SUCCESS);
  });

  it("netdev() describes the veth behind each device", () => {
    const b = createSimBackend({ seed: 9 });
    const n = b.netdev("rxe0");
    expect(n.name).toBe("veth0");
    expect(n.mtu).toBe(1500);
    expect(n.mac).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
    expect(parseInt(n.mac.slice(0, 2), 16) & 3).toBe(2); // locally administered unicast
  });
});

describe("simulator controls given junk", () => {
  it("setLinkState/addIpAddress with a bigint or a wrong type fail with a TypeError naming the argument", () => {
    const b = createSimBackend();
    const cases: [string, () => unknown, string][] = [
      ["setLinkState(10n)", () => b.setLinkState(10n as never, false), "device"],
      ["setLinkState(up 1n)", () => b.setLinkState("rxe0", 1n as never), "up"],
      ["addIpAddress(10n)", () => b.addIpAddress("rxe0", 10n as never), "ipv4"],
      ["addIpAddress(device 10n)", () => b.addIpAddress(10n as never, "10.0.0.1"), "device"],
      ["netdev({})", () => b.netdev({} as never), "device"],
    ];
    for (const [what, run, arg] of cases) {
      expect(run, what).toThrow(TypeError);
      expect(run, what).toThrow(arg);
    }
    expect(() => b.setLinkState("rxe9", false)).toThrow(RangeError);
    // Nothing moved: the links are up.
    expect(b.netdev("rxe0").up).toBe(true);
  });
});
