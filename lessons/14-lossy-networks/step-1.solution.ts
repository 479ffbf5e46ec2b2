import type { Verbs, VerbsContext, VerbsQp } from "verbslab";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_MTU_1024,
  IBV_QPS_INIT,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPT_RC,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_AV,
  IBV_QP_DEST_QPN,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_PATH_MTU,
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_RETRY_CNT,
  IBV_QP_RNR_RETRY,
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
  IBV_QP_TIMEOUT,
  IBV_SEND_SIGNALED,
  IBV_WR_RDMA_WRITE,
  readCounter,
} from "verbslab";

/** Each run: 4 WRITEs of 32 KiB, 32 packets each at path_mtu 1024 = 128 request packets. */
const WRITES = 4;
const WRITE_BYTES = 32 * 1024;
const PACKETS = WRITES * (WRITE_BYTES / 1024);

export default async function main(verbs: Verbs) {
  // The requester on rxe0, the responder on rxe1: only traffic between the two devices
  // crosses the lab link (a device's packets to itself never leave rxe).
  const a = await openSide(verbs, "rxe0");
  const b = await openSide(verbs, "rxe1");
  await connect(a.qp, b.qp.qp_num, b.gid, 0);
  await connect(b.qp, a.qp.qp_num, a.gid, IBV_ACCESS_REMOTE_WRITE);

  const sweep = [];
  let intact = 0;
  for (const loss of [0, 0.001, 0.01, 0.05]) {
    // A different pattern per run, so a run cannot pass on the previous run's bytes.
    const pattern = new Uint8Array(WRITES * WRITE_BYTES).map((_, i) => (i * 7 + loss * 1000) & 0xff);
    await a.mr.write(0, pattern);
    await b.mr.write(0, new Uint8Array(WRITES * WRITE_BYTES));
    const ra = await a.ctx.queryCounters();
    const rb = await b.ctx.queryCounters();
    await verbs.lab.setLink({ loss });
    const t0 = await verbs.now();
    try {
      for (let i = 0; i < WRITES; i++)
        await a.qp.postSend({
          wr_id: i,
          opcode: IBV_WR_RDMA_WRITE,
          send_flags: IBV_SEND_SIGNALED,
          sg_list: [a.mr.sge(i * WRITE_BYTES, WRITE_BYTES)],
          rdma: { remote_addr: b.mr.addr + i * WRITE_BYTES, rkey: b.mr.rkey },
        });
      await a.cq.pollWait(WRITES, 60000);
    } finally {
      // Always take the fault away again: the link outlives this program.
      await verbs.lab.clearLink();
    }
    const ms = (await verbs.now()) - t0;
    const got = await b.mr.read(0, WRITES * WRITE_BYTES);
    if (got.every((v, i) => v === pattern[i])) intact++;
    const da = await delta(a.ctx, ra);
    const db = await delta(b.ctx, rb);
    sweep.push({
      loss,
      ms: Math.round(ms * 10) / 10,
      MBps: ms > 0 ? Math.round((WRITES * WRITE_BYTES) / 1e3 / ms) : null,
      extra_packets: da("sent_pkts") - PACKETS,
      rcvd_seq_err: da("rcvd_seq_err"),
      completer_retry_err: da("completer_retry_err"),
      out_of_seq_request: db("out_of_seq_request"),
      duplicate_request: db("duplicate_request"),
    });
  }
  // The app plots "sweep": loss against time and retransmitted packets.
  await verbs.log("sweep", sweep);
  await verbs.log("intact_runs", intact);
  const clean = sweep[0]!;
  const worst = sweep[3]!;
  await verbs.log("extra_packets_at_0", clean.extra_packets);
  await verbs.log("extra_packets_at_5", worst.extra_packets);
  await verbs.log("naks_at_5", worst.out_of_seq_request);
  await verbs.log("slower_at_5", worst.ms > clean.ms);
}

/** A counter reader: how much each counter (rxe's name) grew since `before`. */
async function delta(ctx: VerbsContext, before: Record<string, number>) {
  const now = await ctx.queryCounters();
  return (name: "sent_pkts" | "rcvd_seq_err" | "completer_retry_err" | "out_of_seq_request" | "duplicate_request") =>
    (readCounter(now, ctx.device, name) ?? 0) - (readCounter(before, ctx.device, name) ?? 0);
}

/** One side: its device, a CQ, an RC QP and a 128 KiB buffer the peer may write. */
async function openSide(verbs: Verbs, name: string) {
  const ctx = await verbs.openDevice(name);
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(64);
  const cap = { max_send_wr: 16, max_recv_wr: 16, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const qp = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const mr = await pd.regMr(WRITES * WRITE_BYTES, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  return { ctx, gid, cq, qp, mr };
}

/** RESET → INIT → RTR → RTS toward the peer; timeout 17 (537 ms) and retry_cnt 7 (ibv_rc_pingpong uses 14, 67 ms: a busy host can miss that with no packet lost). */
async function connect(qp: VerbsQp, remoteQpn: number, dgid: string, access: number) {
  await qp.modify(
    { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: access },
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
  );
  await qp.modify(
    {
      qp_state: IBV_QPS_RTR,
      path_mtu: IBV_MTU_1024,
      dest_qp_num: remoteQpn,
      rq_psn: 0,
      max_dest_rd_atomic: 1,
      min_rnr_timer: 12,
      ah_attr: { is_global: 1, port_num: 1, grh: { dgid, sgid_index: 0, hop_limit: 1 } },
    },
    IBV_QP_STATE |
      IBV_QP_AV |
      IBV_QP_PATH_MTU |
      IBV_QP_DEST_QPN |
      IBV_QP_RQ_PSN |
      IBV_QP_MAX_DEST_RD_ATOMIC |
      IBV_QP_MIN_RNR_TIMER,
  );
  await qp.modify(
    { qp_state: IBV_QPS_RTS, timeout: 17, retry_cnt: 7, rnr_retry: 7, sq_psn: 0, max_rd_atomic: 1 },
    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
  );
}
