/**
 * The loss scenario of verbs/conformance/faults.test.ts ("loss … on rxe0 ↔ rxe1", sim/RXE-FACTS.md
 * §11) on the simulator alone, for one seed: RC rxe0 → rxe1, path_mtu 1024, timeout 14,
 * retry_cnt 7, netem loss p on both veths; four 32 KiB WRITEs, then eight 2000-byte SENDs
 * (144 request packets without loss). Returns the counter deltas §11 tabulates.
 * scripts/loss-sweep.ts prints them over seeds; sim/loss.test.ts pins their median.
 */
import { IBV_QPT_RC, IBV_WR_RDMA_WRITE, IBV_WR_SEND, IBV_WC_SUCCESS } from "../verbs/constants.js";
import type { Context } from "../verbs/backend.js";
import { createSimBackend } from "./index.js";
import { ALL_ACCESS, connectRc, type End } from "./testing.js";

export interface LossRun {
  /** Requester (rxe0). */
  sent_pkts: number;
  rcvd_seq_err: number;
  completer_retry_err: number;
  /** Responder (rxe1). */
  out_of_seq_request: number;
  duplicate_request: number;
  resp_sent_pkts: number;
  /** Every WRITE and SEND completed with SUCCESS and every byte arrived. */
  ok: boolean;
}

const WRITE_BYTES = 32 * 1024;
const WRITES = 4;
const SENDS = 8;
const SEND_BYTES = 2000;

/** The harness's end (verbs/conformance/harness.ts pair): every send signaled, a send and a receive CQ. */
function end(ctx: Context) {
  const pd = ctx.allocPd();
  const scq = ctx.createCq(64);
  const rcq = ctx.createCq(64);
  const qp = pd.createQp({
    send_cq: scq,
    recv_cq: rcq,
    qp_type: IBV_QPT_RC,
    sq_sig_all: 1,
    cap: { max_send_wr: 16, max_recv_wr: 16, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
  });
  const mr = pd.regMr(WRITE_BYTES * WRITES, ALL_ACCESS);
  const e: End = { ctx, pd, cq: scq, qp, mr };
  return { ...e, scq, rcq };
}

export async function lossRun(
  seed: number,
  loss: number,
  seen?: (b: ReturnType<typeof createSimBackend>) => void,
): Promise<LossRun> {
  const b = createSimBackend({ seed });
  const a = end(b.openDevice("rxe0"));
  const z = end(b.openDevice("rxe1"));
  const opts = { timeout: 14, retry_cnt: 7 };
  connectRc(a, z, opts);
  connectRc(z, a, opts);
  const src = a.mr;
  const dst = z.mr;
  for (let i = 0; i < src.bytes.length; i++) src.bytes[i] = (i * 7 + seed) & 0xff;
  const ca = a.ctx.queryCounters(1);
  const cz = z.ctx.queryCounters(1);
  b.lab.setLink({ loss });
  let ok = true;
  for (let i = 0; i < WRITES; i++)
    a.qp.postSend({
      wr_id: i,
      opcode: IBV_WR_RDMA_WRITE,
      sg_list: [src.sge(i * WRITE_BYTES, WRITE_BYTES)],
      rdma: { remote_addr: dst.addr + i * WRITE_BYTES, rkey: dst.rkey },
    });
  const wcs = await a.scq.pollWait(WRITES, 60_000);
  ok &&= wcs.length === WRITES && wcs.every((w, i) => w.status === IBV_WC_SUCCESS && w.wr_id === i);
  ok &&= Buffer.from(dst.bytes).equals(Buffer.from(src.bytes));
  for (let i = 0; i < SENDS; i++) z.qp.postRecv({ wr_id: i, sg_list: [dst.sge(i * SEND_BYTES, SEND_BYTES)] });
  for (let i = 0; i < SENDS; i++)
    a.qp.postSend({ wr_id: 100 + i, opcode: IBV_WR_SEND, sg_list: [src.sge(i * 1000, SEND_BYTES)] });
  const sends = await a.scq.pollWait(SENDS, 60_000);
  const recvs = await z.rcq.pollWait(SENDS, 60_000);
  ok &&= sends.length === SENDS && sends.every((w) => w.status === IBV_WC_SUCCESS);
  ok &&= recvs.length === SENDS && recvs.every((w, i) => w.status === IBV_WC_SUCCESS && w.wr_id === i);
  for (let i = 0; i < SENDS; i++)
    ok &&= Buffer.from(dst.bytes.subarray(i * SEND_BYTES, (i + 1) * SEND_BYTES)).equals(
      Buffer.from(src.bytes.subarray(i * 1000, i * 1000 + SEND_BYTES)),
    );
  seen?.(b);
  b.lab.clearLink();
  await b.sleep(25);
  const da = a.ctx.queryCounters(1);
  const dz = z.ctx.queryCounters(1);
  const d = (now: Record<string, number>, before: Record<string, number>, k: string) =>
    (now[k] ?? 0) - (before[k] ?? 0);
  return {
    sent_pkts: d(da, ca, "sent_pkts"),
    rcvd_seq_err: d(da, ca, "rcvd_seq_err"),
    completer_retry_err: d(da, ca, "completer_retry_err"),
    out_of_seq_request: d(dz, cz, "out_of_seq_request"),
    duplicate_request: d(dz, cz, "duplicate_request"),
    resp_sent_pkts: d(dz, cz, "sent_pkts"),
    ok,
  };
}

/** The median of `xs` (the lower middle one for an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s[(s.length - 1) >> 1];
}
