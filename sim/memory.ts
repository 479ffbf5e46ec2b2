/**
 * Virtual addresses for JavaScript memory. Every ArrayBuffer the program registers gets a
 * stable, page-aligned base address (seeded), so `mr.addr` looks like a C pointer and
 * registering the same buffer twice gives the same address, as in C.
 */
import type { Rng } from "./rng.js";

export class AddressSpace {
  private bases = new WeakMap<ArrayBufferLike, number>();
  private next: number;

  constructor(rng: Rng) {
    // A user-space-looking address (0x7f..), different per seed.
    this.next = 0x7f0000000000 + (rng.u32() & 0xffff) * 0x1000000;
  }

  baseOf(buffer: ArrayBufferLike): number {
    let b = this.bases.get(buffer);
    if (b === undefined) {
      b = this.next;
      this.bases.set(buffer, b);
      this.next += Math.ceil(Math.max(buffer.byteLength, 1) / 4096) * 4096 + 4096;
    }
    return b;
  }
}
