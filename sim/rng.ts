/**
 * A small seeded pseudo-random generator (mulberry32). Everything random in the simulator
 * (MAC addresses, MR key bytes, memory addresses) comes from one of these, so the same seed
 * and the same calls give byte-identical results.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A uniformly distributed 32-bit unsigned integer. */
  u32(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** A random byte (0..255). */
  byte(): number {
    return this.u32() & 0xff;
  }
}
