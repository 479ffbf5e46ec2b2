import { describe, expect, it } from "vitest";
import { IBV_SEND_SIGNALED, IBV_WC_SUCCESS, IBV_WR_RDMA_WRITE } from "../verbs/constants.js";
import { createSimBackend, type SimBackend } from "./index.js";
import { connectRc, makeEnd } from "./testing.js";
import { holdNs, wireProfile } from "./wire.js";

/** Payload Gb/s of back-to-back full packets of `mtu` bytes on profile `name`. */
function payloadGbps(name: "25GbE" | "100GbE", mtu: number): number {
  return (mtu * 8) / holdNs(wireProfile(name), mtu);
}

describe("wire profiles: the NIC models give the figures their comments cite", () => {
  it("25GbE: 23–24.7 Gb/s at MTU 4096 (ib_write_bw), ~21 at 1024, 1.1–2 µs one way for 8 B", () => {
    expect(payloadGbps("25GbE", 4096)).toBeGreaterThanOrEqual(23);
    expect(payloadGbps("25GbE", 4096)).toBeLessThanOrEqual(24.7);
    expect(payloadGbps("25GbE", 1024)).toBeCloseTo(21.3, 1);
    const w = wireProfile("25GbE");
    const oneWay = holdNs(w, 8) + w.latencyNs;
    expect(oneWay).toBeGreaterThanOrEqual(1_100);
    expect(oneWay).toBeLessThanOrEqual(2_000);
  });
  it("100GbE: the 25GbE NIC ×4, ~96 Gb/s at MTU 4096", () => {
    expect(payloadGbps("100GbE", 4096)).toBeCloseTo(95.8, 1);
    expect(payloadGbps("100GbE", 4096) / payloadGbps("25GbE", 4096)).toBeGreaterThan(3.9);
  });
});

describe("the wire model is the link's: setLink({ wire }) switches it", () => {
  /** Virtual ms for an 8 KiB WRITE rxe0 → rxe1, polled until it completes. */
  async function writeMs(b: SimBackend): Promise<number> {
    const a = makeEnd(b.openDevice("rxe0"));
    const z = makeEnd(b.openDevice("rxe1"));
    connectRc(a, z);
    connectRc(z, a);
    // The link idle first: after a message rxe's link stays busy a while (perMessageNs).
    await b.sleep(5);
    const t0 = b.clock.now();
    a.qp.postSend([
      {
        wr_id: 1,
        opcode: IBV_WR_RDMA_WRITE,
        send_flags: IBV_SEND_SIGNALED,
        sg_list: [a.mr.sge(0, 8192)],
        rdma: { remote_addr: z.mr.addr, rkey: z.mr.rkey },
      },
    ]);
    const [wc] = await a.cq.pollWait(1, 10_000);
    expect(wc?.status).toBe(IBV_WC_SUCCESS);
    return b.clock.now() - t0;
  }

  it("the same WRITE takes the chosen model's time; clearLink returns to the backend's own; bad names are EINVAL", async () => {
    const b = createSimBackend({ seed: 1 });
    expect(b.lab.getLink().wire).toBe("rxe");
    const onRxe = await writeMs(b);
    expect(b.lab.setLink({ wire: "25GbE" }).wire).toBe("25GbE");
    expect(b.wire.name).toBe("25GbE");
    const on25 = await writeMs(b);
    b.lab.setLink({ wire: "100GbE" });
    const on100 = await writeMs(b);
    // rxe in the lab VM: ~0.22 ms for 8 KiB (the 2026-12-03 fit); the NICs: µs, the 100GbE one faster still.
    expect(onRxe).toBeGreaterThan(0.15);
    expect(on25).toBeLessThan(0.02);
    expect(on100).toBeLessThan(on25);
    expect(b.lab.clearLink().wire).toBe("rxe");
    expect(await writeMs(b)).toBeCloseTo(onRxe, 6);
    expect(createSimBackend({ wire: "100GbE" }).lab.clearLink().wire).toBe("100GbE");
    expect(() => b.lab.setLink({ wire: "10GbE" as never })).toThrow(
      expect.objectContaining({
        code: "EINVAL",
        attribute: "wire",
        reason: expect.stringMatching(/rxe, 25GbE, 100GbE/),
      }),
    );
  });
});
