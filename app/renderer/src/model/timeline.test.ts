import { describe, expect, it } from "vitest";
import { IBV_SEND_SIGNALED, IBV_WC_SUCCESS, IBV_WR_RDMA_WRITE, IBV_WR_SEND } from "../../../../verbs/constants.js";
import type { PacketRecord, StateSnapshot } from "../../../bridge/contract.js";
import { packetRecord } from "../../../bridge/snapshot-deltas.js";
import type { Verbs } from "../../../session/verbs-api.js";
import { buildView } from "./reduce.js";
import { buildTimeline, packetClass, packetDetail, packetLabel } from "./timeline.js";
import { STRINGS } from "../i18n.js";
import { loopback, record, twoDevices } from "./traffic.test-util.js";
import type { TimelineRow } from "./view.js";

/** Records `program` and tags each packet with the event it happened during, as the backend service does. */
async function traffic(program: (verbs: Verbs) => Promise<void>) {
  const records: PacketRecord[] = [];
  const { session, sim } = await record(async (verbs, s, sim) => {
    s.subscribe((e) => {
      for (const p of sim.packets) if (p.seq >= records.length) records.push(packetRecord(p, e.seq));
    });
    await program(verbs);
  });
  const snapshot: StateSnapshot = {
    backend: "sim",
    clock: sim.now(),
    seq: session.events().length,
    qps: session.qps(),
    packets: { observable: true, records },
  };
  return { events: session.events(), snapshot, records };
}

/** A row as a learner reads it. */
/** A lane's QP number (lanes are "device/qpn"). */
const qpnOf = (lane: string) => lane.slice(lane.lastIndexOf("/") + 1);

function text(r: TimelineRow): string {
  switch (r.kind) {
    case "wqe":
      return `${r.queue} ${r.qp_num} post ${r.opcode} wr ${r.wr_id} ${r.bytes} B${r.signaled === false ? " unsignaled" : ""}`;
    case "packet":
      return `${qpnOf(r.from)}→${qpnOf(r.to)} ${r.label} psn ${r.psn} ${r.len} B${r.dropped ? ` dropped: ${r.dropped}` : ""}`;
    case "cqe":
      return `CQE ${r.qp_num} ${r.opcode} wr ${r.wr_id} ${r.status}`;
    case "gap":
      return `gap ${r.count}`;
    case "wait":
      return `wait (${r.why})`;
  }
}

async function writeThenSend(verbs: Verbs) {
  const { cq, mr, a, b } = await loopback(verbs);
  await a.postSend({
    wr_id: 1,
    opcode: IBV_WR_RDMA_WRITE,
    send_flags: IBV_SEND_SIGNALED,
    sg_list: [mr.sge(0, 2500)],
    rdma: { remote_addr: mr.addr + 4096, rkey: mr.rkey },
  });
  await b.postRecv({ wr_id: 2, sg_list: [mr.sge(7168, 1024)] });
  await a.postSend({ wr_id: 3, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 16)] });
  expect(await cq.pollWait(3, 100)).toHaveLength(3);
}

describe("the packet timeline", () => {
  it("shows each WQE, the packets it produced and the CQE that completed it, lanes per QP", async () => {
    const { events, snapshot } = await traffic(writeThenSend);
    const tl = buildView({ events, snapshot }).packets;
    expect(tl.observable).toBe(true);
    expect(tl.lanes.map((l) => [l.handle, l.qp_num, l.device])).toEqual([
      ["qp0", 17, "rxe0"],
      ["qp1", 18, "rxe0"],
    ]);
    expect(tl.rows.map(text)).toEqual([
      "SQ 17 post RDMA_WRITE wr 1 2500 B",
      "17→18 RDMA_WRITE_FIRST psn 0 1024 B",
      "17→18 RDMA_WRITE_MIDDLE psn 1 1024 B",
      "17→18 RDMA_WRITE_LAST psn 2 452 B",
      "18→17 ACK psn 2 0 B",
      "RQ 18 post RECV wr 2 1024 B",
      "SQ 17 post SEND wr 3 16 B",
      "17→18 SEND_ONLY psn 3 16 B",
      "18→17 ACK psn 3 0 B",
      "CQE 17 RDMA_WRITE wr 1 SUCCESS",
      "CQE 18 RECV wr 2 SUCCESS",
      "CQE 17 SEND wr 3 SUCCESS",
    ]);
    const first = tl.rows[1] as Extract<TimelineRow, { kind: "packet" }>;
    expect(packetDetail(first.detail)).toMatch(
      /RC_RDMA_WRITE_FIRST · rxe0 QP 17 → rxe0 QP 18 · PSN 0x0 · 1024 B payload/,
    );
    expect(packetDetail(first.detail)).toMatch(/RETH va 0x[0-9a-f]+ rkey 0x[0-9a-f]+ len 2500/);
    // The same fields in Chinese: names and numbers as in English, the words around them not.
    expect(STRINGS.zh.packetDetail(first.detail)).toMatch(
      /RC_RDMA_WRITE_FIRST · rxe0 QP 17 → rxe0 QP 18 · PSN 0x0 · 载荷 1024 字节 · .*RETH va 0x[0-9a-f]+ rkey 0x[0-9a-f]+ len 2500/,
    );
    const ack = tl.rows.find((r) => r.kind === "packet" && r.detail.aeth) as Extract<TimelineRow, { kind: "packet" }>;
    expect(packetDetail(ack.detail)).toMatch(/AETH ACK \(syndrome 0x[0-9a-f]+\) MSN \d+/);
    expect(STRINGS.zh.packetDetail(ack.detail)).toMatch(/AETH ACK（syndrome 0x[0-9a-f]+）MSN \d+ · t = [\d.]+ 毫秒$/);
  });

  it("gives rxe0's and rxe1's QP 0x11 a lane each: a WRITE between them crosses from one to the other", async () => {
    const { events, snapshot } = await traffic(async (verbs) => {
      const { a, b } = await twoDevices(verbs);
      await a.qp.postSend({
        wr_id: 1,
        opcode: IBV_WR_RDMA_WRITE,
        send_flags: IBV_SEND_SIGNALED,
        sg_list: [a.mr.sge(0, 64)],
        rdma: { remote_addr: b.mr.addr, rkey: b.mr.rkey },
      });
      await a.cq.pollWait(1, 1000);
    });
    const tl = buildView({ events, snapshot }).packets;
    expect(tl.lanes.map((l) => [l.key, l.qp_num, l.device])).toEqual([
      ["rxe0/17", 17, "rxe0"],
      ["rxe1/17", 17, "rxe1"],
    ]);
    const rows = tl.rows.flatMap((r) =>
      r.kind === "packet"
        ? [`${r.from}→${r.to} ${r.label}`]
        : r.kind === "wqe" || r.kind === "cqe"
          ? [`${r.kind} ${r.lane}`]
          : [],
    );
    expect(rows).toEqual(["wqe rxe0/17", "rxe0/17→rxe1/17 RDMA_WRITE_ONLY", "rxe1/17→rxe0/17 ACK", "cqe rxe0/17"]);
  });

  it("draws the RNR wait on the clock and the retry that got through", async () => {
    const { events, snapshot } = await traffic(async (verbs) => {
      const { cq, mr, a, b } = await loopback(verbs);
      await a.postSend({ wr_id: 9, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge(0, 8)] });
      await b.postRecv({ wr_id: 10, sg_list: [mr.sge(4096, 64)] });
      const wcs = await cq.pollWait(2, 1000);
      expect(wcs.map((w) => [w.wr_id, w.status])).toEqual([
        [10, IBV_WC_SUCCESS],
        [9, IBV_WC_SUCCESS],
      ]);
    });
    const rows = buildView({ events, snapshot }).packets.rows.map(text);
    expect(rows).toEqual([
      "SQ 17 post SEND wr 9 8 B",
      "17→18 SEND_ONLY psn 0 8 B",
      "18→17 RNR NAK (timer 12) psn 0 0 B",
      "RQ 18 post RECV wr 10 64 B",
      "wait (rnr)",
      "17→18 SEND_ONLY psn 0 8 B",
      "18→17 ACK psn 0 0 B",
      "CQE 18 RECV wr 10 SUCCESS",
      "CQE 17 SEND wr 9 SUCCESS",
    ]);
    const wait = buildView({ events, snapshot }).packets.rows[4] as Extract<TimelineRow, { kind: "wait" }>;
    expect(wait.ms).toBeGreaterThan(0);
    // The NAK asked for timer 12 (0.64 ms); rxe's jiffies make it 8 ms, and the row says why.
    expect(wait.rnrTimer).toBe(12);
    expect(wait.sinceNakMs).toBe(8);
  });

  it("marks a gap in the log, keeps the newest rows, and on native shows WQEs and CQEs without packets", async () => {
    const { events, snapshot, records } = await traffic(writeThenSend);
    const holed = { observable: true, records: records.filter((p) => p.seq !== 1 && p.seq !== 2) };
    const lanes = [{ key: "rxe0/17", qp_num: 17, handle: "qp0", device: "rxe0" }];
    const qp = (h: number) =>
      h === 5
        ? { qp_num: 17, device: "rxe0", sigAll: false }
        : h === 6
          ? { qp_num: 18, device: "rxe0", sigAll: false }
          : undefined;
    const cqDevice = () => "rxe0";
    const tl = buildTimeline({ events, packets: holed, lanes, qp, cqDevice });
    expect(tl.rows.map(text).slice(0, 3)).toEqual([
      "SQ 17 post RDMA_WRITE wr 1 2500 B",
      "17→18 RDMA_WRITE_FIRST psn 0 1024 B",
      "gap 2",
    ]);
    expect(tl.lanes.map((l) => l.qp_num)).toEqual([17, 18]); // a QPN seen only on the wire gets a lane

    const few = buildTimeline({ events, packets: snapshot.packets, lanes, qp, cqDevice, maxRows: 4 });
    expect(few.rows).toHaveLength(4);
    expect(few.hiddenRows).toBe(8); // 12 rows in all
    expect(few.rows.map(text).at(-1)).toBe("CQE 17 SEND wr 3 SUCCESS");

    const native = buildTimeline({ events, packets: { observable: false, records: [] }, lanes, qp, cqDevice });
    expect(native.observable).toBe(false);
    expect(native.rows.map((r) => r.kind)).toEqual(["wqe", "wqe", "wqe", "cqe", "cqe", "cqe"]);
  });

  it("shows drops and why, the retransmit timer between tries, and the try that got through", async () => {
    const records: PacketRecord[] = [];
    const { session } = await record(async (verbs, s, sim) => {
      s.subscribe((e) => {
        for (const p of sim.packets) if (p.seq >= records.length) records.push(packetRecord(p, e.seq));
      });
      const { cq, mr, a } = await loopback(verbs);
      sim.setLinkState("rxe0", false);
      await a.postSend({
        wr_id: 5,
        opcode: IBV_WR_RDMA_WRITE,
        send_flags: IBV_SEND_SIGNALED,
        sg_list: [mr.sge(0, 8)],
        rdma: { remote_addr: mr.addr + 4096, rkey: mr.rkey },
      });
      expect(await cq.pollWait(1, 100)).toEqual([]); // timeout 14: a retransmit every ~68 ms
      sim.setLinkState("rxe0", true);
      expect(await cq.pollWait(1, 1000)).toMatchObject([{ wr_id: 5, status: IBV_WC_SUCCESS }]);
    });
    const events = session.events();
    const tl = buildView({
      events,
      snapshot: {
        backend: "sim",
        clock: 0,
        seq: events.length,
        qps: session.qps(),
        packets: { observable: true, records },
      },
    }).packets;
    expect(tl.rows.map(text)).toEqual([
      "SQ 17 post RDMA_WRITE wr 5 8 B",
      "17→18 RDMA_WRITE_ONLY psn 0 8 B dropped: link down",
      "wait (retransmit)",
      "17→18 RDMA_WRITE_ONLY psn 0 8 B dropped: link down",
      "wait (retransmit)",
      "17→18 RDMA_WRITE_ONLY psn 0 8 B",
      "18→17 ACK psn 0 0 B",
      "CQE 17 RDMA_WRITE wr 5 SUCCESS",
    ]);
  });

  it("names packets by what they are", () => {
    expect(packetLabel({ opcode: "RC_ACKNOWLEDGE", aeth: { syndrome: 0x1f, text: "ACK", msn: 1 } })).toBe("ACK");
    expect(
      packetClass({ opcode: "RC_ACKNOWLEDGE", aeth: { syndrome: 0x60, text: "NAK PSN sequence error", msn: 1 } }),
    ).toBe("nak");
    expect(
      packetLabel({ opcode: "RC_ACKNOWLEDGE", aeth: { syndrome: 0x2e, text: "RNR NAK (timer 14)", msn: 0 } }),
    ).toBe("RNR NAK (timer 14)");
    expect(packetClass({ opcode: "RC_RDMA_READ_RESPONSE_FIRST" })).toBe("response");
    expect(packetLabel({ opcode: "UD_SEND_ONLY" })).toBe("SEND_ONLY");
  });
});
