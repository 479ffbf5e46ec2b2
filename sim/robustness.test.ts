import { describe, expect, it } from "vitest";
import { IBV_QPT_RC, IBV_QPT_UD } from "../verbs/constants.js";
import { VerbsError } from "../verbs/errors.js";
import { createSimBackend } from "./index.js";
import { Rng } from "./rng.js";
import { connectRc, makeEnd } from "./testing.js";

/** Values a careless program might pass anywhere. */
const JUNK: unknown[] = [
  undefined,
  null,
  NaN,
  -1,
  0,
  1,
  1.5,
  2 ** 31,
  2 ** 53,
  -(2 ** 53),
  Infinity,
  "1",
  "",
  true,
  {},
  [],
  [{}],
  { addr: "x" },
  10n,
  () => 0,
  Symbol("s"),
  new Uint8Array(0),
];

describe("robustness", () => {
  it("every verb given junk throws a VerbsError or a TypeError/RangeError, never anything else, and the sim keeps working", async () => {
    const b = createSimBackend({ seed: 5 });
    const rng = new Rng(5);
    const pick = () => JUNK[rng.u32() % JUNK.length];
    const a = makeEnd(b.openDevice("rxe0"));
    const z = makeEnd(b.openDevice("rxe1"));
    const ud = makeEnd(b.openDevice("rxe0"), IBV_QPT_UD);
    connectRc(a, z);
    connectRc(z, a);
    const calls: [string, (x: unknown, y: unknown) => unknown][] = [
      ["openDevice", (x) => b.openDevice(x as string)],
      ["queryPort", (x) => a.ctx.queryPort(x as number)],
      ["queryGid", (x, y) => a.ctx.queryGid(x as number, y as number)],
      ["queryGidEx", (x, y) => a.ctx.queryGidEx(x as number, y as number)],
      ["queryPkey", (x, y) => a.ctx.queryPkey(x as number, y as number)],
      ["createCq", (x, y) => a.ctx.createCq(x as number, y as never)],
      ["regMr", (x, y) => a.pd.regMr(x as number, y as number)],
      ["createQp", (x) => a.pd.createQp(x as never)],
      [
        "createQp cap",
        (x, y) =>
          a.pd.createQp({
            send_cq: a.cq,
            recv_cq: a.cq,
            qp_type: IBV_QPT_RC,
            cap: { max_send_wr: x, max_inline_data: y } as never,
          }),
      ],
      ["createAh", (x) => a.pd.createAh(x as never)],
      [
        "createAh grh",
        (x, y) => a.pd.createAh({ is_global: 1, port_num: 1, grh: { dgid: x, sgid_index: y } } as never),
      ],
      ["modify", (x, y) => a.qp.modify(x as never, y as number)],
      [
        "modify av",
        (x, y) =>
          a.qp.modify(
            { qp_state: 2, ah_attr: { is_global: 1, port_num: 1, grh: { dgid: x, sgid_index: y } } } as never,
            0x81,
          ),
      ],
      ["query", (x) => a.qp.query(x as number)],
      ["postSend", (x) => a.qp.postSend(x as never)],
      ["postSend wr", (x, y) => a.qp.postSend({ opcode: x, sg_list: y } as never)],
      [
        "postSend sge",
        (x, y) =>
          a.qp.postSend({
            opcode: 0,
            sg_list: [{ addr: x, length: y, lkey: a.mr.lkey }],
            rdma: { remote_addr: x, rkey: y },
          } as never),
      ],
      ["postSend ud", (x, y) => ud.qp.postSend({ opcode: 2, ud: { ah: x, remote_qpn: y, remote_qkey: 0 } } as never)],
      ["postRecv", (x) => z.qp.postRecv(x as never)],
      [
        "postRecv sge",
        (x, y) => z.qp.postRecv({ wr_id: 1, sg_list: [{ addr: x, length: y, lkey: z.mr.lkey }] } as never),
      ],
      ["poll", (x) => a.cq.poll(x as number)],
      ["reqNotify", (x) => a.cq.reqNotify(x as boolean)],
      ["ackEvents", (x) => a.cq.ackEvents(x as number)],
      ["sge", (x, y) => a.mr.sge(x as number, y as number)],
      ["queryCounters", (x) => a.ctx.queryCounters(x as number)],
    ];
    for (let round = 0; round < 40; round++) {
      for (const [name, call] of calls) {
        try {
          call(pick(), pick());
        } catch (e) {
          const ok = e instanceof VerbsError || e instanceof TypeError || e instanceof RangeError;
          if (!ok) throw new Error(`${name} threw ${String(e)}`);
          if (e instanceof VerbsError) expect(typeof e.reason).toBe("string");
        }
      }
    }
    // Waiting with junk must not hang or throw anything unexpected either.
    for (const t of [-5, 0, 1, Infinity]) {
      const r = await Promise.race([a.cq.pollWait(1, t).catch((e) => e), b.sleep(3).then(() => "slept")]);
      expect(r).toBeDefined();
    }
  });

  it("use after destroy and destroy twice give EINVAL '… was already destroyed'", () => {
    const b = createSimBackend();
    const a = makeEnd(b.openDevice("rxe0"));
    a.qp.destroy();
    for (const f of [() => a.qp.destroy(), () => a.qp.query(), () => a.qp.postRecv({ sg_list: [] })]) {
      try {
        f();
        expect.unreachable();
      } catch (e) {
        expect((e as VerbsError).code).toBe("EINVAL");
        expect((e as VerbsError).reason).toMatch(/already destroyed/);
      }
    }
  });
});
