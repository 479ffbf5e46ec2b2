/**
 * struct ibv_mr over JavaScript memory, with rxe's access checks (ib_check_mr_access), key
 * format (lkey = pool index << 8 | random byte; rkey = lkey only with a REMOTE_* bit) and
 * the lookups the data path does (rxe_mr.c: lookup_mr, mr_check_range).
 */
import {
  IBV_ACCESS_HUGETLB,
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_MW_BIND,
  IBV_ACCESS_ON_DEMAND,
  IBV_ACCESS_RELAXED_ORDERING,
  IBV_ACCESS_REMOTE_ATOMIC,
  IBV_ACCESS_REMOTE_READ,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_ACCESS_ZERO_BASED,
} from "../verbs/constants.js";
import type { Mr } from "../verbs/backend.js";
import { argError, fail } from "../verbs/errors.js";
import type { Sge } from "../verbs/types.js";
import { alive, int, optInt, typeErr } from "./check.js";
import { mrBytesOfLength } from "../verbs/args.js";
import type { SimDevice } from "./device.js";
import type { SimPd } from "./pd.js";
import { because } from "../verbs/verb-failure.js";

const KNOWN_ACCESS =
  IBV_ACCESS_LOCAL_WRITE |
  IBV_ACCESS_REMOTE_WRITE |
  IBV_ACCESS_REMOTE_READ |
  IBV_ACCESS_REMOTE_ATOMIC |
  IBV_ACCESS_MW_BIND |
  IBV_ACCESS_ZERO_BASED |
  IBV_ACCESS_ON_DEMAND |
  IBV_ACCESS_HUGETLB |
  IBV_ACCESS_RELAXED_ORDERING;
const REMOTE = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
/** rxe's MR pool range ends at index 0x80000 (max_mr 524287). */
const MAX_MR_INDEX = 0x80000;

export class SimMr implements Mr {
  destroyed = false;
  readonly index: number;
  /** bytes.buffer, kept: the data path compares buffers per packet and the getter is not free. */
  readonly buffer: ArrayBufferLike;
  /** bytes.length and the address just past the MR, kept for the same reason (mr_check_range runs per packet). */
  readonly byteLength: number;
  readonly end: number;
  /**
   * An Int32Array over the same bytes (null when bytes.byteOffset is not a multiple of 4 or
   * the buffer can be resized): small aligned copies move words through it (dma.ts copyMr).
   */
  readonly words: Int32Array | null;

  constructor(
    readonly pd: SimPd,
    readonly bytes: Uint8Array,
    readonly addr: number,
    readonly lkey: number,
    readonly rkey: number,
    readonly access: number,
  ) {
    this.index = lkey >>> 8;
    this.buffer = bytes.buffer;
    this.byteLength = bytes.length;
    this.end = addr + bytes.length;
    const b = bytes.buffer as { resizable?: boolean; growable?: boolean };
    this.words =
      bytes.byteOffset % 4 === 0 && !b.resizable && !b.growable
        ? new Int32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 4))
        : null;
  }

  get length(): number {
    return this.bytes.length;
  }

  sge(offset = 0, length?: number): Sge {
    alive("sge", "MR", this);
    const off = int("sge", "offset", offset);
    const len = optInt("sge", "length", length, this.bytes.length - off);
    if (off < 0 || len < 0 || off + len > this.bytes.length)
      throw argError(RangeError, "sge", {
        kind: "mr-range",
        offset: off,
        length: len,
        mrLength: this.bytes.length,
      });
    return { addr: this.addr + off, length: len, lkey: this.lkey };
  }

  dereg(): void {
    alive("ibv_dereg_mr", "MR", this);
    this.destroyed = true;
    this.pd.context.dev.mrs.delete(this.index);
    this.pd.mrCount--;
  }
}

export function regMr(pd: SimPd, memory: ArrayBuffer | ArrayBufferView | number, access: number): SimMr {
  const verb = "ibv_reg_mr";
  const acc = int(verb, "access", access);
  let bytes: Uint8Array | null = null;
  let length = 0;
  if (typeof memory === "number") {
    length = int(verb, "length", memory);
  } else if (
    memory instanceof ArrayBuffer ||
    (typeof SharedArrayBuffer !== "undefined" && memory instanceof SharedArrayBuffer)
  ) {
    bytes = new Uint8Array(memory);
  } else if (ArrayBuffer.isView(memory)) {
    bytes = new Uint8Array(memory.buffer, memory.byteOffset, memory.byteLength);
  } else {
    throw typeErr(verb, "memory", "memory", memory);
  }
  // Access flags are checked first (ib_check_mr_access in uverbs), then the memory.
  if (acc < 0 || acc & ~KNOWN_ACCESS)
    fail(
      verb,
      "EINVAL",
      because({ kind: "access-unknown", bits: (acc & ~KNOWN_ACCESS) >>> 0 }, { attribute: "access" }),
    );
  if (acc & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC) && !(acc & IBV_ACCESS_LOCAL_WRITE))
    fail(
      verb,
      "EINVAL",
      because({ kind: "remote-needs-local-write", access: acc }, { attribute: "IBV_ACCESS_LOCAL_WRITE" }),
    );
  if (acc & IBV_ACCESS_ON_DEMAND)
    fail(verb, "EINVAL", because({ kind: "no-odp" }, { attribute: "IBV_ACCESS_ON_DEMAND" }));
  if (bytes === null) {
    bytes = mrBytesOfLength(verb, length);
  }
  if (bytes.length === 0) fail(verb, "EINVAL", because({ kind: "length-zero" }, { attribute: "length" }));
  const dev = pd.context.dev;
  if (dev.nextMrIndex > MAX_MR_INDEX) fail(verb, "ENOMEM", because({ kind: "mr-pool-exhausted" }));
  // Nothing below throws: a pool index is taken only by an MR that exists.
  const index = dev.nextMrIndex++;
  const lkey = ((index << 8) | pd.context.world.rng.byte()) >>> 0;
  const rkey = acc & REMOTE ? lkey : 0;
  const addr = pd.context.world.memory.baseOf(bytes.buffer) + bytes.byteOffset;
  const mr = new SimMr(pd, bytes, addr, lkey, rkey, acc);
  dev.mrs.set(index, mr);
  pd.mrCount++;
  return mr;
}

/** rxe's lookup_mr: the MR named by `key` if it is this PD's, has `access`, and the key byte matches. */
export function lookupMr(dev: SimDevice, pd: SimPd, key: number, access: number, remote: boolean): SimMr | null {
  const mr = dev.mrs.get(key >>> 8);
  if (mr === undefined) return null;
  if ((remote ? mr.rkey : mr.lkey) !== key || mr.pd !== pd || (mr.access & access) !== access) return null;
  return mr;
}

/** rxe's mr_check_range: true when [iova, iova+length) lies inside the MR. */
export function inRange(mr: SimMr, iova: number, length: number): boolean {
  return iova >= mr.addr && length <= mr.byteLength && iova <= mr.end - length;
}
