import { describe, expect, it } from "vitest";
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
