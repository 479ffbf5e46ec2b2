/**
 * The pcap export: the file's layout, and (with Debian's tshark) that Wireshark decodes each
 * packet of the simulator's log to the headers the log says it carried.
 */
import { describe, expect, it } from "vitest";
import type { PacketLogEntry } from "../../../verbs/backend.js";
import { OPCODE_NAMES } from "../../../sim/packets.js";
import { frameIcrc, gidBytes, toPcap } from "./pcap.js";
import { createSimBackend } from "../../../sim/index.js";
import { transcriptPcap } from "./pcap-replay.js";
import { PCAP_PROGRAMS, runOnSim, type PcapProgram } from "./pcap-sim-run.test-util.js";
import { pcapFrames, tsharkDecode, tsharkMissing } from "./pcap-tshark.test-util.js";

const devices = { rxe0: { mac: "02:00:00:00:00:01" }, rxe1: { mac: "02:00:00:00:00:02" } };
const ip = { sgid: "::ffff:10.77.0.1", dgid: "::ffff:10.77.0.2", traffic_class: 0, hop_limit: 64, udp_sport: 49441 };
const entry = (over: Partial<PacketLogEntry>): PacketLogEntry => ({
  seq: 0,
  time: 0,
  src: "rxe0",
  dst: "rxe1",
  opcode: "RC_SEND_ONLY",
  bth_opcode: 0x04,
  psn: 7,
  src_qpn: 0x11,
  dest_qpn: 0x12,
  payload_len: 11,
  ack_req: true,
  solicited: false,
  ip,
  ...over,
});

describe("toPcap", () => {
  it("writes a classic pcap (LINKTYPE_ETHERNET) with one frame per packet that went on a wire", () => {
    const r = toPcap(
      [entry({}), entry({ seq: 1, ip: undefined, dropped: "link down" }), entry({ seq: 2, time: 1.5 })],
      {
        devices,
      },
    );
    expect(r.packets).toBe(2);
    expect(r.skipped).toBe(1);
    const v = new DataView(r.bytes.buffer);
    expect(v.getUint32(0, true)).toBe(0xa1b2c3d4);
    expect(v.getUint32(20, true)).toBe(1);
    const frames = pcapFrames(r.bytes);
    // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + 11 bytes + 1 pad + ICRC 4.
    expect(frames.map((f) => f.length)).toEqual([70, 70]);
    // The second packet's timestamp: 1.5 ms.
    const second = 24 + 16 + 70;
    expect([v.getUint32(second, true), v.getUint32(second + 4, true)]).toEqual([0, 1500]);
    // The ICRC in place is the one computed over the frame.
    expect(Array.from(frames[0]!.subarray(-4))).toEqual(Array.from(frameIcrc(frames[0]!)));
  });

  it("uses IPv6 for IPv6 GIDs", () => {
    const f = pcapFrames(toPcap([entry({ ip: { ...ip, sgid: "fe80::1", dgid: "fe80::2" } })], { devices }).bytes)[0]!;
    expect((f[12]! << 8) | f[13]!).toBe(0x86dd);
    expect(f.length).toBe(14 + 40 + 8 + 12 + 12 + 4);
  });

  it("refuses what it cannot write, naming the packet", () => {
    expect(() => toPcap([entry({ seq: 4, src: "rxe9" })], { devices })).toThrow(/packet 4: no MAC for device "rxe9"/);
    expect(() => toPcap([entry({ seq: 5, bth_opcode: undefined })], { devices })).toThrow(
      /packet 5 \(RC_SEND_ONLY\): no BTH opcode byte/,
    );
    expect(() => toPcap([entry({ ip: { ...ip, sgid: "10.77.0.1" } })], { devices })).toThrow(RangeError);
  });

  it("reads GIDs in both of the log's forms", () => {
    expect(Array.from(gidBytes("::ffff:10.77.0.2"))).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 77, 0, 2]);
    expect(Array.from(gidBytes("fe80::a00c:f4ff:fe83:ddca"))).toEqual([
      0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0xa0, 0x0c, 0xf4, 0xff, 0xfe, 0x83, 0xdd, 0xca,
    ]);
  });
});

const missing = tsharkMissing();
const hex = (n: number, digits: number) => "0x" + n.toString(16).padStart(digits, "0");

describe.skipIf(missing !== null)(
  `the simulator's packets as tshark decodes them${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    for (const name of Object.keys(PCAP_PROGRAMS) as PcapProgram[])
      it(`${name}.ts: every header field the log holds, from a replay of the transcript`, async () => {
        const { transcript, packets, macs } = await runOnSim(name);
        const out = await transcriptPcap(transcript, createSimBackend({ seed: 1 }));
        expect(out.divergences).toBe(0);
        const rows = tsharkDecode(out.bytes);
        expect(rows.length).toBe(packets.length);
        expect(rows.length).toBeGreaterThan(2);
        rows.forEach((row, i) => {
          const e = packets[i]!;
          const opcode = Object.entries(OPCODE_NAMES).find(([, n]) => n === e.opcode)![0];
          expect(e.bth_opcode).toBe(Number(opcode));
          expect(row["eth.src"]).toBe(macs[e.src as "rxe0"]);
          expect(row["eth.dst"]).toBe(macs[e.dst as "rxe0"]);
          if (e.ip!.sgid.startsWith("::ffff:")) {
            expect(row["ip.src"]).toBe(e.ip!.sgid.slice(7));
            expect(row["ip.dst"]).toBe(e.ip!.dgid.slice(7));
            expect(row["ip.checksum.status"]).toBe("1"); // good
          } else {
            expect(row["ipv6.src"]).toBe(e.ip!.sgid);
            expect(row["ipv6.dst"]).toBe(e.ip!.dgid);
          }
          expect(row["udp.dstport"]).toBe("4791");
          expect(row["udp.srcport"]).toBe(String(e.ip!.udp_sport));
          expect(row["infiniband.bth.opcode"]).toBe(opcode);
          expect(row["infiniband.bth.psn"]).toBe(String(e.psn));
          expect(row["infiniband.bth.destqp"]).toBe(hex(e.dest_qpn, 6));
          expect(row["infiniband.bth.a"]).toBe(e.ack_req ? "1" : "0");
          expect(row["infiniband.bth.padcnt"]).toBe(String(-e.payload_len & 3));
          expect(row["infiniband.aeth.syndrome"]).toBe(e.aeth ? String(e.aeth.syndrome) : "");
          expect(row["infiniband.aeth.msn"]).toBe(e.aeth ? String(e.aeth.msn) : "");
          expect(row["infiniband.reth.va"]).toBe(e.reth ? hex(e.reth.va, 16) : "");
          expect(row["infiniband.reth.r_key"]).toBe(e.reth ? hex(e.reth.rkey, 8) : "");
          expect(row["infiniband.reth.dmalen"]).toBe(e.reth ? String(e.reth.len) : "");
        });
        // What a learner looks for in each program.
        const ops = rows.map((r) => Number(r["infiniband.bth.opcode"]));
        if (name === "send") expect(ops).toEqual([0x00, 0x02, 0x11]);
        if (name === "write-imm") {
          expect(ops).toEqual([0x06, 0x09, 0x11]);
          expect(rows[1]!["infiniband.immdt"]).toBe("78563412"); // imm_data 0x12345678 as x86 stores it
        }
        if (name === "rnr-retry") expect(rows.map((r) => r["infiniband.aeth.syndrome"])).toEqual(["", "63", "", "31"]);
        if (name === "read") {
          expect(ops).toEqual([0x0c, 0x0d, 0x0e, 0x0f]);
          expect(rows[0]!["eth.type"]).toBe("0x86dd");
        }
      });
  },
);
