/**
 * Work queue entries and the rings that hold them. Slots are reused (a ring never
 * reallocates a WQE once the slot exists), so posting allocates nothing on the hot path.
 * SGEs are copied into the WQE at post time, as the C provider copies them into its ring.
 */
import type { WcReason } from "../verbs/wc-reason.js";
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
  /** Why it failed, when the simulator knows (sim/explain.ts). */
  reason: WcReason | undefined = undefined;
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

/**
 * A ring of `capacity` slots with monotonically increasing producer/consumer counters.
 *
 * The slot objects are fewer than `capacity`: a power of two that holds the WQEs live at
 * once (consumer up to and including the producer slot), grown when a post needs more. A
 * 1024-deep queue used 64 WQEs at a time then cycles through 64 warm objects instead of
 * 1024 cold ones. Nothing holds a slot beyond its WQE's life (packets referencing a WQE are
 * all delivered before the verb that queued them returns), and growing moves the live
 * objects themselves, so which object serves which counter value is not observable.
 */
export class Ring<T> {
  private slots: (T | undefined)[] = [];
  /** The number of slots (the array fills lazily): a power of two. */
  private size = 16;
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
  /** The slot for counter value `i` (cons <= i <= prod). */
  at(i: number): T {
    // size is a power of two; `&` keeps the low bits of any counter below 2^53.
    const idx = i & (this.size - 1);
    let s = this.slots[idx];
    if (s === undefined) {
      s = this.make();
      this.slots[idx] = s;
    }
    return s;
  }
  /** The slot the next post writes into (call `advance()` to publish it). */
  producerSlot(): T {
    if (this.prod - this.cons >= this.size) this.grow(this.prod - this.cons + 1);
    return this.at(this.prod);
  }
  /** Makes room for `need` slots, keeping each live WQE object at its counter value. */
  private grow(need: number): void {
    let size = this.size;
    while (size < need) size *= 2;
    const old = this.slots;
    const oldSize = this.size;
    const slots: (T | undefined)[] = new Array<T | undefined>(size).fill(undefined);
    const moved = new Set<T>();
    for (let i = this.cons; i < this.prod; i++) {
      const s = old[i % oldSize];
      if (s !== undefined) {
        slots[i % size] = s;
        moved.add(s);
      }
    }
    // The spare objects fill free slots (they are reused, not reallocated).
    let k = 0;
    for (const s of old) {
      if (s === undefined || moved.has(s)) continue;
      while (k < size && slots[k] !== undefined) k++;
      if (k === size) break;
      slots[k] = s;
    }
    this.slots = slots;
    this.size = size;
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
