/**
 * The conformance harness: picks a backend, gives each test a scope that destroys what it
 * created, and brings QPs up one transition at a time with the values ibv_rc_pingpong uses.
 *
 * Everything here speaks only the VerbsBackend contract, so the same test files run on the
 * simulator (`VERBSLAB_BACKEND=sim`, the default) and on real rxe in the lab VM
 * (`VERBSLAB_BACKEND=native`). On native the devices persist across tests: never assume a
 * fresh device, assert formats and increments rather than absolute QPNs or keys.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { afterAll, afterEach, beforeEach, describe, expect } from "vitest";
import type { Ah, CompChannel, Context, Cq, Mr, Pd, Qp, VerbsBackend } from "../backend.js";
import {
  RNR_TIMER_USEC,
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_ATOMIC,
  IBV_ACCESS_REMOTE_READ,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_GID_TYPE_ROCE_V2,
  IBV_MTU_1024,
  IBV_QPS_ERR,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPS_SQD,
  IBV_QPT_RC,
  IBV_QPT_UC,
  IBV_QPT_UD,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_AV,
  IBV_QP_DEST_QPN,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_PATH_MTU,
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_QKEY,
  IBV_QP_RETRY_CNT,
  IBV_QP_RNR_RETRY,
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
  IBV_QP_TIMEOUT,
  ibv_qp_state,
  ibv_wc_opcode,
  ibv_wc_status,
  nameOf,
} from "../constants.js";
import { VerbsError } from "../errors.js";
import type { GidEntry, QpCap, Wc } from "../types.js";

// ---------------------------------------------------------------------------------------
// Choosing the backend

export type BackendKind = "sim" | "native";
export const BACKEND_KIND: BackendKind = process.env.VERBSLAB_BACKEND === "native" ? "native" : "sim";
/** The simulator's seed: fixed, so a sim run is reproducible byte for byte. */
export const SIM_SEED = 7;

type Loaded = { backend: VerbsBackend } | { unavailable: string };

/**
 * Loads the backend the environment asks for. Both loaders are imported lazily, by URL, so
 * neither tsc nor vite requires native/ to exist. The simulator must load: a broken sim is
 * a failure, not a skip. The native backend may be unavailable, and then says why.
 */
export async function getBackend(): Promise<Loaded> {
  if (BACKEND_KIND === "native") {
    try {
      const url = new URL("../../native/index.ts", import.meta.url).href;
      const mod = (await import(/* @vite-ignore */ url)) as { loadNativeBackend(): Loaded | Promise<Loaded> };
      const loaded = await mod.loadNativeBackend();
      if ("backend" in loaded && loaded.backend.getDeviceList().length === 0) {
        return { unavailable: loaded.backend.unavailableReason ?? "the native backend lists no RDMA device" };
      }
      return loaded;
    } catch (e) {
      return { unavailable: `could not load the native backend: ${(e as Error).message}` };
    }
  }
  const url = new URL("../../sim/index.ts", import.meta.url).href;
  const mod = (await import(/* @vite-ignore */ url)) as {
    createSimBackend(o: { seed?: number; packetLog?: boolean }): VerbsBackend;
  };
  // With the packet log off the simulator takes its fast paths (sim/fast-path.ts); npm test
  // runs the suite both ways (vitest.config.ts), so the fast paths answer to it too.
  return {
    backend: mod.createSimBackend({ seed: SIM_SEED, packetLog: process.env.VERBSLAB_SIM_PACKET_LOG !== "off" }),
  };
}

const loaded = await getBackend();
/** The backend under test, or undefined when it is unavailable (the suites then skip, loudly). */
export const backend: VerbsBackend | undefined = "backend" in loaded ? loaded.backend : undefined;
export const unavailableReason: string | undefined = "unavailable" in loaded ? loaded.unavailable : undefined;

/** The backend, for use inside tests (which only run when it exists). */
export function B(): VerbsBackend {
  if (!backend) throw new Error(`no backend: ${unavailableReason}`);
  return backend;
}

/**
 * VERBSLAB_TRACE=<file>: append each test's name to that file as it starts, written
 * synchronously, so a test that blocks a native call can be found after the VM is killed.
 */
const TRACE = process.env.VERBSLAB_TRACE;

/**
 * A describe block that runs against the chosen backend, or is skipped with the reason
 * printed (never a silent pass). Every scope created inside is disposed after each test.
 */
export function suite(title: string, body: () => void): void {
  if (!backend) console.warn(`[conformance] SKIPPED "${title}" on ${BACKEND_KIND}: ${unavailableReason}`);
  describe.skipIf(!backend)(`${title} [${BACKEND_KIND}]`, () => {
    if (TRACE) beforeEach((ctx) => appendFileSync(TRACE, `${new Date().toISOString()} ${ctx.task.name}\n`));
    afterEach(disposeTestScopes);
    afterAll(disposeFileScopes);
    body();
  });
}

// ---------------------------------------------------------------------------------------
// Scopes: everything a test creates is destroyed after it, children first.

const testScopes: Scope[] = [];
const fileScopes: Scope[] = [];

function disposeTestScopes() {
  while (testScopes.length) testScopes.pop()!.dispose();
}
function disposeFileScopes() {
  while (fileScopes.length) fileScopes.pop()!.dispose();
}

export class Scope {
  private cleanups: (() => void)[] = [];

  /** Runs `fn` when the scope is disposed (in reverse order of registration). */
  defer(fn: () => void): void {
    this.cleanups.push(fn);
  }

  dispose(): void {
    while (this.cleanups.length) {
      const fn = this.cleanups.pop()!;
      try {
        fn();
      } catch (e) {
        // Already destroyed by the test itself: that is fine. Anything else is a bug.
        if (!(e instanceof VerbsError)) throw e;
      }
    }
  }

  open(name: DeviceName = "rxe0"): Context {
    const ctx = B().openDevice(name);
    this.defer(() => ctx.close());
    return ctx;
  }
  pd(ctx: Context): Pd {
    const pd = ctx.allocPd();
    this.defer(() => pd.dealloc());
    return pd;
  }
  cq(ctx: Context, cqe = 64, options?: { channel?: CompChannel; cq_context?: unknown }): Cq {
    const cq = ctx.createCq(cqe, options);
    this.defer(() => cq.destroy());
    return cq;
  }
  channel(ctx: Context): CompChannel {
    const ch = ctx.createCompChannel();
    this.defer(() => ch.destroy());
    return ch;
  }
  mr(pd: Pd, memory: ArrayBuffer | ArrayBufferView | number, access: number): Mr {
    const mr = pd.regMr(memory, access);
    this.defer(() => mr.dereg());
    return mr;
  }
  qp(pd: Pd, init: { send_cq: Cq; recv_cq?: Cq; qp_type: number; cap?: Partial<QpCap>; sq_sig_all?: number }): Qp {
    const qp = pd.createQp({
      send_cq: init.send_cq,
      recv_cq: init.recv_cq ?? init.send_cq,
      qp_type: init.qp_type,
      cap: { ...DEFAULT_CAP, ...init.cap },
      sq_sig_all: init.sq_sig_all ?? 1,
    });
    this.defer(() => qp.destroy());
    return qp;
  }
  ah(pd: Pd, dgid: string, sgid_index: number): Ah {
    const ah = pd.createAh({ is_global: 1, port_num: 1, grh: { dgid, sgid_index, hop_limit: 64 } });
    this.defer(() => ah.destroy());
    return ah;
  }
}

/** A scope disposed after the current test. */
export function scope(): Scope {
  const s = new Scope();
  testScopes.push(s);
  return s;
}

/** A scope disposed after the whole file (for fixtures shared by table-driven tests). */
export function fileScope(): Scope {
  const s = new Scope();
  fileScopes.push(s);
  return s;
}

// ---------------------------------------------------------------------------------------
// Devices and GIDs

export type DeviceName = "rxe0" | "rxe1";
export type GidKind = "ipv4" | "linklocal";

/** 16 bytes of an IPv6 text address (also "::ffff:10.0.0.1" and "::"). */
export function gidBytes(text: string): Uint8Array {
  const out = new Uint8Array(16);
  let s = text.trim().toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  let tail4: number[] = [];
  if (v4) {
    tail4 = v4.slice(1, 5).map(Number);
    s = s.slice(0, v4.index) + "0:0";
  }
  const [head, tail] = s.includes("::") ? s.split("::") : [s, undefined];
  const h = head ? head.split(":").filter((x) => x !== "") : [];
  const t = tail !== undefined && tail !== "" ? tail.split(":") : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  if (groups.length !== 8) throw new Error(`not an IPv6 address: ${text}`);
  groups.forEach((g, i) => {
    const v = parseInt(g, 16);
    out[2 * i] = v >> 8;
    out[2 * i + 1] = v & 0xff;
  });
  if (v4) out.set(tail4, 12);
  return out;
}

export function isIpv4Mapped(gid: string): boolean {
  const b = gidBytes(gid);
  return b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
}
export function isLinkLocal(gid: string): boolean {
  const b = gidBytes(gid);
  return b[0] === 0xfe && (b[1] & 0xc0) === 0x80;
}
export function sameGid(a: string, b: string): boolean {
  const x = gidBytes(a);
  const y = gidBytes(b);
  return x.every((v, i) => v === y[i]);
}

/** The RoCEv2 GID of this kind on port 1 (the IPv4-mapped `::ffff:10.77.0.x`, or `fe80::…`). */
export function findGid(ctx: Context, kind: GidKind): GidEntry {
  const table = ctx.queryGidTable();
  const e = table.find(
    (g) =>
      g.port_num === 1 &&
      g.gid_type === IBV_GID_TYPE_ROCE_V2 &&
      (kind === "ipv4" ? isIpv4Mapped(g.gid) : isLinkLocal(g.gid)),
  );
  if (!e) throw new Error(`${ctx.device.name} has no ${kind} RoCEv2 GID: ${JSON.stringify(table)}`);
  return e;
}

/** How two endpoints are joined: on one device (loopback) or rxe0 ↔ rxe1, over which GID. */
export interface Pairing {
  name: string;
  a: DeviceName;
  b: DeviceName;
  gid: GidKind;
}
export const PAIRINGS: Pairing[] = [
  { name: "rxe0 loopback, IPv4 GID", a: "rxe0", b: "rxe0", gid: "ipv4" },
  { name: "rxe0 loopback, link-local GID", a: "rxe0", b: "rxe0", gid: "linklocal" },
  { name: "rxe0 ↔ rxe1, link-local GID", a: "rxe0", b: "rxe1", gid: "linklocal" },
  { name: "rxe0 ↔ rxe1, IPv4 GID", a: "rxe0", b: "rxe1", gid: "ipv4" },
];
/** The pairing used by single-pairing tests (errors, timing): loopback on rxe0 over IPv4. */
export const LOOPBACK = PAIRINGS[0];
/** rxe0 ↔ rxe1 over link-local GIDs (works in the lab VM, where IPv4 across veths may not). */
export const CROSS = PAIRINGS[2];

// ---------------------------------------------------------------------------------------
// Bring-up, one transition per helper, with ibv_rc_pingpong's values by default

export const DEFAULT_CAP: QpCap = {
  max_send_wr: 16,
  max_recv_wr: 16,
  max_send_sge: 4,
  max_recv_sge: 4,
  max_inline_data: 0,
};
export const ALL_REMOTE =
  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
export const UD_QKEY = 0x11111111;

export interface InitOpts {
  access?: number;
  qkey?: number;
  port_num?: number;
  pkey_index?: number;
}
export function toInit(qp: Qp, o: InitOpts = {}): void {
  const base = { qp_state: IBV_QPS_INIT, pkey_index: o.pkey_index ?? 0, port_num: o.port_num ?? 1 };
  if (qp.qp_type === IBV_QPT_UD) {
    qp.modify({ ...base, qkey: o.qkey ?? UD_QKEY }, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
  } else {
    qp.modify(
      { ...base, qp_access_flags: o.access ?? ALL_REMOTE },
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
    );
  }
}

export interface RtrOpts {
  dest_qp_num: number;
  rq_psn: number;
  dgid: string;
  sgid_index: number;
  path_mtu?: number;
  max_dest_rd_atomic?: number;
  min_rnr_timer?: number;
}
export function toRtr(qp: Qp, o: RtrOpts): void {
  if (qp.qp_type === IBV_QPT_UD) {
    qp.modify({ qp_state: IBV_QPS_RTR }, IBV_QP_STATE);
    return;
  }
  const attr = {
    qp_state: IBV_QPS_RTR,
    path_mtu: o.path_mtu ?? IBV_MTU_1024,
    dest_qp_num: o.dest_qp_num,
    rq_psn: o.rq_psn,
    max_dest_rd_atomic: o.max_dest_rd_atomic ?? 1,
    min_rnr_timer: o.min_rnr_timer ?? 12,
    ah_attr: { is_global: 1, port_num: 1, grh: { dgid: o.dgid, sgid_index: o.sgid_index, hop_limit: 64 } },
  };
  let mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
  if (qp.qp_type === IBV_QPT_RC) mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  qp.modify(attr, mask);
}

export interface RtsOpts {
  sq_psn: number;
  timeout?: number;
  retry_cnt?: number;
  rnr_retry?: number;
  max_rd_atomic?: number;
}
export function toRts(qp: Qp, o: RtsOpts): void {
  if (qp.qp_type !== IBV_QPT_RC) {
    qp.modify({ qp_state: IBV_QPS_RTS, sq_psn: o.sq_psn }, IBV_QP_STATE | IBV_QP_SQ_PSN);
    return;
  }
  qp.modify(
    {
      qp_state: IBV_QPS_RTS,
      sq_psn: o.sq_psn,
      timeout: o.timeout ?? 14,
      retry_cnt: o.retry_cnt ?? 7,
      rnr_retry: o.rnr_retry ?? 7,
      max_rd_atomic: o.max_rd_atomic ?? 1,
    },
    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
  );
}

export function toState(qp: Qp, state: number): void {
  qp.modify({ qp_state: state }, IBV_QP_STATE);
}

export function stateOf(qp: Qp): number {
  return qp.query(IBV_QP_STATE).attr.qp_state;
}
export function stateName(s: number): string {
  return nameOf(ibv_qp_state, s).replace("IBV_QPS_", "");
}

/** One side of a connection: its own context, PD, CQs, QP and a data MR. */
export interface Endpoint {
  ctx: Context;
  pd: Pd;
  scq: Cq;
  rcq: Cq;
  qp: Qp;
  mr: Mr;
  gid: GidEntry;
}

export interface EndpointOpts {
  qp_type?: number;
  cap?: Partial<QpCap>;
  sq_sig_all?: number;
  mrSize?: number;
  mrAccess?: number;
  cqe?: number;
}

export function endpoint(s: Scope, dev: DeviceName, gid: GidKind, o: EndpointOpts = {}): Endpoint {
  const ctx = s.open(dev);
  const pd = s.pd(ctx);
  const scq = s.cq(ctx, o.cqe ?? 64);
  const rcq = s.cq(ctx, o.cqe ?? 64);
  const qp = s.qp(pd, {
    send_cq: scq,
    recv_cq: rcq,
    qp_type: o.qp_type ?? IBV_QPT_RC,
    cap: o.cap,
    sq_sig_all: o.sq_sig_all,
  });
  const mr = s.mr(pd, o.mrSize ?? 8192, o.mrAccess ?? ALL_REMOTE);
  return { ctx, pd, scq, rcq, qp, mr, gid: findGid(ctx, gid) };
}

export interface ConnectOpts {
  /** PSNs: A sends from a_psn (B expects it), B sends from b_psn. */
  a_psn?: number;
  b_psn?: number;
  /** What B expects (defaults to a_psn): set it apart to make a PSN mismatch. */
  b_rq_psn?: number;
  a_dest_qp_num?: number;
  path_mtu?: number;
  a_access?: number;
  b_access?: number;
  a_rts?: Partial<RtsOpts>;
  b_rts?: Partial<RtsOpts>;
  a_rtr?: Partial<RtrOpts>;
  b_rtr?: Partial<RtrOpts>;
}

/** Brings A and B from RESET to RTS against each other, one transition at a time. */
export function connect(a: Endpoint, b: Endpoint, o: ConnectOpts = {}): void {
  const a_psn = o.a_psn ?? 0x100;
  const b_psn = o.b_psn ?? 0x200;
  toInit(a.qp, { access: o.a_access });
  toInit(b.qp, { access: o.b_access });
  toRtr(a.qp, {
    dest_qp_num: o.a_dest_qp_num ?? b.qp.qp_num,
    rq_psn: b_psn,
    dgid: b.gid.gid,
    sgid_index: a.gid.gid_index,
    path_mtu: o.path_mtu,
    ...o.a_rtr,
  });
  toRtr(b.qp, {
    dest_qp_num: a.qp.qp_num,
    rq_psn: o.b_rq_psn ?? a_psn,
    dgid: a.gid.gid,
    sgid_index: b.gid.gid_index,
    path_mtu: o.path_mtu,
    ...o.b_rtr,
  });
  toRts(a.qp, { sq_psn: a_psn, ...o.a_rts });
  toRts(b.qp, { sq_psn: b_psn, ...o.b_rts });
}

/** Two endpoints of one QP type on a pairing, connected (RC/UC) or brought to RTS (UD). */
export function pair(
  s: Scope,
  p: Pairing,
  o: EndpointOpts & ConnectOpts & { a?: EndpointOpts; b?: EndpointOpts } = {},
): { a: Endpoint; b: Endpoint } {
  const a = endpoint(s, p.a, p.gid, { ...o, ...o.a });
  const b = endpoint(s, p.b, p.gid, { ...o, ...o.b });
  connect(a, b, o);
  return { a, b };
}

/** The address handle A uses to reach B (UD). */
export function ahTo(s: Scope, from: Endpoint, to: Endpoint): Ah {
  return s.ah(from.pd, to.gid.gid, from.gid.gid_index);
}

// ---------------------------------------------------------------------------------------
// Completions and errors

/** A recognisable byte pattern. */
export function fill(bytes: Uint8Array, seed: number, offset = 0, length = bytes.length - offset): Uint8Array {
  for (let i = 0; i < length; i++) bytes[offset + i] = (seed + i * 7) & 0xff;
  return bytes.slice(offset, offset + length);
}

/** Waits (on the backend's clock) for exactly `n` completions; fails with what did arrive. */
export async function waitWc(cq: Cq, n = 1, timeoutMs = 500): Promise<Wc[]> {
  const wcs = await cq.pollWait(n, timeoutMs);
  if (wcs.length !== n) {
    throw new Error(`expected ${n} completion(s) within ${timeoutMs} ms, got ${wcs.length}: ${describeWcs(wcs)}`);
  }
  return wcs;
}

/** Asserts no completion arrives within `ms` of backend time. */
export async function expectNoWc(cq: Cq, ms = 100): Promise<void> {
  const wcs = await cq.pollWait(1, ms);
  expect(describeWcs(wcs)).toBe("[]");
}

export function describeWcs(wcs: Wc[]): string {
  return JSON.stringify(
    wcs.map((w) => ({
      wr_id: w.wr_id,
      status: nameOf(ibv_wc_status, w.status),
      opcode: nameOf(ibv_wc_opcode, w.opcode),
      byte_len: w.byte_len,
      wc_flags: w.wc_flags,
    })),
  );
}

/** rxe zeroes an error CQE: opcode 0 (SEND), byte_len 0, wc_flags 0 (sim/RXE-FACTS.md §5.2). */
export function expectErrorWc(wc: Wc, status: number, qp: Qp, wr_id?: number): void {
  expect(nameOf(ibv_wc_status, wc.status)).toBe(nameOf(ibv_wc_status, status));
  expect({ opcode: wc.opcode, byte_len: wc.byte_len, wc_flags: wc.wc_flags, qp_num: wc.qp_num }).toEqual({
    opcode: 0,
    byte_len: 0,
    wc_flags: 0,
    qp_num: qp.qp_num,
  });
  if (wr_id !== undefined) expect(wc.wr_id).toBe(wr_id);
}

/** Runs `fn`, expects a VerbsError with this errno name, and returns it. */
export function expectVerbsError(fn: () => unknown, code: string): VerbsError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  if (!(caught instanceof VerbsError)) {
    throw new Error(`expected VerbsError ${code}, got ${caught === undefined ? "no error" : String(caught)}`);
  }
  expect(caught.code).toBe(code);
  return caught;
}

/** Asserts the QP state by name (so a failure reads "RTS" vs "ERR"). */
export function expectState(qp: Qp, state: number): void {
  expect(stateName(stateOf(qp))).toBe(stateName(state));
}

/** PSN difference modulo 2^24. */
export function psnDelta(from: number, to: number): number {
  return (to - from) & 0xffffff;
}

/** IB local ACK timeout in ms: 4.096 µs × 2^timeout. */
export function ackTimeoutMs(timeout: number): number {
  return (4.096 * 2 ** timeout) / 1000;
}
/** The IB RNR timer table (µs) by min_rnr_timer value, as rxe's rnrnak_usec[] (one home: verbs/constants.ts). */
export const RNR_USEC = RNR_TIMER_USEC;

/**
 * Extra time allowed on top of an upper timing bound. The simulator's clock is exact; real
 * rxe in the TCG lab VM, shared with other VMs, was measured adding 0.5–0.7 s of latency to
 * a completion the kernel produced in 70 ms, so upper bounds there are loose.
 */
export const SLACK_MS = BACKEND_KIND === "native" ? 2000 : 50;

/** Asserts a duration lies in [lo, hi] ms (backend clock), with a readable message. */
export function expectBetween(ms: number, lo: number, hi: number): void {
  expect(
    ms,
    `elapsed ${ms.toFixed(1)} ms, expected within [${lo.toFixed(1)}, ${hi.toFixed(1)}]`,
  ).toBeGreaterThanOrEqual(lo);
  expect(ms, `elapsed ${ms.toFixed(1)} ms, expected within [${lo.toFixed(1)}, ${hi.toFixed(1)}]`).toBeLessThanOrEqual(
    hi,
  );
}

export const QP_TYPES = [
  { name: "RC", type: IBV_QPT_RC },
  { name: "UC", type: IBV_QPT_UC },
  { name: "UD", type: IBV_QPT_UD },
] as const;

/** A QP of `type` on `ctx` walked to `state` (RESET, INIT, RTR, RTS, SQD or ERR), connected to itself. */
export function qpIn(s: Scope, pd: Pd, cq: Cq, gid: GidEntry, type: number, state: number): Qp {
  const qp = s.qp(pd, { send_cq: cq, qp_type: type });
  if (state === IBV_QPS_RESET) return qp;
  if (state === IBV_QPS_ERR) {
    toInit(qp);
    toState(qp, IBV_QPS_ERR);
    return qp;
  }
  toInit(qp);
  if (state === IBV_QPS_INIT) return qp;
  toRtr(qp, { dest_qp_num: qp.qp_num, rq_psn: 0, dgid: gid.gid, sgid_index: gid.gid_index });
  if (state === IBV_QPS_RTR) return qp;
  toRts(qp, { sq_psn: 0 });
  if (state === IBV_QPS_RTS) return qp;
  if (state === IBV_QPS_SQD) {
    toState(qp, IBV_QPS_SQD);
    // rxe refuses SQD→(anything but ERR) while the requester is still draining (rxe_qp_chk_attr).
    // With an empty SQ that window is tiny, but in a slow VM a modify can land in it: wait it out.
    for (let i = 0; i < 10_000 && qp.query().attr.sq_draining; i++);
    return qp;
  }
  throw new Error(`qpIn: cannot reach state ${state}`);
}

/**
 * Prints a measured value on native (`[measured] label: value`), so a run on real rxe
 * leaves the figures sim/RXE-FACTS.md records; silent on the simulator.
 */
export function recordMeasured(label: string, value: unknown): void {
  if (BACKEND_KIND === "native") console.log(`[measured] ${label}: ${JSON.stringify(value)}`);
}

/**
 * The kernel's jiffies counter on native (the "timestamp" line of /proc/schedstat), or
 * undefined where it cannot be read. rxe's timers count jiffies, and in the TCG lab VM
 * jiffies and the TSC clock that `now()` reads can run at different rates (measured: 492
 * jiffies, 1968 ms of them, in 1883 ms of TSC time in one boot; in step in another), so a
 * timer can look early by the wall clock. Recorded beside wall-clock times.
 */
export function kernelJiffies(): number | undefined {
  if (BACKEND_KIND !== "native") return undefined;
  try {
    const m = /^timestamp (\d+)$/m.exec(readFileSync("/proc/schedstat", "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** One jiffy of the lab VM's kernel (HZ=250), the unit rxe's timers count in. */
export const LAB_JIFFY_MS = 4;

/** What a stopwatch read: backend-clock ms and, on native, the kernel's jiffies since its start. */
export interface Lap {
  ms: number;
  jiffies?: number;
}

/** Starts a stopwatch on the backend's clock (and on the kernel's jiffies, where readable). */
export function stopwatch(): () => Lap {
  const j0 = kernelJiffies();
  const t0 = B().now();
  return () => {
    const ms = B().now() - t0;
    const j = kernelJiffies();
    return j0 === undefined || j === undefined ? { ms } : { ms, jiffies: j - j0 };
  };
}

/**
 * A kernel timer never fires before its expiry in jiffies, so `lap` took at least `jiffies`
 * of them. Checked on the kernel's own count where it can be read: in the TCG lab VM jiffies
 * can run ahead of the TSC clock (kernelJiffies), and a timer then looks early by the wall
 * clock (an RNR wait once measured 67 ms where two 11-jiffy waits need 88). Elsewhere (the
 * simulator's exact clock) on ms.
 */
export function expectAtLeastJiffies(lap: Lap, jiffies: number): void {
  if (lap.jiffies !== undefined) {
    expect(
      lap.jiffies,
      `${lap.jiffies} jiffies (${lap.ms.toFixed(1)} ms), expected at least ${jiffies}`,
    ).toBeGreaterThanOrEqual(jiffies);
  } else {
    expectBetween(lap.ms, jiffies * LAB_JIFFY_MS, Infinity);
  }
}
