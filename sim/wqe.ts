/**
 * Work queue entries and the rings that hold them. Slots are reused (a ring never
 * reallocates a WQE once the slot exists), so posting allocates nothing on the hot path.
 * SGEs are copied into the WQE at post time, as the C provider copies them into its ring.
 */
import type { SimAh } from "./ah.js";
import type { SimMr } from "./mr.js";

export const WQE_POSTED = 0;
export const WQE_PENDING = 1;
export const WQE_DONE = 2;
export const WQE_ERROR = 3;
/** Some packets of a multi-packet message are out. */
export const WQE_PROCESSING = 4;

/**
 * The data cursor of a WQE (rxe's `struct rxe_dma_info`). The SGE fields are typed arrays
 * sized for the QP's max SGEs, as the provider's ring slots are: posting writes into them
 * without growing or re-typing a JS array (a measurable cost on every post).
 */
export class Dma {
  numSge = 0;
  readonly addr: Float64Array;
  readonly len: Uint32Array;
  readonly lkey: Uint32Array;
  /**
   * The MR each SGE's lkey resolved to (a cache: rxe looks the key up on every copy; the
   * answer only changes when the MR is deregistered, which `destroyed` tells).
   */
  readonly mr: (SimMr | null)[];
  length = 0;
  resid = 0;
  curSge = 0;
  sgeOffset = 0;

  constructor(maxSge: number) {
    this.addr = new Float64Array(maxSge);
    this.len = new Uint32Array(maxSge);
    this.lkey = new Uint32Array(maxSge);
    this.mr = new Array<SimMr | null>(maxSge).fill(null);
  }

  reset(): void {
    this.resid = this.length;
    this.curSge = 0;
    this.sgeOffset = 0;
  }
}

export class SendWqe {
  constructor(maxSge: number) {
    this.dma = new Dma(maxSge);
  }
  wr_id = 0;
  opcode = 0;
  send_flags = 0;
  /** The work-request class bits (WR_* below) for this opcode on this QP type. */
  wrMask = 0;
  readonly dma: Dma;
  inline: Uint8Array | null = null;
  imm_data = 0;
  remote_addr = 0;
  rkey = 0;
  compare_add = 0n;
  swap = 0n;
  ah: SimAh | null = null;
  remote_qpn = 0;
  remote_qkey = 0;
  state = WQE_POSTED;
  status = 0;
  first_psn = 0;
  last_psn = 0;
  /** Next remote address to use (advances per packet). */
  iova = 0;
  hasRdAtomic = false;
}

export class RecvWqe {
  wr_id = 0;
  readonly dma: Dma;
  constructor(maxSge: number) {
    this.dma = new Dma(maxSge);
  }
}

/** Work-request classes, as rxe's WR_*_MASK. */
export const WR_INLINE = 1 << 0;
export const WR_ATOMIC = 1 << 1;
export const WR_SEND = 1 << 2;
export const WR_READ = 1 << 3;
export const WR_WRITE = 1 << 4;
export const WR_LOCAL_OP = 1 << 5;
export const WR_READ_OR_WRITE = WR_READ | WR_WRITE;
export const WR_WRITE_OR_SEND = WR_WRITE | WR_SEND;
export const WR_ATOMIC_OR_READ = WR_ATOMIC | WR_READ;

/** A ring of `capacity` slots with monotonically increasing producer/consumer counters. */
export class Ring<T> {
  slots: T[] = [];
  prod = 0;
  cons = 0;
  constructor(
    readonly capacity: number,
    private readonly make: () => T,
  ) {}

  get count(): number {
    return this.prod - this.cons;
  }
  get full(): boolean {
    return this.prod - this.cons >= this.capacity;
  }
  /** The slot for counter value `i`. */
  at(i: number): T {
    const idx = i % this.capacity;
    let s = this.slots[idx];
    if (s === undefined) {
      s = this.make();
      this.slots[idx] = s;
    }
    return s;
  }
  /** The slot the next post writes into (call `advance()` to publish it). */
  producerSlot(): T {
    return this.at(this.prod);
  }
  advance(): void {
    this.prod++;
  }
  head(): T | null {
    return this.prod === this.cons ? null : this.at(this.cons);
  }
  pop(): void {
    this.cons++;
  }
  clear(): void {
    this.cons = this.prod;
  }
}
