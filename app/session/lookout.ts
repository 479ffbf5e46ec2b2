/**
 * What the session looks out for across calls, beyond one verb: the send WRs in flight, the PSNs a
 * program set, the completion events got and acknowledged per CQ, the CQ sizes asked for. With
 * it the session explains failed completions (explain-wc.ts), refuses a destroy that would hang
 * libibverbs (verbs/cq-events.ts), and warns about beginner mistakes that pass silently on
 * rxe or the simulator (SessionNotice). Browser-safe.
 */
import {
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_QPS_RESET,
  IBV_SEND_SIGNALED,
  IBV_WC_RECV,
  IBV_WC_SUCCESS,
  IBV_WC_WR_FLUSH_ERR,
  IBV_WR_ATOMIC_CMP_AND_SWP,
  IBV_WR_ATOMIC_FETCH_AND_ADD,
  IBV_WR_RDMA_READ,
  IBV_WR_RDMA_WRITE,
  IBV_WR_RDMA_WRITE_WITH_IMM,
  ibv_wr_opcode,
  nameOf,
} from "../../verbs/constants.js";
import { unackedEventsError } from "../../verbs/cq-events.js";
import type { VerbsError } from "../../verbs/errors.js";
import type { Cq, Mr, Qp, VerbsBackend } from "../../verbs/backend.js";
import type { QpAttrInput, QpInitAttr, RecvWr, SendWr, Wc } from "../../verbs/types.js";
import type { WcReason } from "../../verbs/wc-reason.js";
import { cqOverflowText, cqRoundedUpText, lateRearmText, readBeforePollText } from "./notice-text.js";
import { inferWcReason, type MrFact, type QpFact, type WcWhy, type WrFact } from "./explain-wc.js";
import type { CqRoundedUp, SessionNotice } from "./transcript.js";

/** The session's objects, as the lookout needs them (entries in creation order, destroyed ones included). */
export interface LookoutObjects {
  entries(): { handle: number; type: string; obj: unknown; destroyed: boolean }[];
  handleOf(o: unknown): number | undefined;
  /** The entry of a handle, and the live QP a completion polled from a CQ names: O(1) where the session indexes them. */
  entry?(handle: number): { handle: number; type: string; obj: unknown; destroyed: boolean } | undefined;
  qpOfCompletion?(
    cq: Cq,
    qp_num: number,
  ): { handle: number; type: string; obj: unknown; destroyed: boolean } | undefined;
  /** The learner's variable for an object, from the line that created it (the panes name it so). */
  variable?(handle: number): string | undefined;
}

/** A backend that knows exactly why it failed a completion (the simulator, sim/explain.ts). */
interface ExplainsCompletions {
  completionReason(wc: Wc): WcReason | undefined;
}
const explains = (b: VerbsBackend): b is VerbsBackend & ExplainsCompletions =>
  typeof (b as Partial<ExplainsCompletions>).completionReason === "function";

/** Bytes of an MR a WR in flight will change: a READ's or atomic's local buffer, a WRITE's or atomic's target. */
interface Target {
  mr: number;
  start: number;
  end: number;
}

interface InFlight extends WrFact {
  signaled: boolean;
  targets: Target[];
}

interface PostedRecv {
  wr_id: number;
  bytes: number;
  targets: Target[];
}

const isWrite = (op: number) => op === IBV_WR_RDMA_WRITE || op === IBV_WR_RDMA_WRITE_WITH_IMM;
const isAtomic = (op: number) => op === IBV_WR_ATOMIC_CMP_AND_SWP || op === IBV_WR_ATOMIC_FETCH_AND_ADD;

export function createLookout(objects: LookoutObjects, backend: VerbsBackend) {
  const inFlight = new Map<number, InFlight[]>();
  /** Per QP: each receive WQE posted and not yet completed, oldest first (its bytes, and the MR bytes it lands in). */
  const recvs = new Map<number, PostedRecv[]>();
  /** Per QP: the bytes of its receive WQE that completed in error last (what a failed SEND met). */
  const failedRecv = new Map<number, number>();
  const psnSet = new Map<number, { sq?: number; rq?: number }>();
  const cqEvents = new Map<number, { got: number; acked: number }>();
  /**
   * Per CQ that raised an event: "event" once the event was got, then the size of the first poll
   * after it that came back short (the drain) until the CQ is re-armed: arming only then is late.
   */
  const sinceEvent = new Map<number, "event" | number>();
  const cqAsked = new Map<number, number>();
  const qpAsked = new Map<
    number,
    { send: number; recv: number; send_cq?: number; recv_cq?: number; sigAll: boolean }
  >();
  const cqWarned = new Set<number>();
  /**
   * Per CQ: the completions posted work will put into it that no poll took yet (signaled sends,
   * receives); per QP, its share of each, so that a reset or destroy takes its WRs back out.
   */
  const unpolled = new Map<number, number>();
  const unpolledOf = new Map<number, { send: number; recv: number }>();
  const overflowWarned = new Set<number>();

  const live = (type: string) => objects.entries().filter((e) => e.type === type && !e.destroyed);
  const query = (qp: Qp) => {
    try {
      return qp.query().attr;
    } catch {
      return null;
    }
  };
  const entryOf = (h: number) => (objects.entry ? objects.entry(h) : objects.entries().find((e) => e.handle === h));
  // QP numbers repeat across devices (rxe0's and rxe1's first QPs are both 0x11): the CQ a
  // completion was polled from says which QP it names (qp-index.ts).
  const qpOfCompletion = (cq: number, n: number) => {
    const cqObj = entryOf(cq)?.obj as Cq | undefined;
    if (!cqObj) return undefined;
    if (objects.qpOfCompletion) return objects.qpOfCompletion(cqObj, n);
    return live("qp").find((e) => {
      const qp = e.obj as Qp;
      return qp.qp_num === n && (qp.send_cq === cqObj || qp.recv_cq === cqObj);
    });
  };
  /** Per CQ: the WRs the live QPs using it asked for (max_send_wr + max_recv_wr), kept as QPs come and go. */
  const cqWrs = new Map<number, number>();
  const useCq = (h: number, sign: 1 | -1) => {
    const a = qpAsked.get(h);
    if (!a) return;
    if (a.send_cq !== undefined) cqWrs.set(a.send_cq, (cqWrs.get(a.send_cq) ?? 0) + sign * a.send);
    if (a.recv_cq !== undefined) cqWrs.set(a.recv_cq, (cqWrs.get(a.recv_cq) ?? 0) + sign * a.recv);
  };
  // As the panes name an object: the learner's variable, else its kind and creation index ("cq0").
  const label = (type: "cq" | "mr", handle: number) =>
    objects.variable?.(handle) ??
    `${type}${objects
      .entries()
      .filter((e) => e.type === type)
      .findIndex((e) => e.handle === handle)}`;
  const cqLabel = (handle: number) => label("cq", handle);
  const mrLabel = (handle: number) => label("mr", handle);

  function mrFacts(): MrFact[] {
    return live("mr").map((e) => {
      const mr = e.obj as Mr;
      return {
        name: mrLabel(e.handle),
        device: mr.pd.context.device.name,
        pd: objects.handleOf(mr.pd),
        addr: mr.addr,
        length: mr.length,
        rkey: mr.rkey,
        lkey: mr.lkey,
        access: mr.access,
      };
    });
  }

  function qpFacts(): QpFact[] {
    const out: QpFact[] = [];
    for (const e of live("qp")) {
      const qp = e.obj as Qp;
      const a = query(qp);
      if (!a) continue;
      const set = psnSet.get(e.handle);
      out.push({
        qp_num: qp.qp_num,
        device: qp.pd.context.device.name,
        pd: objects.handleOf(qp.pd),
        state: a.qp_state,
        dest_qp_num: a.dest_qp_num,
        qp_access_flags: a.qp_access_flags,
        max_dest_rd_atomic: a.max_dest_rd_atomic,
        retry_cnt: a.retry_cnt,
        rnr_retry: a.rnr_retry,
        ...((failedRecv.has(e.handle) || recvs.get(e.handle)?.length) && {
          recv_bytes: failedRecv.get(e.handle) ?? recvs.get(e.handle)![0]!.bytes,
        }),
        ...(set?.sq !== undefined && { sq_psn_set: set.sq }),
        ...(set?.rq !== undefined && { rq_psn_set: set.rq }),
      });
    }
    return out;
  }

  /** The MR (handle) holding [addr, addr+len) under `key` (an lkey or an rkey). */
  function mrAt(key: number, addr: number, len: number, remote: boolean): number | undefined {
    return live("mr").find((e) => {
      const mr = e.obj as Mr;
      return (remote ? mr.rkey : mr.lkey) === key && addr >= mr.addr && addr + len <= mr.addr + mr.length;
    })?.handle;
  }

  function targetsOf(wr: SendWr, length: number): Target[] {
    const t: Target[] = [];
    const remote = wr.rdma ?? wr.atomic;
    const n = isAtomic(wr.opcode) ? 8 : length;
    if (remote && (isWrite(wr.opcode) || isAtomic(wr.opcode))) {
      const h = mrAt(remote.rkey, remote.remote_addr, n, true);
      if (h !== undefined) {
        const base = (entryOf(h)!.obj as Mr).addr;
        t.push({ mr: h, start: remote.remote_addr - base, end: remote.remote_addr - base + n });
      }
    }
    if (wr.opcode === IBV_WR_RDMA_READ || isAtomic(wr.opcode)) t.push(...sgeTargets(wr.sg_list));
    return t;
  }

  /** The MR bytes a WR's local SGEs name: what a READ or atomic writes, or where an incoming SEND lands. */
  function sgeTargets(sges: readonly { addr: number; length: number; lkey: number }[] | undefined): Target[] {
    const t: Target[] = [];
    for (const s of sges ?? []) {
      const h = mrAt(s.lkey, s.addr, s.length, false);
      if (h === undefined) continue;
      const base = (entryOf(h)!.obj as Mr).addr;
      t.push({ mr: h, start: s.addr - base, end: s.addr - base + s.length });
    }
    return t;
  }

  /** The first WR in flight (a send's, then a posted RECV's) whose bytes `hits`: what a read before its poll races. */
  function racingWr(hits: (t: Target) => boolean) {
    const which = (qp: number) => {
      const variable = objects.variable?.(qp);
      return { qpn: (entryOf(qp)!.obj as Qp).qp_num, ...(variable && { variable }) };
    };
    for (const [qp, list] of inFlight)
      for (const w of list)
        if (w.targets.some(hits)) return { opcode: w.opcode, wr_id: w.wr_id, ...which(qp), signaled: w.signaled };
    for (const [qp, list] of recvs)
      for (const r of list)
        if (r.targets.some(hits)) return { recv: true as const, wr_id: r.wr_id, ...which(qp), signaled: true };
    return undefined;
  }

  /** A reset or destroyed QP's WRs will complete into no CQ. */
  function forgetCompletions(qp: number): void {
    const mine = unpolledOf.get(qp);
    if (!mine) return;
    expectCompletions(qp, "send", -mine.send);
    expectCompletions(qp, "recv", -mine.recv);
    unpolledOf.delete(qp);
  }

  /** `n` more (or, negative, fewer) completions QP `qp` will put into its send or receive CQ. */
  function expectCompletions(qp: number, side: "send" | "recv", n: number): void {
    const a = qpAsked.get(qp);
    const cq = side === "send" ? a?.send_cq : a?.recv_cq;
    if (cq === undefined || n === 0) return;
    const mine = unpolledOf.get(qp) ?? { send: 0, recv: 0 };
    mine[side] = Math.max(0, mine[side] + n);
    unpolledOf.set(qp, mine);
    unpolled.set(cq, Math.max(0, (unpolled.get(cq) ?? 0) + n));
  }

  /** A CQ that more posted work will complete into than it holds, before any poll makes room. */
  function overflowNotice(qp: number, side: "send" | "recv"): SessionNotice | undefined {
    const a = qpAsked.get(qp);
    const cq = side === "send" ? a?.send_cq : a?.recv_cq;
    if (cq === undefined || overflowWarned.has(cq)) return undefined;
    const entry = entryOf(cq);
    const pending = unpolled.get(cq) ?? 0;
    if (!entry || pending <= (entry.obj as Cq).cqe) return undefined;
    overflowWarned.add(cq);
    const data = { cq: cqLabel(cq), cqe: (entry.obj as Cq).cqe, pending };
    return { id: "cq_overflow", text: cqOverflowText(data), ...data };
  }

  /** Retires the WRs of QP `handle` up to the one `wc` completes; the send WR, when it was a send completion. */
  function retire(handle: number, cq: number, wc: Wc): InFlight | undefined {
    const list = inFlight.get(handle) ?? [];
    const qp = entryOf(handle)?.obj as Qp | undefined;
    if (!qp) return undefined;
    const sendCq = objects.handleOf(qp.send_cq);
    const recvCq = objects.handleOf(qp.recv_cq);
    const i = list.findIndex((w) => w.wr_id === wc.wr_id);
    const send = sendCq !== recvCq ? cq === sendCq : wc.status === IBV_WC_SUCCESS ? wc.opcode < IBV_WC_RECV : i >= 0;
    expectCompletions(handle, send ? "send" : "recv", -1);
    if (!send) {
      const bytes = recvs.get(handle)?.shift()?.bytes;
      if (bytes !== undefined && wc.status !== IBV_WC_SUCCESS && wc.status !== IBV_WC_WR_FLUSH_ERR)
        failedRecv.set(handle, bytes);
      return undefined;
    }
    if (i < 0) return undefined;
    const [wr] = list.splice(0, i + 1).slice(-1);
    return wr;
  }

  function cqNotice(cq: number): SessionNotice | undefined {
    const asked = cqAsked.get(cq);
    const entry = entryOf(cq);
    if (asked === undefined || !entry || cqWarned.has(cq)) return undefined;
    const actual = (entry.obj as Cq).cqe;
    // The running total decides; the QPs are listed (a walk over all of them) only when it warns.
    const total = cqWrs.get(cq) ?? 0;
    if (total <= asked || total > actual) return undefined;
    const users: CqRoundedUp["users"] = [];
    let wrs = 0;
    for (const e of live("qp")) {
      const a = qpAsked.get(e.handle);
      if (!a) continue;
      const send = a.send_cq === cq ? a.send : 0;
      const recv = a.recv_cq === cq ? a.recv : 0;
      if (!send && !recv) continue;
      wrs += send + recv;
      const variable = objects.variable?.(e.handle);
      users.push({ qpn: (e.obj as Qp).qp_num, ...(variable && { variable }), send, recv });
    }
    // Only the rounding case: a CQ smaller than its QPs' queues together is common and often
    // fine (lessons size them so); one that fits them only by rxe's rounding is a latent bug.
    if (wrs <= asked || wrs > actual) return undefined;
    cqWarned.add(cq);
    const data = { asked, actual, device: (entry.obj as Cq).context.device.name, wrs, users };
    return { id: "cq_rounded_up", text: cqRoundedUpText(data), ...data };
  }

  return {
    /** Before the backend is called: the error the session gives instead, if any. */
    refuse(type: string, handle: number, method: string): VerbsError | undefined {
      if (type !== "cq" || method !== "destroy") return undefined;
      const ev = cqEvents.get(handle);
      // Let the backend say EBUSY first while QPs use the CQ (the kernel's check comes first).
      const entry = entryOf(handle);
      const used = live("qp").some((e) => {
        const qp = e.obj as Qp;
        return qp.send_cq === entry?.obj || qp.recv_cq === entry?.obj;
      });
      return ev && ev.got > ev.acked && !used ? unackedEventsError(ev.got - ev.acked) : undefined;
    },

    /** Why a polled completion failed: the backend's exact reason, else what the objects tell. */
    explain(cq: number, wc: Wc): WcWhy | undefined {
      if (wc.status === IBV_WC_SUCCESS || wc.status === IBV_WC_WR_FLUSH_ERR) return undefined;
      const qpEntry = qpOfCompletion(cq, wc.qp_num);
      const wr = qpEntry ? inFlight.get(qpEntry.handle)?.find((w) => w.wr_id === wc.wr_id) : undefined;
      const posted = wr ? nameOf(ibv_wr_opcode, wr.opcode) : undefined;
      const exact = explains(backend) ? backend.completionReason(wc) : undefined;
      if (exact) return { reason: exact, source: "simulator", ...(posted && { posted }) };
      if (!qpEntry) return undefined;
      const qps = qpFacts();
      const device = (qpEntry.obj as Qp).pd.context.device.name;
      const me = qps.find((q) => q.qp_num === wc.qp_num && q.device === device);
      const sendSide = wr && objects.handleOf((qpEntry.obj as Qp).send_cq) === cq;
      const reason = me
        ? inferWcReason({ status: wc.status, qp: me, ...(sendSide && { wr }), qps, mrs: mrFacts() })
        : undefined;
      return reason ? { reason, source: "inferred", ...(posted && { posted }) } : undefined;
    },

    /** After a call succeeded: what it changes here, and the notices it earns. */
    after(type: string, handle: number, method: string, args: unknown[], result: unknown): SessionNotice[] {
      const notices: SessionNotice[] = [];
      if (type === "context" && method === "createCq") {
        const h = objects.handleOf(result);
        if (h !== undefined) cqAsked.set(h, Number(args[0]));
      } else if (type === "pd" && method === "createQp") {
        const h = objects.handleOf(result);
        const init = args[0] as QpInitAttr;
        if (h !== undefined) {
          const send_cq = objects.handleOf(init.send_cq);
          const recv_cq = objects.handleOf(init.recv_cq);
          qpAsked.set(h, {
            send: Number(init.cap?.max_send_wr ?? 0),
            recv: Number(init.cap?.max_recv_wr ?? 0),
            sigAll: Boolean(init.sq_sig_all),
            ...(send_cq !== undefined && { send_cq }),
            ...(recv_cq !== undefined && { recv_cq }),
          });
          useCq(h, 1);
          for (const cq of new Set([send_cq, recv_cq]))
            if (cq !== undefined) {
              const n = cqNotice(cq);
              if (n) notices.push(n);
            }
        }
      } else if (type === "qp" && method === "modify") {
        const [attr, mask] = args as [QpAttrInput, number];
        const set = psnSet.get(handle) ?? {};
        if (mask & IBV_QP_SQ_PSN && attr.sq_psn !== undefined) set.sq = attr.sq_psn;
        if (mask & IBV_QP_RQ_PSN && attr.rq_psn !== undefined) set.rq = attr.rq_psn;
        psnSet.set(handle, set);
        if (attr.qp_state === IBV_QPS_RESET) {
          inFlight.delete(handle);
          recvs.delete(handle);
          forgetCompletions(handle);
        }
      } else if (type === "qp" && method === "postSend") {
        const wrs = (Array.isArray(args[0]) ? args[0] : [args[0]]) as SendWr[];
        const list = inFlight.get(handle) ?? [];
        for (const w of wrs) {
          const length = (w.sg_list ?? []).reduce((n, s) => n + s.length, 0);
          const remote = w.rdma ?? w.atomic;
          list.push({
            wr_id: w.wr_id ?? 0,
            opcode: w.opcode,
            length,
            ...(remote && { remote_addr: remote.remote_addr, rkey: remote.rkey }),
            sges: (w.sg_list ?? []).map((g) => ({ addr: g.addr, length: g.length, lkey: g.lkey })),
            signaled: ((w.send_flags ?? 0) & IBV_SEND_SIGNALED) !== 0,
            targets: targetsOf(w, length),
          });
        }
        inFlight.set(handle, list);
        const sigAll = qpAsked.get(handle)?.sigAll ?? false;
        expectCompletions(
          handle,
          "send",
          wrs.filter((w) => sigAll || ((w.send_flags ?? 0) & IBV_SEND_SIGNALED) !== 0).length,
        );
        const n = overflowNotice(handle, "send");
        if (n) notices.push(n);
      } else if (type === "qp" && method === "postRecv") {
        const wrs = (Array.isArray(args[0]) ? args[0] : [args[0]]) as RecvWr[];
        const list = recvs.get(handle) ?? [];
        for (const w of wrs)
          list.push({
            wr_id: Number(w.wr_id ?? 0),
            bytes: (w.sg_list ?? []).reduce((n, g) => n + g.length, 0),
            targets: sgeTargets(w.sg_list),
          });
        recvs.set(handle, list);
        expectCompletions(handle, "recv", wrs.length);
        const n = overflowNotice(handle, "recv");
        if (n) notices.push(n);
      } else if (type === "qp" && method === "destroy") {
        forgetCompletions(handle);
        useCq(handle, -1);
        qpAsked.delete(handle);
        inFlight.delete(handle);
        recvs.delete(handle);
      } else if (type === "channel" && method === "getCqEvent" && result) {
        const h = objects.handleOf(result);
        if (h !== undefined) {
          const ev = cqEvents.get(h) ?? { got: 0, acked: 0 };
          ev.got++;
          cqEvents.set(h, ev);
          sinceEvent.set(h, "event");
        }
      } else if (type === "cq" && method === "poll") {
        const got = Array.isArray(result) ? result.length : 0;
        if (sinceEvent.get(handle) === "event" && got < Number(args[0] ?? 1)) sinceEvent.set(handle, got);
      } else if (type === "cq" && method === "reqNotify") {
        const drained = sinceEvent.get(handle);
        sinceEvent.delete(handle);
        if (typeof drained === "number") {
          const data = { cq: cqLabel(handle), lastPoll: drained };
          notices.push({ id: "late_rearm", text: lateRearmText(data), ...data });
        }
      } else if (type === "cq" && method === "ackEvents") {
        const ev = cqEvents.get(handle) ?? { got: 0, acked: 0 };
        ev.acked += Number(args[0]);
        cqEvents.set(handle, ev);
      } else if (type === "mr" && method === "read") {
        const offset = Number(args[0] ?? 0);
        const mr = entryOf(handle)?.obj as Mr;
        const end = offset + Number(args[1] ?? mr.length - offset);
        const wr = racingWr((t) => t.mr === handle && t.start < end && offset < t.end);
        if (wr) {
          const data = { mr: mrLabel(handle), offset, length: end - offset, ...wr };
          notices.push({ id: "read_before_poll", text: readBeforePollText(data), ...data });
        }
      }
      return notices;
    },

    /** How many send WRs QP `handle` posted that no completion has retired yet. */
    sendsInFlight(handle: number): number {
      return inFlight.get(handle)?.length ?? 0;
    },

    /** A polled completion retires its WR (and the unsignaled ones before it). */
    completed(cq: number, wc: Wc): void {
      const e = qpOfCompletion(cq, wc.qp_num);
      if (e) retire(e.handle, cq, wc);
      else unpolled.set(cq, Math.max(0, (unpolled.get(cq) ?? 0) - 1));
    },
  };
}
