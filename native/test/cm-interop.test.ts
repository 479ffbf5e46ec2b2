/**
 * Interop (VM only): VerbsLab's rdma_cm programs against unmodified rdmacm-utils tools, both
 * directions: rping (RDMA READ and WRITE between advertised buffers), rdma_server /
 * rdma_client (one 16-byte SEND each way) and ucmatose (N SENDs each way). Server ends on rxe1
 * (10.77.0.2), clients on rxe0 (10.77.0.1); a tool's exit code and output are its verdict.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_DISCONNECTED,
  RDMA_CM_EVENT_ESTABLISHED,
  RDMA_PS_TCP,
  type CmEvent,
  type CmEventChannel,
  type CmId,
} from "../../verbs/cm.js";
import * as v from "../../verbs/constants.js";
import {
  CLIENT_IP,
  CM,
  SERVER_IP,
  announceCmSkip,
  completion,
  qpFacts,
  listenOn,
  nextEvent,
  qpOn,
  resolvedClient,
  teardown,
  type CmEnd,
} from "./cm-env.js";

const skip = announceCmSkip("native/test/cm-interop.test.ts");

interface Tool {
  proc: ChildProcess;
  done: Promise<{ code: number | null; out: string }>;
  /** What it printed so far. */
  said(): string;
}

function tool(cmd: string, args: string[]): Tool {
  const proc = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const done = new Promise<{ code: number | null; out: string }>((resolve) =>
    proc.on("close", (code) => resolve({ code, out })),
  );
  return { proc, done, said: () => out };
}

/** Resolves when a server tool listens: it prints nothing then, so poll by connecting is racy; wait a little. */
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for DISCONNECTED (skipping any other event, acknowledged), then disconnects too. */
async function awaitDisconnect(ch: CmEventChannel, id: CmId): Promise<void> {
  for (;;) {
    const ev: CmEvent | null = await ch.getEvent(20_000);
    expect(ev, "no DISCONNECTED").not.toBeNull();
    ev!.ack();
    if (ev!.event === RDMA_CM_EVENT_DISCONNECTED && ev!.id === id) break;
  }
  id.disconnect();
}

// rping's struct rping_rdma_info: __be64 buf, __be32 rkey, __be32 size.
const INFO = 16;
function writeInfo(bytes: Uint8Array, at: number, addr: number, rkey: number, size: number): void {
  const d = new DataView(bytes.buffer, bytes.byteOffset + at, INFO);
  d.setBigUint64(0, BigInt(addr));
  d.setUint32(8, rkey);
  d.setUint32(12, size);
}
function readInfo(bytes: Uint8Array, at: number): { addr: number; rkey: number; size: number } {
  const d = new DataView(bytes.buffer, bytes.byteOffset + at, INFO);
  return { addr: Number(d.getBigUint64(0)), rkey: d.getUint32(8), size: d.getUint32(12) };
}

// One MR of 4096 bytes per end: [0,16) receive, [16,32) send, [64,128) start_buf, [128,192) rdma_buf.
const RECV = 0;
const SEND = 16;
const START = 64;
const RDMA = 128;
const SIZE = 64; // rping -S default

/** rping's ping text for iteration `ping` (rping_test_client), NUL-terminated at SIZE-1. */
function pingText(ping: number, start: number): Uint8Array {
  const b = new Uint8Array(SIZE);
  const head = `rdma-ping-${ping}: `;
  for (let i = 0; i < head.length; i++) b[i] = head.charCodeAt(i);
  for (let i = head.length, c = start; i < SIZE; i++) {
    b[i] = c;
    c = c + 1 > 122 ? 65 : c + 1;
  }
  b[SIZE - 1] = 0;
  return b;
}

const RPING_PARAM = { responder_resources: 1, initiator_depth: 1, retry_count: 7, rnr_retry_count: 7 };

describe.skipIf(skip)("rdma_cm interop with rdmacm-utils", () => {
  it("VerbsLab client ↔ rping -s (server READs our buffer, WRITEs it back)", async () => {
    const PORT = 7601;
    const server = tool("rping", ["-s", "-a", SERVER_IP, "-p", String(PORT), "-C", "3", "-v", "-V"]);
    await settle(3000);
    const ch = CM().createEventChannel();
    const id = await resolvedClient(ch, PORT, RDMA_PS_TCP);
    const c = qpOn(id, v.IBV_QPT_RC);
    const buf = c.mr.bytes;
    c.qp.postRecv({ wr_id: 1, sg_list: [c.mr.sge(RECV, INFO)] });
    id.connect(RPING_PARAM);
    (await nextEvent(ch, RDMA_CM_EVENT_ESTABLISHED)).ack();
    let start = 65;
    for (let ping = 0; ping < 3; ping++) {
      buf.set(pingText(ping, start), START);
      start = start + 1 > 122 ? 65 : start + 1;
      buf.fill(0, RDMA, RDMA + SIZE);
      // Our start buffer for the server to READ, then our rdma buffer for it to WRITE.
      for (const at of [START, RDMA]) {
        writeInfo(buf, SEND, c.mr.addr + at, c.mr.rkey, SIZE);
        c.qp.postSend({
          wr_id: 2,
          opcode: v.IBV_WR_SEND,
          send_flags: v.IBV_SEND_SIGNALED,
          sg_list: [c.mr.sge(SEND, INFO)],
        });
        await completion(c.scq, "advert");
        expect((await completion(c.rcq, "go-ahead")).byte_len).toBe(INFO);
        c.qp.postRecv({ wr_id: 1, sg_list: [c.mr.sge(RECV, INFO)] });
      }
      expect(Buffer.from(buf.subarray(RDMA, RDMA + SIZE))).toEqual(Buffer.from(buf.subarray(START, START + SIZE)));
    }
    id.disconnect();
    const r = await server.done;
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain("server ping data: rdma-ping-2: CDEFGHIJ");
    (await nextEvent(ch, RDMA_CM_EVENT_DISCONNECTED)).ack();
    teardown(id, c);
    ch.destroy();
  }, 180_000);

  it("VerbsLab server ↔ rping -c (we READ the client's buffer and WRITE it back)", async () => {
    const PORT = 7602;
    const ch = CM().createEventChannel();
    const listen = listenOn(ch, PORT, RDMA_PS_TCP);
    const client = tool("rping", ["-c", "-a", SERVER_IP, "-I", CLIENT_IP, "-p", String(PORT), "-C", "3", "-v", "-V"]);
    const req = await nextEvent(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 60_000);
    const id = req.id;
    req.ack();
    const s = qpOn(id, v.IBV_QPT_RC);
    const buf = s.mr.bytes;
    s.qp.postRecv({ wr_id: 1, sg_list: [s.mr.sge(RECV, INFO)] });
    id.accept(RPING_PARAM);
    (await nextEvent(ch, RDMA_CM_EVENT_ESTABLISHED)).ack();
    const go = () =>
      s.qp.postSend({
        wr_id: 3,
        opcode: v.IBV_WR_SEND,
        send_flags: v.IBV_SEND_SIGNALED,
        sg_list: [s.mr.sge(SEND, INFO)],
      });
    for (let ping = 0; ping < 3; ping++) {
      expect((await completion(s.rcq, "start advert")).byte_len).toBe(INFO);
      const src = readInfo(buf, RECV);
      s.qp.postRecv({ wr_id: 1, sg_list: [s.mr.sge(RECV, INFO)] });
      s.qp.postSend({
        wr_id: 4,
        opcode: v.IBV_WR_RDMA_READ,
        send_flags: v.IBV_SEND_SIGNALED,
        sg_list: [s.mr.sge(RDMA, src.size)],
        rdma: { remote_addr: src.addr, rkey: src.rkey },
      });
      expect((await completion(s.scq, "RDMA READ")).opcode).toBe(v.IBV_WC_RDMA_READ);
      go();
      await completion(s.scq, "go-ahead send");
      expect((await completion(s.rcq, "sink advert")).byte_len).toBe(INFO);
      const sink = readInfo(buf, RECV);
      s.qp.postRecv({ wr_id: 1, sg_list: [s.mr.sge(RECV, INFO)] });
      const len = buf.subarray(RDMA, RDMA + SIZE).indexOf(0) + 1; // strlen + 1, as rping writes
      s.qp.postSend({
        wr_id: 5,
        opcode: v.IBV_WR_RDMA_WRITE,
        send_flags: v.IBV_SEND_SIGNALED,
        sg_list: [s.mr.sge(RDMA, len)],
        rdma: { remote_addr: sink.addr, rkey: sink.rkey },
      });
      await completion(s.scq, "RDMA WRITE");
      go();
      await completion(s.scq, "go-ahead send");
    }
    await awaitDisconnect(ch, id);
    const r = await client.done;
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain("ping data: rdma-ping-2: CDEFGHIJ");
    teardown(id, s);
    listen.destroy();
    ch.destroy();
  }, 180_000);

  it("VerbsLab client ↔ rdma_server, VerbsLab server ↔ rdma_client (16 bytes each way)", async () => {
    {
      const server = tool("rdma_server", ["-s", SERVER_IP, "-p", "7603"]);
      await settle(3000);
      const ch = CM().createEventChannel();
      const id = await resolvedClient(ch, 7603, RDMA_PS_TCP);
      const c = qpOn(id, v.IBV_QPT_RC);
      c.qp.postRecv({ wr_id: 1, sg_list: [c.mr.sge(RECV, 16)] });
      id.connect();
      (await nextEvent(ch, RDMA_CM_EVENT_ESTABLISHED)).ack();
      c.mr.bytes.set(Buffer.from("hello, rdma_srv!"), SEND);
      c.qp.postSend({
        wr_id: 2,
        opcode: v.IBV_WR_SEND,
        send_flags: v.IBV_SEND_SIGNALED,
        sg_list: [c.mr.sge(SEND, 16)],
      });
      // Seen once in a full run (not in four of this file alone): no completion for this send. What to look at then.
      const facts = () => `${qpFacts(c.qp)}; rdma_server said: ${JSON.stringify(server.said())}`;
      await completion(c.scq, "send", facts);
      expect((await completion(c.rcq, "reply", facts)).byte_len).toBe(16);
      await awaitDisconnect(ch, id);
      const r = await server.done;
      expect(r.code, r.out).toBe(0);
      expect(r.out).toContain("rdma_server: end 0");
      teardown(id, c);
      ch.destroy();
    }
    {
      const ch = CM().createEventChannel();
      const listen = listenOn(ch, 7604, RDMA_PS_TCP);
      const client = tool("rdma_client", ["-s", SERVER_IP, "-p", "7604"]);
      const req = await nextEvent(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 60_000);
      const id = req.id;
      req.ack();
      const s = qpOn(id, v.IBV_QPT_RC);
      s.qp.postRecv({ wr_id: 1, sg_list: [s.mr.sge(RECV, 16)] });
      id.accept();
      (await nextEvent(ch, RDMA_CM_EVENT_ESTABLISHED)).ack();
      expect((await completion(s.rcq, "rdma_client's send")).byte_len).toBe(16);
      s.qp.postSend({
        wr_id: 2,
        opcode: v.IBV_WR_SEND,
        send_flags: v.IBV_SEND_SIGNALED,
        sg_list: [s.mr.sge(SEND, 16)],
      });
      await completion(s.scq, "reply");
      await awaitDisconnect(ch, id);
      const r = await client.done;
      expect(r.code, r.out).toBe(0);
      expect(r.out).toContain("rdma_client: end 0");
      teardown(id, s);
      listen.destroy();
      ch.destroy();
    }
  }, 180_000);

  it("ucmatose both ways (3 messages of 100 bytes each way)", async () => {
    const N = 3;
    const SZ = 100;
    const exchange = async (end: CmEnd, sendFirst: boolean) => {
      const sends = async () => {
        for (let i = 0; i < N; i++) {
          end.qp.postSend({
            wr_id: 100 + i,
            opcode: v.IBV_WR_SEND,
            send_flags: v.IBV_SEND_SIGNALED,
            sg_list: [end.mr.sge(2048, SZ)],
          });
        }
        for (let i = 0; i < N; i++) await completion(end.scq, "send");
      };
      const recvs = async () => {
        for (let i = 0; i < N; i++) expect((await completion(end.rcq, "receive")).byte_len).toBe(SZ);
      };
      if (sendFirst) {
        await sends();
        await recvs();
      } else {
        await recvs();
        await sends();
      }
    };
    const postRecvs = (end: CmEnd) => {
      for (let i = 0; i < N; i++) end.qp.postRecv({ wr_id: i, sg_list: [end.mr.sge(i * 128, SZ)] });
    };
    {
      // ucmatose as the server: it sends first, we reply, it disconnects.
      const server = tool("ucmatose", ["-b", SERVER_IP, "-p", "7605", "-C", String(N), "-S", String(SZ)]);
      await settle(3000);
      const ch = CM().createEventChannel();
      const id = await resolvedClient(ch, 7605, RDMA_PS_TCP);
      const c = qpOn(id, v.IBV_QPT_RC);
      postRecvs(c);
      id.connect({ responder_resources: 1, initiator_depth: 1, retry_count: 5 });
      (await nextEvent(ch, RDMA_CM_EVENT_ESTABLISHED)).ack();
      await exchange(c, false);
      await awaitDisconnect(ch, id);
      const r = await server.done;
      expect(r.code, r.out).toBe(0);
      expect(r.out).toContain("data transfers complete");
      teardown(id, c);
      ch.destroy();
    }
    {
      // ucmatose as the client: we send first, it replies, we disconnect.
      const ch = CM().createEventChannel();
      const listen = listenOn(ch, 7606, RDMA_PS_TCP);
      const client = tool("ucmatose", [
        "-s",
        SERVER_IP,
        "-b",
        CLIENT_IP,
        "-p",
        "7606",
        "-C",
        String(N),
        "-S",
        String(SZ),
      ]);
      const req = await nextEvent(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 60_000);
      const id = req.id;
      req.ack();
      const s = qpOn(id, v.IBV_QPT_RC);
      postRecvs(s);
      id.accept();
      (await nextEvent(ch, RDMA_CM_EVENT_ESTABLISHED)).ack();
      await exchange(s, true);
      id.disconnect();
      (await nextEvent(ch, RDMA_CM_EVENT_DISCONNECTED)).ack();
      const r = await client.done;
      expect(r.code, r.out).toBe(0);
      expect(r.out).toContain("data transfers complete");
      teardown(id, s);
      listen.destroy();
      ch.destroy();
    }
  }, 240_000);

  it("a peer that dies: rping -s killed after ESTABLISHED reaches us as DISCONNECTED, the QP still RTS", async () => {
    const PORT = 7607;
    const server = tool("rping", ["-s", "-a", SERVER_IP, "-p", String(PORT), "-C", "100"]);
    await settle(3000);
    const ch = CM().createEventChannel();
    const id = await resolvedClient(ch, PORT, RDMA_PS_TCP);
    const c = qpOn(id, v.IBV_QPT_RC);
    c.qp.postRecv({ wr_id: 1, sg_list: [c.mr.sge(RECV, INFO)] });
    id.connect(RPING_PARAM);
    (await nextEvent(ch, RDMA_CM_EVENT_ESTABLISHED)).ack();
    server.proc.kill("SIGKILL");
    await server.done;
    const ev = await nextEvent(ch, RDMA_CM_EVENT_DISCONNECTED);
    expect(ev.id).toBe(id);
    expect(c.qp.query(v.IBV_QP_STATE).attr.qp_state).toBe(v.IBV_QPS_RTS);
    ev.ack();
    id.disconnect();
    const [wc] = await c.rcq.pollWait(1, 5000);
    expect(wc?.status).toBe(v.IBV_WC_WR_FLUSH_ERR);
    teardown(id, c);
    ch.destroy();
  }, 120_000);
});
