/**
 * The JavaScript side of rdma-core's `ibv_rc_pingpong` (libibverbs/examples/rc_pingpong.c):
 * its TCP exchange of "LID:QPN:PSN:GID" on port 18515, its bring-up values, and its
 * ping-pong loop, so a VerbsLab program can talk to an unmodified `ibv_rc_pingpong` as its
 * client or its server. Written against the VerbsBackend contract (lessons can reuse it);
 * only the native backend can reach a real peer, of course.
 *
 * The wire message is `sprintf("%04x:%06x:%06x:%s", lid, qpn, psn, gid)` sent as a fixed
 * 52-byte buffer (51 characters and the NUL), where gid is the 16 raw GID bytes as 32 hex
 * digits (gid_to_wire_gid). The client writes its message, reads the server's, then writes
 * "done\0"; the server reads the client's, moves its QP to RTS, answers, and reads "done".
 */
import { Socket, createServer } from "node:net";
import type { Context, Cq, Mr, Pd, Qp, VerbsBackend } from "../verbs/backend.js";
import {
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
  IBV_ACCESS_LOCAL_WRITE,
  IBV_SEND_SIGNALED,
  IBV_WC_SUCCESS,
  IBV_WR_SEND,
  ibv_wc_status,
  nameOf,
} from "../verbs/constants.js";

/** What each side tells the other. */
export interface PingpongDest {
  lid: number;
  qpn: number;
  psn: number;
  /** IPv6 text, "::" when the peer runs without -g. */
  gid: string;
}

/** sizeof "0000:000000:000000:00000000000000000000000000000000" */
export const PINGPONG_MSG_SIZE = 52;
export const PINGPONG_PORT = 18515;
const RECV_WRID = 1;
const SEND_WRID = 2;

function gidToBytes(gid: string): Uint8Array {
  const out = new Uint8Array(16);
  let s = gid.trim().toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (v4) s = s.slice(0, v4.index) + "0:0";
  const [head, tail] = s.includes("::") ? s.split("::") : [s, undefined];
  const h = head ? head.split(":").filter((x) => x !== "") : [];
  const t = tail ? tail.split(":").filter((x) => x !== "") : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t];
  if (groups.length !== 8) throw new Error(`not a GID: ${gid}`);
  groups.forEach((g, i) => {
    const v = parseInt(g, 16);
    out[2 * i] = v >> 8;
    out[2 * i + 1] = v & 0xff;
  });
  if (v4) out.set(v4.slice(1, 5).map(Number), 12);
  return out;
}

function bytesToGid(b: Uint8Array): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i] << 8) | b[i + 1]).toString(16));
  // Compress the longest run of zero groups, as inet_ntop does.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  if (best < 0) return groups.join(":");
  return `${groups.slice(0, best).join(":")}::${groups.slice(best + bestLen).join(":")}`;
}

/** The 52-byte message: "%04x:%06x:%06x:%s" and a NUL. */
export function formatDest(d: PingpongDest): Buffer {
  const hex = (n: number, w: number) => n.toString(16).padStart(w, "0");
  const wire = Buffer.from(gidToBytes(d.gid)).toString("hex");
  const text = `${hex(d.lid, 4)}:${hex(d.qpn, 6)}:${hex(d.psn, 6)}:${wire}`;
  const out = Buffer.alloc(PINGPONG_MSG_SIZE);
  out.write(text, "latin1");
  return out;
}

/** Parses what the peer sent (sscanf "%x:%x:%x:%s"). */
export function parseDest(msg: Buffer | string): PingpongDest {
  const text = (typeof msg === "string" ? msg : msg.toString("latin1")).replace(/\0.*$/s, "");
  const m = /^([0-9a-f]+):([0-9a-f]+):([0-9a-f]+):([0-9a-f]{32})$/i.exec(text);
  if (!m) throw new Error(`not an ibv_rc_pingpong address message: ${JSON.stringify(text)}`);
  return {
    lid: parseInt(m[1], 16),
    qpn: parseInt(m[2], 16),
    psn: parseInt(m[3], 16),
    gid: bytesToGid(Buffer.from(m[4], "hex")),
  };
}

/** Reads exactly `n` bytes (or what arrived before the peer closed). */
function readBytes(sock: Socket, n: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length >= n) finish();
    };
    const finish = () => {
      sock.off("data", onData);
      sock.off("end", finish);
      sock.off("error", onError);
      const rest = buf.subarray(n);
      if (rest.length) sock.unshift(rest);
      resolve(buf.subarray(0, n));
    };
    const onError = (e: Error) => {
      sock.off("data", onData);
      sock.off("end", finish);
      reject(e);
    };
    sock.on("data", onData);
    sock.once("end", finish);
    sock.once("error", onError);
  });
}

function write(sock: Socket, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => sock.write(data, (e) => (e ? reject(e) : resolve())));
}

/** The client's exchange (pp_client_exch_dest): retries the connection until `timeoutMs`. */
export async function clientExchange(
  host: string,
  port: number,
  mine: PingpongDest,
  timeoutMs = 20_000,
): Promise<PingpongDest> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const sock = new Socket();
    try {
      await new Promise<void>((resolve, reject) => {
        sock.once("error", reject);
        sock.connect(port, host, () => {
          sock.off("error", reject);
          resolve();
        });
      });
      await write(sock, formatDest(mine));
      const remote = parseDest(await readBytes(sock, PINGPONG_MSG_SIZE));
      await write(sock, Buffer.from("done\0", "latin1"));
      sock.end();
      return remote;
    } catch (e) {
      sock.destroy();
      if ((e as NodeJS.ErrnoException).code !== "ECONNREFUSED" || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * The server's exchange (pp_server_exch_dest): accepts one client, reads its address, calls
 * `connect` (which must bring the QP to RTS before the client may send), answers, and
 * waits for "done". `listening` fires once the port is open.
 */
export function serverExchange(
  port: number,
  mine: PingpongDest,
  connect: (remote: PingpongDest) => void,
  listening?: () => void,
): Promise<PingpongDest> {
  return new Promise((resolve, reject) => {
    const server = createServer({ allowHalfOpen: true });
    server.once("error", reject);
    server.once("connection", (sock) => {
      server.close();
      (async () => {
        const remote = parseDest(await readBytes(sock, PINGPONG_MSG_SIZE));
        connect(remote);
        await write(sock, formatDest(mine));
        await readBytes(sock, "done\0".length);
        sock.end();
        return remote;
      })().then(resolve, (e) => {
        sock.destroy();
        reject(e);
      });
    });
    // "::" accepts IPv4 too (dual stack), like getaddrinfo(NULL, AI_PASSIVE) in the C server.
    server.listen(port, "::", () => listening?.());
  });
}

export interface PingpongOptions {
  device: string;
  /** -g: the local GID index (required on RoCE, where a GRH is mandatory). */
  gidIndex: number;
  ibPort?: number;
  /** -s (default 4096) */
  size?: number;
  /** -n (default 1000) */
  iters?: number;
  /** -r (default 500) */
  rxDepth?: number;
  /** -m as an IBV_MTU_* value (default IBV_MTU_1024) */
  mtu?: number;
  /** -p (default 18515) */
  port?: number;
  /** Connect to this server; without it, act as the server. */
  host?: string;
  /** Called once the server listens (tests start the C client then). */
  onListening?: () => void;
  /** Gives up waiting for completions after this long (default 30 s). */
  timeoutMs?: number;
}

export interface PingpongResult {
  local: PingpongDest;
  remote: PingpongDest;
  iters: number;
  bytes: number;
  seconds: number;
  /** The last message received (the C side fills its buffer with 0x7b). */
  lastReceived: Uint8Array;
}

interface Resources {
  ctx: Context;
  pd: Pd;
  mr: Mr;
  cq: Cq;
  qp: Qp;
}

/** pp_connect_ctx: RTR then RTS with rc_pingpong's values. */
export function pingpongConnect(
  qp: Qp,
  remote: PingpongDest,
  myPsn: number,
  o: Required<Pick<PingpongOptions, "ibPort" | "mtu" | "gidIndex">>,
): void {
  const global = !gidToBytes(remote.gid)
    .slice(8)
    .every((b) => b === 0);
  qp.modify(
    {
      qp_state: IBV_QPS_RTR,
      path_mtu: o.mtu,
      dest_qp_num: remote.qpn,
      rq_psn: remote.psn,
      max_dest_rd_atomic: 1,
      min_rnr_timer: 12,
      ah_attr: {
        is_global: global ? 1 : 0,
        dlid: remote.lid,
        sl: 0,
        src_path_bits: 0,
        port_num: o.ibPort,
        ...(global && { grh: { hop_limit: 1, dgid: remote.gid, sgid_index: o.gidIndex } }),
      },
    },
    IBV_QP_STATE |
      IBV_QP_AV |
      IBV_QP_PATH_MTU |
      IBV_QP_DEST_QPN |
      IBV_QP_RQ_PSN |
      IBV_QP_MAX_DEST_RD_ATOMIC |
      IBV_QP_MIN_RNR_TIMER,
  );
  qp.modify(
    { qp_state: IBV_QPS_RTS, timeout: 14, retry_cnt: 7, rnr_retry: 7, sq_psn: myPsn, max_rd_atomic: 1 },
    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
  );
}

/**
 * Runs one `ibv_rc_pingpong` session against an unmodified peer, as client (`host` set) or
 * server, with the C program's own resources, values and loop (parse_single_wc).
 */
export async function runPingpong(backend: VerbsBackend, opts: PingpongOptions): Promise<PingpongResult> {
  const o = {
    ibPort: 1,
    size: 4096,
    iters: 1000,
    rxDepth: 500,
    mtu: IBV_MTU_1024,
    port: PINGPONG_PORT,
    timeoutMs: 30_000,
    ...opts,
  };
  const ctx = backend.openDevice(o.device);
  const r: Partial<Resources> = { ctx };
  try {
    r.pd = ctx.allocPd();
    r.mr = r.pd.regMr(o.size, IBV_ACCESS_LOCAL_WRITE);
    r.mr.bytes.fill(0x7b);
    r.cq = ctx.createCq(o.rxDepth + 1);
    r.qp = r.pd.createQp({
      send_cq: r.cq,
      recv_cq: r.cq,
      cap: { max_send_wr: 1, max_recv_wr: o.rxDepth, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
      qp_type: IBV_QPT_RC,
    });
    const { qp, cq, mr } = r as Resources;
    qp.modify(
      { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: o.ibPort, qp_access_flags: 0 },
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
    );
    const recv = { wr_id: RECV_WRID, sg_list: [mr.sge()] };
    const postRecvs = (n: number) => {
      for (let i = 0; i < n; i++) qp.postRecv(recv);
      return n;
    };
    let routs = postRecvs(o.rxDepth);
    const port = ctx.queryPort(o.ibPort);
    const local: PingpongDest = {
      lid: port.lid,
      qpn: qp.qp_num,
      psn: Math.floor(Math.random() * 0x1000000),
      gid: ctx.queryGid(o.ibPort, o.gidIndex),
    };
    const connectOpts = { ibPort: o.ibPort, mtu: o.mtu, gidIndex: o.gidIndex };
    let remote: PingpongDest;
    if (o.host !== undefined) {
      remote = await clientExchange(o.host, o.port, local);
      pingpongConnect(qp, remote, local.psn, connectOpts);
    } else {
      remote = await serverExchange(
        o.port,
        local,
        (rem) => pingpongConnect(qp, rem, local.psn, connectOpts),
        o.onListening,
      );
    }
    const send = { wr_id: SEND_WRID, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mr.sge()] };
    let pending = RECV_WRID;
    if (o.host !== undefined) {
      qp.postSend(send);
      pending |= SEND_WRID;
    }
    const start = backend.now();
    let rcnt = 0;
    let scnt = 0;
    let lastReceived = new Uint8Array(0);
    while (rcnt < o.iters || scnt < o.iters) {
      const wcs = await cq.pollWait(1, Math.max(0, start + o.timeoutMs - backend.now()));
      if (wcs.length === 0)
        throw new Error(
          `ibv_rc_pingpong peer: no completion within ${o.timeoutMs} ms (${rcnt} received, ${scnt} sent)`,
        );
      for (const wc of [...wcs, ...cq.poll(2)]) {
        if (wc.status !== IBV_WC_SUCCESS) {
          throw new Error(`Failed status ${nameOf(ibv_wc_status, wc.status)} (${wc.status}) for wr_id ${wc.wr_id}`);
        }
        if (wc.wr_id === SEND_WRID) scnt++;
        else if (wc.wr_id === RECV_WRID) {
          if (--routs <= 1) routs += postRecvs(o.rxDepth - routs);
          rcnt++;
          lastReceived = mr.bytes.slice(0, wc.byte_len);
        } else throw new Error(`Completion for unknown wr_id ${wc.wr_id}`);
        pending &= ~wc.wr_id;
        if (scnt < o.iters && !pending) {
          qp.postSend(send);
          pending = RECV_WRID | SEND_WRID;
        }
      }
    }
    const seconds = (backend.now() - start) / 1000;
    return { local, remote, iters: o.iters, bytes: o.size * o.iters * 2, seconds, lastReceived };
  } finally {
    r.qp?.destroy();
    r.cq?.destroy();
    r.mr?.dereg();
    r.pd?.dealloc();
    ctx.close();
  }
}
