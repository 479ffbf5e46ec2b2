/**
 * Moving bytes between SGE lists and memory, with rxe's checks (copy_data in rxe_mr.c):
 * each SGE's lkey must name an MR of the QP's PD with the needed access, and the bytes must
 * lie inside it. Payload bytes are read straight from the sender's memory when they land
 * (the wire is instantaneous), so nothing is copied twice.
 */
import type { SimDevice } from "./device.js";
import { inRange, lookupMr, type SimMr } from "./mr.js";
import { SRC_BYTES, SRC_WQE, type Packet } from "./packets.js";
import type { SimPd } from "./pd.js";
import type { Dma } from "./wqe.js";

export const COPY_OK = 0;
/** A bad lkey (or too little room): copy_data's -EINVAL. */
export const COPY_EINVAL = 1;
/** Outside the MR: mr_check_range's -EFAULT. */
export const COPY_EFAULT = 2;

/** lookup_mr for SGE `k` of `dma`, using (and filling) the WQE's cache. */
export function sgeMr(dev: SimDevice, pd: SimPd, dma: Dma, k: number, access: number): SimMr | null {
  const c = dma.mr[k];
  if (c && !c.destroyed && c.lkey === dma.lkey[k] && (c.access & access) === access) return c;
  const mr = lookupMr(dev, pd, dma.lkey[k], access, false);
  dma.mr[k] = mr;
  return mr;
}

/** Copies up to this many bytes a 32-bit word at a time when they are aligned (see copyBytes). */
const WORD_COPY_MAX = 256;

/** A byte array's Int32Array twin over the same memory (null when it cannot have one). */
interface Words {
  bytes: Uint8Array;
  words: Int32Array | null;
  buffer: ArrayBufferLike;
  base: number;
}

/**
 * The word views of the last few arrays copied to or from (a data path uses the same two or
 * three MR arrays over and over; the cache keeps at most WORD_CACHE of them reachable).
 */
const WORD_CACHE = 4;
const wordCache: Words[] = [];
let wordNext = 0;

function wordsOf(a: Uint8Array): Words {
  for (let k = 0; k < wordCache.length; k++) if (wordCache[k].bytes === a) return wordCache[k];
  const buffer = a.buffer;
  // A resizable or growable buffer may change length under a fixed-length Int32Array: skip it.
  const flexible = (buffer as { resizable?: boolean }).resizable || (buffer as { growable?: boolean }).growable;
  const words = a.byteOffset % 4 === 0 && !flexible ? new Int32Array(buffer, a.byteOffset, a.length >> 2) : null;
  const w: Words = { bytes: a, words, buffer, base: a.byteOffset };
  if (wordCache.length < WORD_CACHE) wordCache.push(w);
  else wordCache[wordNext++ % WORD_CACHE] = w;
  return w;
}

/**
 * Copies n bytes. Small copies avoid allocating a subarray view (which costs more than the
 * copy): a word at a time when offsets and length are multiples of 4 and the two ranges do
 * not overlap (then every way of copying gives the same bytes), else byte by byte up to 16.
 */
export function copyBytes(dst: Uint8Array, dstOff: number, src: Uint8Array, srcOff: number, n: number): void {
  if (n <= WORD_COPY_MAX && ((dstOff | srcOff | n) & 3) === 0 && copyWords(dst, dstOff, src, srcOff, n)) return;
  if (n <= 16) {
    for (let i = 0; i < n; i++) dst[dstOff + i] = src[srcOff + i];
  } else {
    dst.set(src.subarray(srcOff, srcOff + n), dstOff);
  }
}

function copyWords(dst: Uint8Array, dstOff: number, src: Uint8Array, srcOff: number, n: number): boolean {
  const d = wordsOf(dst);
  const s = wordsOf(src);
  const dw = d.words;
  const sw = s.words;
  if (dw === null || sw === null) return false;
  if (d.buffer === s.buffer) {
    const a = d.base + dstOff;
    const b = s.base + srcOff;
    if (a < b + n && b < a + n) return false;
  }
  wordLoop(dw, dstOff >> 2, sw, srcOff >> 2, n >> 2);
  return true;
}

/** Copies `count` 32-bit words, sw[si…] to dw[di…] (ranges that do not overlap). */
function wordLoop(dw: Int32Array, di: number, sw: Int32Array, si: number, count: number): void {
  const end = di + count;
  // Four words per iteration: the loop's own checks cost as much as the copying.
  while (di + 4 <= end) {
    dw[di] = sw[si];
    dw[di + 1] = sw[si + 1];
    dw[di + 2] = sw[si + 2];
    dw[di + 3] = sw[si + 3];
    di += 4;
    si += 4;
  }
  while (di < end) dw[di++] = sw[si++];
}

/**
 * Copies n bytes from MR `s` at byte offset sOff to MR `d` at dOff: copyBytes, but small
 * aligned copies go through the MRs' own word views (no cache search, no subarray).
 */
export function copyMr(d: SimMr, dOff: number, s: SimMr, sOff: number, n: number): void {
  const dw = d.words;
  const sw = s.words;
  if (n <= WORD_COPY_MAX && ((dOff | sOff | n) & 3) === 0 && dw !== null && sw !== null) {
    if (d.buffer === s.buffer) {
      const a = d.bytes.byteOffset + dOff;
      const b = s.bytes.byteOffset + sOff;
      if (a < b + n && b < a + n) {
        copyBytes(d.bytes, dOff, s.bytes, sOff, n);
        return;
      }
    }
    wordLoop(dw, dOff >> 2, sw, sOff >> 2, n >> 2);
    return;
  }
  copyBytes(d.bytes, dOff, s.bytes, sOff, n);
}

/**
 * The requester's side of copy_data: checks the next `len` bytes of the WQE's SGEs (access
 * 0: any MR of the PD) and advances the cursor. The bytes themselves move at delivery.
 */
export function gatherCheck(dev: SimDevice, pd: SimPd, dma: Dma, len: number): number {
  if (len === 0) return COPY_OK;
  if (len > dma.resid) return COPY_EINVAL;
  let sge = dma.curSge;
  let off = dma.sgeOffset;
  let left = len;
  while (left > 0) {
    if (sge >= dma.numSge) return COPY_EINVAL;
    const sgeLen = dma.len[sge];
    if (off >= sgeLen) {
      sge++;
      off = 0;
      continue;
    }
    const mr = sgeMr(dev, pd, dma, sge, 0);
    if (!mr) return COPY_EINVAL;
    const n = left < sgeLen - off ? left : sgeLen - off;
    if (!inRange(mr, dma.addr[sge] + off, n)) return COPY_EFAULT;
    left -= n;
    off += n;
  }
  dma.curSge = sge;
  dma.sgeOffset = off;
  dma.resid -= len;
  return COPY_OK;
}

/** Reads `n` payload bytes of `pkt` from payload offset `pos` into dst (sources were checked when sent). */
export function readPayload(pkt: Packet, pos: number, dst: Uint8Array, dstOff: number, n: number): void {
  if (pkt.srcKind === SRC_BYTES) {
    copyBytes(dst, dstOff, pkt.srcBytes, pkt.srcOff + pos, n);
    return;
  }
  if (pkt.srcKind !== SRC_WQE) return;
  const wqe = pkt.srcWqe!;
  const qp = pkt.srcQp!;
  const dma = wqe.dma;
  if (dma.numSge === 1) {
    const mr = sgeMr(qp.device, qp.pd, dma, 0, 0)!;
    copyBytes(dst, dstOff, mr.bytes, dma.addr[0] - mr.addr + pkt.srcOff + pos, n);
    return;
  }
  let skip = pkt.srcOff + pos;
  let sge = 0;
  while (sge < dma.numSge && skip >= dma.len[sge]) {
    skip -= dma.len[sge];
    sge++;
  }
  let left = n;
  while (left > 0 && sge < dma.numSge) {
    const mr = sgeMr(qp.device, qp.pd, dma, sge, 0)!;
    const take = Math.min(left, dma.len[sge] - skip);
    copyBytes(dst, dstOff, mr.bytes, dma.addr[sge] + skip - mr.addr, take);
    dstOff += take;
    left -= take;
    skip = 0;
    sge++;
  }
}

/**
 * The responder's (and the READ completer's) copy_data into a receive SGE list: needs
 * LOCAL_WRITE. The bytes come from `pkt`'s payload at `base` (when pkt is given) or from
 * `bytes[base ..]` (no closures: this is the hot path).
 */
export function scatter(
  dev: SimDevice,
  pd: SimPd,
  dma: Dma,
  len: number,
  pkt: Packet | null,
  bytes: Uint8Array | null,
  base: number,
): number {
  if (len === 0) return COPY_OK;
  if (len > dma.resid) return COPY_EINVAL;
  let sge = dma.curSge;
  let off = dma.sgeOffset;
  let pos = 0;
  while (pos < len) {
    if (sge >= dma.numSge) return COPY_EINVAL;
    const sgeLen = dma.len[sge];
    if (off >= sgeLen) {
      sge++;
      off = 0;
      continue;
    }
    const mr = sgeMr(dev, pd, dma, sge, 1 /* IBV_ACCESS_LOCAL_WRITE */);
    if (!mr) return COPY_EINVAL;
    const n = len - pos < sgeLen - off ? len - pos : sgeLen - off;
    const va = dma.addr[sge] + off;
    if (!inRange(mr, va, n)) return COPY_EFAULT;
    if (pkt) readPayload(pkt, base + pos, mr.bytes, va - mr.addr, n);
    else copyBytes(mr.bytes, va - mr.addr, bytes!, base + pos, n);
    pos += n;
    off += n;
  }
  dma.curSge = sge;
  dma.sgeOffset = off;
  dma.resid -= len;
  return COPY_OK;
}

/**
 * scatter() of `pkt`'s payload into a one-SGE receive WQE from a one-SGE send WQE — what
 * small SENDs nearly always are — with scatter's checks in its order but without its loops
 * (with one SGE and len ≤ resid, the cursor is on SGE 0 and len bytes remain in it).
 * Anything else goes to scatter().
 */
export function scatterPacket(dev: SimDevice, pd: SimPd, dma: Dma, len: number, pkt: Packet): number {
  const src = pkt.srcKind === SRC_WQE ? pkt.srcWqe!.dma : null;
  if (len === 0 || dma.numSge !== 1 || src === null || src.numSge !== 1)
    return scatter(dev, pd, dma, len, pkt, null, 0);
  if (len > dma.resid) return COPY_EINVAL;
  const mr = sgeMr(dev, pd, dma, 0, 1 /* IBV_ACCESS_LOCAL_WRITE */);
  if (!mr) return COPY_EINVAL;
  const va = dma.addr[0] + dma.sgeOffset;
  if (!inRange(mr, va, len)) return COPY_EFAULT;
  const sqp = pkt.srcQp!;
  const smr = sgeMr(sqp.device, sqp.pd, src, 0, 0)!;
  copyMr(mr, va - mr.addr, smr, src.addr[0] - smr.addr + pkt.srcOff, len);
  dma.sgeOffset += len;
  dma.resid -= len;
  return COPY_OK;
}
