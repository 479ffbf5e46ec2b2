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
function sgeMr(dev: SimDevice, pd: SimPd, dma: Dma, k: number, access: number): SimMr | null {
  const c = dma.mr[k];
  if (c && !c.destroyed && c.lkey === dma.lkey[k] && (c.access & access) === access) return c;
  const mr = lookupMr(dev, pd, dma.lkey[k], access, false);
  dma.mr[k] = mr;
  return mr;
}

/** Copies n bytes; small copies byte by byte (cheaper than allocating a subarray view). */
export function copyBytes(dst: Uint8Array, dstOff: number, src: Uint8Array, srcOff: number, n: number): void {
  if (n <= 16) {
    for (let i = 0; i < n; i++) dst[dstOff + i] = src[srcOff + i];
  } else {
    dst.set(src.subarray(srcOff, srcOff + n), dstOff);
  }
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
