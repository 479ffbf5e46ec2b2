/**
 * Why a work completion failed, as data: the simulator's responder and requester fill it with
 * what they checked (sim/explain.ts), the session infers it from both sides' objects on native
 * (app/session/explain-wc.ts), and each language words it in one place: English here
 * (`wcReasonText`, also what transcripts' exports and the CLI print), Chinese in the renderer's
 * i18n.ts. Values stay numbers (rkeys, addresses, byte counts, QP numbers) so that every wording
 * names them; verbs.h names (IBV_ACCESS_REMOTE_WRITE) are worded from the numbers too.
 */
import { flagNames, ibv_access_flags, ibv_qp_state, ibv_wr_opcode, nameOf } from "./constants.js";

/** A QP as a reason names it: its number and the device it lives on. */
export interface QpRef {
  qpn: number;
  device?: string;
}

/** A fault of the lab link that took a packet (sim/faults.ts): what the "dropped" reason says in any language. */
export type LinkFault =
  /** A `bytes`-byte IP packet above `netdev`'s MTU. */
  | { kind: "mtu"; bytes: number; netdev: string }
  /** netem's loss on the sender's veth. */
  | { kind: "loss"; percent: number; netdev: string }
  /** The nftables rule on the receiver's host that drops RoCE's UDP port 4791. */
  | { kind: "udp-blocked"; netdev: string }
  /** The nftables rule that drops one PSN once. */
  | { kind: "psn-dropped"; psn: number; netdev: string };

/**
 * Why a packet went nowhere (the packet log's `drop`, and a "dropped" completion reason's): a
 * fault of the lab link, or what the sender or the receiving device found. `dropText` words it in
 * English, the renderer's i18n.ts in Chinese.
 */
export type PacketDrop =
  | { kind: "fault"; fault: LinkFault }
  /** The sender's link is down. */
  | { kind: "link-down" }
  /** No device has the destination GID. */
  | { kind: "no-route" }
  /** A MAD to an IPv4 address no device has. */
  | { kind: "no-device-with-ip"; ip: string }
  /** The link's transmit queue (`link`, "rxe0→rxe1") held more than it takes. */
  | { kind: "tx-queue-full"; link: string }
  /** No QP `qpn` on the receiving `device`. */
  | { kind: "no-qp"; qpn: number; device: string }
  | { kind: "qp-type" }
  /** The receiving QP takes no such packet in its state (a request before RTR, a response before RTS). */
  | { kind: "not-ready" }
  /** The packet's GIDs are not the receiving QP's path. */
  | { kind: "path" }
  | { kind: "qkey" }
  /** A multicast datagram for a group none of `device`'s QPs joined. */
  | { kind: "no-group-member"; device: string }
  /** A multicast datagram for a group no device's netdev is a member of. */
  | { kind: "no-member-netdev" }
  /** Held back by netem's delay when the qdisc was removed (`tc qdisc del` frees what it holds). */
  | { kind: "qdisc-purged" };

/** A dropped packet's reason in English (what the packet log, the exports and the CLI print). */
export function dropText(d: PacketDrop): string {
  switch (d.kind) {
    case "fault": {
      const f = d.fault;
      switch (f.kind) {
        case "mtu":
          return `${f.bytes}-byte packet above the MTU of ${f.netdev}`;
        case "loss":
          return `lost (netem loss ${f.percent}% on ${f.netdev})`;
        case "udp-blocked":
          return `UDP 4791 blocked (nftables input rule on ${f.netdev}'s host)`;
        case "psn-dropped":
          return `PSN ${f.psn} dropped once (nftables input rule on ${f.netdev}'s host)`;
      }
      break;
    }
    case "link-down":
      return "link down";
    case "no-route":
      return "no route to the destination GID";
    case "no-device-with-ip":
      return `no device has the GID ${d.ip}`;
    case "tx-queue-full":
      return `${d.link}'s transmit queue is full`;
    case "no-qp":
      return `no QP ${hex(d.qpn)} on ${d.device}`;
    case "qp-type":
      return "QP type does not match the opcode";
    case "not-ready":
      return "destination QP is not ready";
    case "path":
      return "addresses do not match the QP's path";
    case "qkey":
      return "Q_Key mismatch";
    case "no-group-member":
      return `no QP of ${d.device} is attached to the group`;
    case "no-member-netdev":
      return "no netdev is a member of the multicast group";
    case "qdisc-purged":
      return "purged with the netem qdisc";
  }
}

/** Whose scatter/gather list: the send WR's, or the responder's receive WQE's. */
export type SgeOwner = "send" | "recv";

/**
 * One reason. `at` is the responder QP that refused the request (the simulator knows it and says
 * so first); an inferred reason names the peer in its own words instead. `mr` is the learner's
 * name for an MR ("mr3") where the session knows it; the simulator says "the MR".
 */
export type WcReason =
  /** The rkey is 0: an MR registered without a REMOTE_* flag has rkey 0. */
  | { kind: "rkey-zero"; at?: QpRef }
  /** The rkey given is an MR's lkey; `mrRkey` is that MR's rkey (0: registered without remote access). */
  | { kind: "rkey-is-lkey"; at?: QpRef; rkey: number; mr?: string; mrRkey: number }
  /** No MR on the responder's device has this rkey. */
  | { kind: "rkey-unknown"; at?: QpRef; rkey: number; peer?: QpRef }
  /** The MR with the rkey belongs to another PD than the responder QP. */
  | { kind: "mr-other-pd"; at?: QpRef; rkey: number; mr?: string; peer?: QpRef }
  /** The MR lacks the remote access flag `need` (its flags are `have`). */
  | { kind: "mr-access"; at?: QpRef; rkey: number; mr?: string; need: number; have: number }
  /** The remote range [va, va + n) is not inside the MR [mrAddr, mrAddr + mrLen). */
  | { kind: "outside-mr"; at?: QpRef; mr?: string; va: number; n: number; mrAddr: number; mrLen: number }
  /** The responder QP's qp_access_flags lack `need` (they are `have`); `peer` names it when `at` does not. */
  | { kind: "qp-access"; at?: QpRef; peer?: QpRef; need: number; have: number }
  /** The responder QP has max_dest_rd_atomic 0. */
  | { kind: "no-rd-atomic"; qp: QpRef }
  /** An atomic's remote address is not 8-byte aligned. */
  | { kind: "atomic-unaligned"; at?: QpRef; va: number }
  /** A packet came out of its message's opcode sequence. */
  | { kind: "op-sequence"; at: QpRef }
  /** The requester cannot send this WR opcode now (not valid for the QP type, or out of sequence). */
  | { kind: "op-invalid"; opcode: number }
  /** The responder refused without a more specific check (invalid request, access, receive WQE). */
  | { kind: "refused"; at: QpRef; what: "invalid-request" | "access" | "recv-wqe" }
  /** The message is longer than the responder's receive WQE (`recvBytes`). */
  | { kind: "recv-short"; at: QpRef; recvBytes: number }
  /** Inferred: the SEND carries `sendBytes`, the peer's receive WQE holds `recvBytes`. */
  | { kind: "send-longer"; peer: QpRef; sendBytes: number; recvBytes: number }
  /** sg_list[i].lkey names no MR (on `device`, or on the QP's device). */
  | { kind: "sge-lkey-unknown"; at?: QpRef; owner: SgeOwner; i: number; lkey: number; device?: string }
  /** sg_list[i] names an MR of another PD than the QP's. */
  | { kind: "sge-other-pd"; at?: QpRef; owner: SgeOwner; i: number; lkey: number; mr?: string }
  /** sg_list[i]'s MR lacks IBV_ACCESS_LOCAL_WRITE (its flags are `have`). */
  | { kind: "sge-no-local-write"; at?: QpRef; owner: SgeOwner; i: number; lkey: number; have: number }
  /** sg_list[i] [addr, addr + len) is not inside its MR [mrAddr, mrAddr + mrLen). */
  | {
      kind: "sge-outside";
      at?: QpRef;
      owner: SgeOwner;
      i: number;
      addr: number;
      len: number;
      mr?: string;
      mrAddr: number;
      mrLen: number;
    }
  /** The sg_list was refused (no SGE at fault found). */
  | { kind: "sge-refused"; at?: QpRef; owner: SgeOwner }
  /** The responder expected PSN `expected` and got a later one (`got`): it NAKs. */
  | { kind: "psn-ahead"; qp: QpRef; expected: number; got: number }
  /** The responder expected `expected` and got an earlier one: it takes the request for a duplicate. */
  | { kind: "psn-behind"; qp: QpRef; expected: number; got: number }
  /** Inferred: this QP's sq_psn and the peer's rq_psn were set apart. */
  | { kind: "psn-set-apart"; peer: QpRef; sqPsn: number; rqPsn: number }
  /** No QP `qpn` on `device`: the device drops the packets. */
  | { kind: "no-qp"; device: string; qpn: number }
  /**
   * A device dropped the packets: `where` "send" (it could not send them), "wire" (the link's
   * faults took them) or "receive" (the receiving device); `drop` is why, as the packet log has it.
   */
  | { kind: "dropped"; device: string; where: "send" | "wire" | "receive"; drop: PacketDrop }
  /** Inferred: no QP in the session has dest_qp_num `qpn` (`others` are the QPs there are). */
  | { kind: "dest-qp-unknown"; qpn: number; others: number[] }
  /** Inferred: the peer QP is in `state`, which takes no requests. */
  | { kind: "peer-not-ready"; peer: QpRef; state: number }
  /** Inferred: the peer answers QP `answers` (its dest_qp_num), not QP `me`. */
  | { kind: "peer-answers-other"; peer: QpRef; answers: number; me: number }
  /** Nothing came back from QP `qpn`. */
  | { kind: "no-answer"; qpn: number }
  /** The responder had no receive WQE posted (RNR NAK); without `qp`, only that it answered RNR NAK. */
  | { kind: "rnr"; qp?: QpRef }
  /** `cause` and then the requester's retries ran out: `counter` (retry_cnt or rnr_retry) was `value`. */
  | { kind: "retries"; cause: WcReason; counter: "retry_cnt" | "rnr_retry"; value: number };

/** The WR opcode's name for a learner ("IBV_WR_RDMA_WRITE"). */
export const wrOpcodeName = (op: number) => nameOf(ibv_wr_opcode, op);
/** A flag word's names joined ("IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ"), or `none`. */
export const accessNames = (a: number, none = "none") => flagNames(ibv_access_flags, a).join(" | ") || none;
/** One access flag's name. */
export const accessName = (a: number) => nameOf(ibv_access_flags, a);
/** A QP state without its prefix ("INIT"). */
export const qpStateShort = (s: number) => nameOf(ibv_qp_state, s).replace("IBV_QPS_", "");
export const hex = (n: number) => `0x${n.toString(16)}`;

/** "QP 17 on rxe1". */
export const qpText = (q: QpRef) => `QP ${hex(q.qpn)}${q.device ? ` on ${q.device}` : ""}`;
const sgOwner = (o: SgeOwner) => (o === "send" ? "the WR's" : "its receive WQE's");
const rkeyMr = (rkey: number, mr?: string) => (mr ? `${mr} (rkey ${hex(rkey)})` : `the MR with rkey ${hex(rkey)}`);
const range = (a: number, n: number) => `[${hex(a)}, ${hex(a + n)})`;
const REFUSED = { "invalid-request": "invalid request", access: "access refused", "recv-wqe": "bad receive WQE" };

/** The reason in English: what the simulator and the session said before the reasons were data. */
export function wcReasonText(r: WcReason): string {
  // A transcript from before reasons were data holds the sentence itself.
  if (typeof r !== "object" || r === null) return String(r);
  const at = "at" in r && r.at ? `${qpText(r.at)}: ` : "";
  return at + body(r);
}

function body(r: WcReason): string {
  switch (r.kind) {
    case "rkey-zero":
      return "rkey 0 names no MR (an MR registered without a REMOTE_* access flag has rkey 0)";
    case "rkey-is-lkey":
      if (r.mrRkey !== 0)
        return r.mr
          ? `rkey ${hex(r.rkey)} is ${r.mr}'s lkey, not its rkey (${hex(r.mrRkey)})`
          : `rkey ${hex(r.rkey)} is the lkey of an MR whose rkey is ${hex(r.mrRkey)}`;
      return r.mr
        ? `rkey ${hex(r.rkey)} is the lkey of ${r.mr}, registered without a REMOTE_* access flag: its rkey is 0`
        : `rkey ${hex(r.rkey)} is the lkey of an MR registered without a REMOTE_* access flag: its rkey is 0 ` +
            "(rxe gives an MR an rkey, equal to its lkey, only with remote access)";
    case "rkey-unknown":
      return r.peer
        ? `rkey ${hex(r.rkey)} is not the rkey of any MR on ${qpText(r.peer)}'s device`
        : `rkey ${hex(r.rkey)} names no MR on this device`;
    case "mr-other-pd":
      return `${rkeyMr(r.rkey, r.mr)} belongs to another PD than ${r.peer ? qpText(r.peer) : "the QP"}`;
    case "mr-access":
      return `${rkeyMr(r.rkey, r.mr)} lacks ${accessName(r.need)} (its access is ${accessNames(r.have)})`;
    case "outside-mr": {
      const past = r.va + r.n - (r.mrAddr + r.mrLen);
      return (
        `${range(r.va, r.n)} (${r.n} bytes) is outside ${r.mr ?? "the MR"} ${range(r.mrAddr, r.mrLen)}` +
        (past > 0 && r.va >= r.mrAddr ? `: ${past} bytes past its end` : "")
      );
    }
    case "qp-access":
      return `${r.peer ? `${qpText(r.peer)}'s` : "its"} qp_access_flags lack ${accessName(r.need)} (they are ${accessNames(r.have)})`;
    case "no-rd-atomic":
      return `${qpText(r.qp)} has max_dest_rd_atomic 0: it takes no RDMA READ or atomic`;
    case "atomic-unaligned":
      return `the atomic's remote address ${hex(r.va)} is not 8-byte aligned`;
    case "op-sequence":
      return "a packet arrived out of its message's opcode sequence";
    case "op-invalid":
      return `the QP cannot send this opcode now (${wrOpcodeName(r.opcode)}: not valid for this QP type, or out of sequence)`;
    case "refused":
      return REFUSED[r.what];
    case "recv-short":
      return `the message is longer than its receive WQE (${r.recvBytes} bytes)`;
    case "send-longer":
      return `the SEND carries ${r.sendBytes} bytes, and ${qpText(r.peer)}'s receive WQE holds ${r.recvBytes}`;
    case "sge-lkey-unknown":
      return `${sgOwner(r.owner)} sg_list[${r.i}].lkey ${hex(r.lkey)} ${r.device ? `names no MR on ${r.device}` : "is the lkey of no MR on this QP's device"}`;
    case "sge-other-pd":
      return `${sgOwner(r.owner)} sg_list[${r.i}]${r.mr ? ` names ${r.mr},` : `.lkey ${hex(r.lkey)} names an MR`} of another PD than the QP's`;
    case "sge-no-local-write":
      return `${sgOwner(r.owner)} sg_list[${r.i}]'s MR (lkey ${hex(r.lkey)}) lacks IBV_ACCESS_LOCAL_WRITE (its access is ${accessNames(r.have)})`;
    case "sge-outside":
      return `${sgOwner(r.owner)} sg_list[${r.i}] ${range(r.addr, r.len)} is outside ${r.mr ?? "its MR"} ${range(r.mrAddr, r.mrLen)}`;
    case "sge-refused":
      return `${sgOwner(r.owner)} sg_list was refused`;
    case "psn-ahead":
      return (
        `${qpText(r.qp)} expected PSN ${hex(r.expected)} and got ${hex(r.got)}, a later one: ` +
        "the sender's sq_psn and this QP's rq_psn differ"
      );
    case "psn-behind":
      return (
        `${qpText(r.qp)} expected PSN ${hex(r.expected)} and got ${hex(r.got)}, an earlier one, so it took ` +
        "the request for a duplicate: the sender's sq_psn and this QP's rq_psn differ"
      );
    case "psn-set-apart":
      return (
        `this QP's sq_psn was set to ${r.sqPsn} and ${qpText(r.peer)}'s rq_psn to ${r.rqPsn}: ` +
        `the responder ${r.sqPsn > r.rqPsn ? "NAKs the PSNs as out of sequence" : "takes the requests for duplicates"}`
      );
    case "no-qp":
      return `${r.device} dropped its packets: no QP ${hex(r.qpn)} on ${r.device}`;
    case "dropped":
      return `${r.device} ${r.where === "send" ? "could not send" : r.where === "wire" ? "never got its packets" : "dropped its packets"}: ${dropText(r.drop)}`;
    case "dest-qp-unknown":
      return (
        `dest_qp_num is ${r.qpn} (${hex(r.qpn)}), and no QP in this session has that number` +
        (r.others.length ? ` (the others are ${r.others.map(hex).join(", ")})` : "") +
        ": the peer device drops every packet"
      );
    case "peer-not-ready":
      return `${qpText(r.peer)} is in ${qpStateShort(r.state)}: a QP takes requests only from RTR on`;
    case "peer-answers-other":
      return `${qpText(r.peer)} answers QP ${hex(r.answers)} (its dest_qp_num), not QP ${hex(r.me)}: no ACK comes back`;
    case "no-answer":
      return `nothing came back from QP ${hex(r.qpn)}`;
    case "rnr":
      return r.qp
        ? `${qpText(r.qp)} had no receive WQE posted when the SEND arrived (post_recv before the peer sends)`
        : "the responder answered RNR NAK";
    case "retries":
      return (
        `${wcReasonText(r.cause)}; after ${r.value + 1} tries (${r.counter} ${r.value})` +
        (r.counter === "rnr_retry" ? " the requester gave up" : "")
      );
    default:
      return JSON.stringify(r);
  }
}
