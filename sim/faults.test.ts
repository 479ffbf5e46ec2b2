/**
 * sim/faults.ts beyond what the conformance file can check on both backends: the same seed
 * gives the same drops (a lossy run is reproducible byte for byte), reorder lets later packets
 * overtake (the responder's out_of_seq NAKs, yet every byte lands), and clearing the delay
 * purges what netem held, as `tc qdisc del` does.
 */
import { describe, expect, it } from "vitest";
import { IBV_WC_SUCCESS, IBV_WR_RDMA_WRITE, IBV_WR_SEND } from "../verbs/constants.js";
import { createSimBackend } from "./index.js";
import { connectRc, makeEnd } from "./testing.js";

async function lossyWrite(seed: number, faults: Parameters<ReturnType<typeof createSimBackend>["lab"]["setLink"]>[0]) {
  const sim = createSimBackend({ seed, packetLog: true });
  const x = makeEnd(sim.openDevice("rxe0"));
  const y = makeEnd(sim.openDevice("rxe1"));
  connectRc(x, y);
  connectRc(y, x);
  for (let i = 0; i < x.mr.length; i++) x.mr.bytes[i] = (i * 13) & 0xff;
  sim.lab.setLink(faults);
  x.qp.postSend({
    wr_id: 1,
    opcode: IBV_WR_RDMA_WRITE,
    send_flags: 2,
    sg_list: [x.mr.sge()],
    rdma: { remote_addr: y.mr.addr, rkey: y.mr.rkey },
  });
  const wcs = await x.cq.pollWait(1, 10_000);
  sim.lab.clearLink();
  return { sim, x, y, wcs, log: sim.packets.map((p) => `${p.time} ${p.opcode} ${p.psn} ${p.dropped ?? ""}`) };
}

describe("sim/faults.ts", () => {
  it("the same seed drops the same packets; another seed, others", async () => {
    const a = await lossyWrite(3, { loss: 0.2 });
    const b = await lossyWrite(3, { loss: 0.2 });
    const c = await lossyWrite(4, { loss: 0.2 });
    expect(a.wcs[0]?.status).toBe(IBV_WC_SUCCESS);
    expect(a.log).toEqual(b.log);
    expect(a.log.some((l) => l.includes("netem loss"))).toBe(true);
    expect(c.log).not.toEqual(a.log);
    expect(a.y.mr.bytes).toEqual(a.x.mr.bytes);
  });

  it("reorder 50% with delay 5 ms: later packets overtake, the responder NAKs out of sequence, every byte lands", async () => {
    const r = await lossyWrite(5, { delay: 5, reorder: 0.5 });
    expect(r.wcs[0]?.status).toBe(IBV_WC_SUCCESS);
    expect(r.y.mr.bytes).toEqual(r.x.mr.bytes);
    const psns = r.sim.packets.filter((p) => p.opcode.startsWith("RC_RDMA_WRITE")).map((p) => p.psn);
    expect(psns.some((p, i) => i > 0 && p < psns[i - 1]!)).toBe(true);
    expect(r.y.ctx.queryCounters(1).out_of_seq_request).toBeGreaterThan(0);
  });

  it("clearLink while netem holds packets: they are purged (logged), and nothing arrives late", async () => {
    const sim = createSimBackend({ seed: 1, packetLog: true });
    const x = makeEnd(sim.openDevice("rxe0"));
    const y = makeEnd(sim.openDevice("rxe1"));
    connectRc(x, y);
    connectRc(y, x);
    sim.lab.setLink({ delay: 50 });
    y.qp.postRecv({ wr_id: 9, sg_list: [y.mr.sge(0, 64)] });
    x.qp.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: 2, sg_list: [x.mr.sge(0, 64)] });
    sim.lab.clearLink();
    expect(sim.packets.at(-1)?.dropped).toBe("purged with the netem qdisc");
    // The requester's timer resends it (timeout 14: 67 ms); then it completes.
    const [wc] = await x.cq.pollWait(1, 1000);
    expect(wc?.status).toBe(IBV_WC_SUCCESS);
    expect(sim.now()).toBeGreaterThan(60);
  });

  it("a dropped packet is logged in its turn (a capture's order); netem's loss without the IP layer it never went out in", async () => {
    // dropPsn: nftables drops at the receiver's input, after tcpdump on veth0 saw the packet.
    const r = await lossyWrite(1, { dropPsn: 3 });
    // The requests as they left: the NAK for PSN 3 comes back while 6 is on the link, and the
    // paced requester (rxe builds one packet at a time) goes back to 3 before building 7.
    const first = r.sim.packets.filter((p) => p.opcode !== "RC_ACKNOWLEDGE").slice(0, 8);
    expect(first.map((p) => p.psn)).toEqual([0, 1, 2, 3, 4, 5, 6, 3]);
    expect(first.map((p) => p.dropped ?? "")).toEqual([
      "",
      "",
      "",
      "PSN 3 dropped once (nftables input rule on veth1's host)",
      "",
      "",
      "",
      "",
    ]);
    expect(first[3]!.ip).toBeDefined();
    // netem drops in the sender's qdisc, before the veth's capture tap: no IP layer, so no pcap frame.
    const lost = (await lossyWrite(3, { loss: 0.2 })).sim.packets.filter((p) => p.dropped?.includes("netem loss"));
    expect(lost.length).toBeGreaterThan(0);
    expect(lost.every((p) => p.ip === undefined)).toBe(true);
  });
});
