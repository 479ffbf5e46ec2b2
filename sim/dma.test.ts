import { describe, expect, it } from "vitest";
import { copyBytes, copyMr } from "./dma.js";
import { createSimBackend } from "./index.js";
import type { SimMr } from "./mr.js";
import { ALL_ACCESS } from "./testing.js";

describe("copyMr", () => {
  it("leaves the same bytes as copyBytes, for overlapping, unaligned and large copies", () => {
    const pd = createSimBackend({ seed: 1 }).openDevice("rxe0").allocPd();
    const buf = new ArrayBuffer(4096);
    // Two MRs over one buffer (overlapping copies), one at an odd offset (no word view).
    const x = pd.regMr(new Uint8Array(buf, 0, 2048), ALL_ACCESS) as unknown as SimMr;
    const y = pd.regMr(new Uint8Array(buf, 1024, 2048), ALL_ACCESS) as unknown as SimMr;
    const odd = pd.regMr(new Uint8Array(buf, 3001, 1000), ALL_ACCESS) as unknown as SimMr;
    expect(odd.words).toBeNull();
    let seed = 1;
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const pairs: [SimMr, SimMr][] = [
      [x, y],
      [y, x],
      [x, x],
      [y, odd],
      [odd, x],
    ];
    for (let round = 0; round < 600; round++) {
      const all = new Uint8Array(buf);
      for (let i = 0; i < all.length; i++) all[i] = rnd(256);
      const [d, s] = pairs[round % pairs.length];
      const n = rnd(4) === 0 ? rnd(300) : rnd(20) * 4;
      const dOff = rnd(d.length - n) & (rnd(2) ? ~3 : ~0);
      let sOff = rnd(s.length - n) & (rnd(2) ? ~3 : ~0);
      // Often a source within a few words of the destination (in the buffer), either side.
      const near = d.bytes.byteOffset + dOff - s.bytes.byteOffset + (rnd(33) - 16) * 4;
      if (rnd(2) && near >= 0 && near <= s.length - n) sOff = near;
      const ref = new Uint8Array(buf.slice(0));
      const refD = new Uint8Array(ref.buffer, d.bytes.byteOffset, d.length);
      const refS = new Uint8Array(ref.buffer, s.bytes.byteOffset, s.length);
      copyBytes(refD, dOff, refS, sOff, n);
      copyMr(d, dOff, s, sOff, n);
      expect(Buffer.from(all).equals(Buffer.from(ref)), `round ${round}`).toBe(true);
    }
  });
});
