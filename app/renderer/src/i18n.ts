/**
 * Every string the UI itself shows, in English and Simplified Chinese: one table, so that a
 * learner who chose 中文 reads the buttons, goals, feedback, errors and empty panes in it, not
 * only the lesson text. verbs.h names (IBV_QPS_RTS, ibv_post_send), errno names and values stay
 * as they are in both: they are what the learner types and searches for.
 */
import { createContext, useContext } from "react";
import type { Language } from "../../../lessons/schema.js";
import type { LinkState, WireModel } from "../../../verbs/lab.js";
import { percentOf as pct } from "./model/link-form.js";
import { verbFailureText, type VerbFailure } from "../../../verbs/verb-failure.js";
import { backendExitZh, verbFailureZh } from "./i18n/verb-failure-zh.js";
import { checkNoteZh, checkOutcomeZh } from "./i18n/check-zh.js";
import { packetDetailZh, packetLabelZh } from "./i18n/packet-detail-zh.js";
import { packetDetail } from "./model/timeline.js";
import type { BackendStatus, PacketRecord } from "../../bridge/contract.js";
import type { Divergence, LineOutcome } from "./model/view.js";
import type { SessionNotice } from "../../session/transcript.js";
import { shortWrOpcode } from "../../session/notice-text.js";
import { stateName } from "./model/format.js";
import { qpName } from "./model/names.js";
import {
  accessName,
  accessNames,
  hex,
  qpStateShort,
  dropText,
  wcReasonText,
  wrOpcodeName,
  type LinkFault,
  type PacketDrop,
  type QpRef,
  type SgeOwner,
  type WcReason,
} from "../../../verbs/wc-reason.js";

/** The wire models as the UI names them: each is a model, and says so. */
const WIRE_NAME_EN: Record<WireModel, string> = {
  rxe: "rxe model",
  "25GbE": "25GbE NIC model",
  "100GbE": "100GbE NIC model",
};
const WIRE_NAME_ZH: Record<WireModel, string> = {
  rxe: "rxe 模型",
  "25GbE": "25GbE 网卡模型",
  "100GbE": "100GbE 网卡模型",
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

const en = {
  // Lesson pane
  goals: "Goals",
  hint: "Show a hint",
  moreHint: "Another hint",
  solution: "Load the solution",
  nextStep: "Next step →",
  nextLesson: "Next lesson:",
  lessonDone: "Lesson complete",
  noLesson: "No lesson loaded.",
  stepPassed: "Step passed",
  passedBefore: "Passed on an earlier visit: run it to check the goals again",
  breakIt: "Break it",
  backToStep: "Back to the step",
  checkFailed: (why: string) => `Could not check the step: ${why}`,
  // Top bar
  lessonPicker: "lesson",
  backendTitle: "which verbs backend runs the program",
  backendSim: "simulator (rxe-faithful)",
  wireModel: (m: WireModel) => `wire: ${WIRE_NAME_EN[m]}`,
  wireModelName: (m: WireModel) => WIRE_NAME_EN[m],
  wireModelTitle:
    "The simulator's timing comes from a wire model (sim/wire.ts) fitted to rxe in the lab VM; 25GbE and 100GbE are NIC models. Neither is real rxe.",
  backendNative: "real rxe (libibverbs)",
  notAvailable: " — not available here",
  backendState: (state: string) => `backend ${state}`,
  backendStates: { running: "running", starting: "starting", died: "died", disconnected: "disconnected" } as Record<
    string,
    string
  >,
  restarted: (n: number) => ` · restarted ${n}×`,
  backendDied: (exit?: BackendStatus["lastExit"]) =>
    `The backend process stopped (${exit?.reason ?? "unknown reason"}). Restarting it…`,
  backendBack: "The backend is back. Your transcript so far is intact.",
  staleResults: "The views show the last run, from another step: run this step's program to replace them.",
  hostLost: (reason: string) => `Lost the connection to VerbsLab's host: ${reason}`,
  hostUnreachable: (why: string) => `Could not reach the VerbsLab host: ${why}`,
  resyncFailed: (why: string) => `Could not re-read the transcript yet: ${why}`,
  switched: (native: boolean) => `Switched to the ${native ? "real rxe device" : "simulator"}: a fresh session.`,
  stillOn: (native: boolean, why: string) =>
    `Still on the ${native ? "real rxe device" : "simulator"}, nothing lost. ${why}`,
  // Toolbar
  run: "▶ Run",
  step: "⤼ Step",
  continue: "⇥ Continue",
  stop: "■ Stop",
  reset: "↺ Reset",
  runTitle: "Run (Ctrl+Enter)",
  stepTitle: "Step (F10)",
  continueTitle: "Continue (F8)",
  stopTitle: "Stop (Shift+F5)",
  resetTitle: "A fresh session: every object goes",
  pausedBefore: "paused before",
  line: (n: number) => `line ${n}`,
  showLine: (n: number) => `main.ts line ${n}: click to show it`,
  typeErrors: (n: number) => `${n} type error${n === 1 ? "" : "s"}: run anyway?`,
  moreTypeErrors: (n: number) => `and ${n} more (marked in the editor)`,
  runAnyway: "Run anyway",
  atLine: (line: number, column: number) => `at main.ts line ${line}, column ${column}`,
  notAwaited: " — the call was not awaited",
  cancel: "Cancel",
  editorLoading: "Loading the editor…",
  // Errors
  stopped: "Stopped.",
  failedWith: "failed with",
  attribute: "attribute",
  /** A failed verb's reason from its data (verbs/verb-failure.ts): the sentence the backend's `reason` carries. */
  verbWhy: (why: VerbFailure): string => verbFailureText(why),
  /** The Log's "program ended" line of a verb's refusal; English: undefined (the line's own text says it). */
  endedLine: (_e: { code: string; verb?: string; why: VerbFailure }): string | undefined => undefined,
  /** A call's outcome after its line in the editor. */
  lineOutcome: (o: LineOutcome): string =>
    o.kind === "error"
      ? o.attribute
        ? `${o.code}: ${o.missing ? "missing " : ""}${o.attribute}`
        : o.code
      : o.kind === "completions"
        ? `${plural(o.n, "completion")}${o.bad ? `, ${o.bad}` : ""}`
        : o.text,
  /** What each work-completion status means (model/wc-explain.ts), by verbs.h name. */
  wcStatus: {
    IBV_WC_SUCCESS: "The work request completed.",
    IBV_WC_LOC_LEN_ERR: "A receive buffer was too small for the incoming message, or a send was longer than allowed.",
    IBV_WC_LOC_QP_OP_ERR: "The local QP could not perform the request (bad opcode, or too many SGEs / inline bytes).",
    IBV_WC_LOC_PROT_ERR:
      "An SGE names memory the lkey does not cover, or the MR lacks LOCAL_WRITE for a write into it.",
    IBV_WC_WR_FLUSH_ERR:
      "Flushed: the QP is in ERR, so every outstanding request completes with this status, unexecuted.",
    IBV_WC_MW_BIND_ERR: "A memory window bind failed.",
    IBV_WC_BAD_RESP_ERR: "The responder sent an unexpected reply.",
    IBV_WC_LOC_ACCESS_ERR: "A local access violation while writing incoming data (e.g. an RDMA READ response).",
    IBV_WC_REM_INV_REQ_ERR: "The remote side rejected the request as invalid (opcode not allowed, message too long).",
    IBV_WC_REM_ACCESS_ERR:
      "The remote side refused access: wrong rkey, an address outside its MR, or the MR lacks the REMOTE_* flag.",
    IBV_WC_REM_OP_ERR: "The remote side could not complete the operation (e.g. its receive buffer was too small).",
    IBV_WC_RETRY_EXC_ERR:
      "No ACK came back after timeout × (retry_cnt + 1): the peer is unreachable or dest_qp_num / PSN / GID is wrong.",
    IBV_WC_RNR_RETRY_EXC_ERR: "Receiver not ready: the peer had no receive posted, and rnr_retry ran out.",
    IBV_WC_REM_INV_RD_REQ_ERR:
      "The remote side refused an RDMA READ or atomic (max_dest_rd_atomic is 0 or access missing).",
    IBV_WC_REM_ABORT_ERR: "The remote side aborted the operation.",
    IBV_WC_FATAL_ERR: "A fatal error on the device.",
    IBV_WC_RESP_TIMEOUT_ERR: "The response timed out.",
    IBV_WC_GENERAL_ERR: "A general error.",
  } as Partial<Record<string, string>>,
  wcStatusOther: (status: number) => `Status ${status}.`,
  why: "Why:",
  /** A beginner mistake the session noticed: its own English (app/session/notice-text.ts). */
  notice: (n: SessionNotice): string => n.text,
  /** Why a completion failed, from its data (verbs/wc-reason.ts, where the English wording lives). */
  wcReason: (r: WcReason): string => wcReasonText(r),
  whySimulator: "exact: the simulator's responder",
  whyInferred: "inferred from both sides' objects",
  opcodeUnset: (opcode: number) => `opcode ${opcode} (unset)`,
  /** rxe fills only wr_id, status and qp_num of an error (or flush) completion. */
  errorOpcodeNote: (opcode: number, posted?: string) =>
    `opcode ${opcode} means nothing here: rxe sets only wr_id, status and qp_num on an error completion` +
    (posted ? ` (the WR was ${posted})` : ""),
  // Tabs and panes
  transcript: (n: number) => `Transcript (${n})`,
  log: (n: number) => (n ? `Log (${n})` : "Log"),
  logEmpty: "verbs.log(…) lines appear here.",
  exportLabel: "Export",
  exportC: "C program",
  exportPcap: "pcap",
  exportPcapTitle:
    "The packets as the simulator sends them (the program replayed on it), as rxe puts them on the wire: open the file in Wireshark. On real rxe only traffic between rxe0 and rxe1 crosses the veth a capture can see: packets between two QPs of one device are looped inside rxe and never reach it.",
  importReplay: "Import & replay…",
  transcriptEmpty: "Run or step through the program: every verb call lands here.",
  colVerb: "verb",
  colWhat: "what",
  colResult: "result",
  imported: (n: number) => `Imported ${n} events. Replaying them on a fresh session…`,
  replayed: (n: number, d: number) => `Replayed ${n} events, ${d} divergence${d === 1 ? "" : "s"}.`,
  importFailed: (why: string) => `Could not import that transcript: ${why}`,
  qpStateMachine: "QP state machine",
  diverged: "diverged",
  dropReason: (d: PacketDrop): string => dropText(d),
  droppedBecause: (why: string) => `dropped: ${why}`,
  /** The Packets tab's row tooltip: every header field of the packet. */
  packetDetail: (p: PacketRecord): string => packetDetail(p),
  /** A packet row's label ("SEND_ONLY", "ACK", "NAK PSN sequence error": model/timeline.ts packetLabel) in the learner's language. */
  packetLabel: (label: string, _p: PacketRecord): string => label,
  divergence: (d: Divergence) => `model expected ${d.expected}; the device did ${d.actual}`,
  /** Which way the model was wrong (the divergence line's tooltip). */
  divergenceNote: (d: Divergence): string | undefined => d.note,
  predicts: (errno: string) => `predicts ${errno}`,
  predictedError: (errno: string, reason?: string) => `predicted: ${errno}${reason ? ` — ${reason}` : ""}`,
  predictionShown: "prediction shown",
  legendTaken: "transition just taken",
  legendPredicted: "predicted next",
  legendLegal: "legal from here",
  legendGoal: "goal state",
  goalMark: "goal",
  goalState: (qp: string, state: string, passed?: boolean) =>
    `goal: ${qp} ends in ${state}${passed === true ? " ✓" : passed === false ? " ✗" : ""}`,
  mrGoal: (offset: number, shown: string) => `goal at offset ${offset}: ${shown}`,
  mrGoalSeen: (seen: "match" | "differ" | "unread"): string =>
    seen === "match" ? "✓ the MR holds them" : seen === "differ" ? "✗ the MR holds other bytes" : "not read yet",
  bothEnds: "both ends side by side",
  noQp: "No QP yet: create one with pd.createQp().",
  tabConnection: "Connection",
  tabResources: "Resources",
  tabCompletions: (n: number) => (n ? `Completions (${n})` : "Completions"),
  tabMemory: "Memory",
  tabCounters: "Counters",
  tabPackets: "Packets",
  tabThroughput: "Throughput",
  tabNetwork: "Network",
  // Network panel
  netTitle: "Lab link rxe0 ⇄ rxe1",
  netWhereSim: "Simulator: the faults are seeded, on the simulated wire between rxe0 and rxe1.",
  netWhereNative:
    "Real rxe: tc netem, ip link and nftables on the lab VM's veth pair only. Anywhere else the backend refuses (EPERM) and says why; your own network is never touched.",
  netUnsupported: "This backend cannot inject faults on its link.",
  netLoopback: "Traffic from a device to itself (rxe0 → rxe0) is looped inside rxe and never faulted.",
  netKept: "Each run starts on this link (verbslab_set_link, first in its transcript) until you clear it.",
  netNow: "Now:",
  netClean: "no faults",
  netSummary: (l: LinkState) =>
    [
      l.loss > 0 && `loss ${pct(l.loss)}%`,
      l.delay > 0 && `delay ${l.delay} ms`,
      l.reorder > 0 && `reorder ${pct(l.reorder)}%`,
      l.blockRoceUdp && "UDP 4791 blocked",
      l.dropPsn !== null && `drop PSN ${l.dropPsn}`,
    ].filter(Boolean) as string[],
  netMtuNow: (l: LinkState) => `MTU rxe0 ${l.mtu.rxe0} · rxe1 ${l.mtu.rxe1}`,
  netWire: "Wire model",
  netWireTitle:
    "How fast the simulator's wire is: rxe's model fitted to the lab VM (slow: emulated), or a 25GbE or 100GbE NIC model. Packets already on the wire keep their times.",
  netWireNative: "Real rxe runs at its host's speed: the wire models are the simulator's.",
  netLoss: "Loss (%)",
  netDelay: "Delay (ms)",
  netReorder: "Reorder (%)",
  netMtu: (dev: string) => `MTU ${dev}`,
  netBlock: "Block UDP 4791 (RoCE v2)",
  netApply: "Apply",
  netClear: "Clear all faults",
  netRunning: "A program is running: change the link once it has ended.",
  netNothing: "Nothing to change: the link is already like this.",
  netRange: (label: string, min: number, max: number, whole: boolean) =>
    `${label}: enter a ${whole ? "whole number of bytes" : "number"} from ${min} to ${max}.`,
  netReason: (label: string, why: string) => `${label}: ${why}`,
  netRefused: (why: string) => `The backend refused: ${why}`,
  connectionEmpty: "A connection appears here once two RC QPs exist.",
  outOfBand: "out of band",
  expected: (v: string) => `expected ${v}`,
  peerSays: (field: string, actual: string, expected: string) => `${field} is ${actual}, the peer says ${expected}`,
  connectionTab: "(Connection tab)",
  wrFailedWith: (status: string) => `a WR failed with ${status}`,
  notInTable: "something the table above does not show is wrong",
  sidesAgree: "The two sides agree on everything configured so far.",
  seeCompletions: "see Completions for what the status means",
  nothingOpened: "Nothing opened yet.",
  portNotQueried: (port: number) => `not queried (ctx.queryPort(${port}))`,
  completionsEmpty: "No completions polled yet: cq.poll() or cq.pollWait().",
  noMr: "No MR registered yet: pd.regMr().",
  notRead: "Contents not read yet.",
  countersEmpty: "Counters appear after the first run.",
  colDevice: "device",
  colCounter: "counter",
  colValue: "value",
  // Packets
  packetsNative:
    "Packets are not observable on the native backend: the NIC (or the kernel's rdma_rxe) puts them on the wire below the verbs API. Switch to the simulator to see every packet; the WQEs posted and the CQEs polled still show here.",
  packetsEmpty:
    "No traffic yet. On the simulator, each WQE a program posts, the packets it puts on the wire (opcode, PSN, ACK, NAK, drops) and the CQE that completes it appear here, one lane per QP.",
  waitRnr: "the RNR timer ran out, the requester sends again",
  waitRetransmit: "no ACK in time, the requester retransmits",
  waitProgram: "the program waited (sleep, pollWait)",
  waitWire: "in flight: the packets above took this long to cross the wire",
  clock: (ms: number) => `clock +${ms} ms:`,
  gap: (n: number) => `⋯ ${n} packets not shown (the middle of a long message) ⋯`,
  legend: {
    wqe: "WQE posted",
    request: "request packet",
    response: "read response",
    ack: "ACK",
    rnr: "RNR NAK",
    nak: "NAK",
    dropped: "dropped",
    cqe: "CQE polled",
    "cqe-bad": "error CQE",
  } as Record<string, string>,
  // Throughput
  sweepEmpty: 'Run the throughput lesson\'s sweep (verbs.log("sweep", …)) to plot it here.',
  bandwidth: "Bandwidth",
  noBandwidth:
    "Not measured: on the simulator time passes only while a program waits, and the sweep's WRITEs take none of it, so the program logs MB/s as null. Run it on real rxe for the curve.",
  packetsPerMsg: "Packets per message",
  packetsPerMsgNote:
    "rxe's sent_pkts per message: ⌈bytes / path MTU⌉ request packets, plus the responder's ACK (both QPs are on rxe0). Exact on both backends.",
  messageSize: "message size (bytes)",
  packetsUnit: "packets",
  // CM pane (rdma_cm ids, their calls and events)
  tabCm: (n: number) => (n ? `CM (${n})` : "CM"),
  cmEmpty:
    "No rdma_cm id yet: verbs.cm.createEventChannel(), then channel.createId(RDMA_PS_TCP). Each id's calls and events appear here; a listener holds the id of each connection request it got.",
  cmListening: "listening",
  cmDestroyed: "destroyed",
  cmOn: (channel: string) => `on ${channel}`,
  cmChildOf: (listener: string, seq: number) => `child of ${listener}: the id its CONNECT_REQUEST (#${seq}) carried`,
  cmNewId: (name: string) => `new id: ${name}`,
  cmNotAcked: "not acked yet (rdma_ack_cm_event)",
  cmByLibrdmacm: "by librdmacm",
  cmPrivateData: (len: number) => `private_data, ${len} bytes:`,
  cmZeros: (n: number) => `… ${n} × 00`,
  cmStatus: "status",
  /** What a status means, by its name (model/format.ts cmStatusName). */
  cmStatusMeaning: {
    IB_CM_REJ_CONSUMER_DEFINED: "consumer reject: the peer called rdma_reject",
    IB_CM_REJ_INVALID_SERVICE_ID: "invalid service id: nobody listens on that port there",
    IB_CM_REJ_STALE_CONN: "stale connection: the peer still holds an old one with these QPs",
    IB_CM_REJ_TIMEOUT: "the peer's CM timed out",
    IB_SIDR_UNSUPPORTED: "unsupported service: nobody listens on that port there",
    IB_SIDR_REJECT: "the server rejected the request",
    "-ETIMEDOUT": "timed out: no answer through all of the CM's retries",
    "-ENODEV": "no device has that address",
    "-EADDRNOTAVAIL": "no interface has that address",
    "-ENETUNREACH": "no route to that network",
    "-EHOSTUNREACH": "host unreachable",
    "-ECONNREFUSED": "connection refused",
  } as Record<string, string>,
  legendCm: "made by librdmacm",
  cmEdgeTitle: (by: string, during: string, seq: number) =>
    `made by librdmacm, not by your program: ${by} in ${during} (#${seq})`,
  dismiss: "dismiss",
  /** Why an RNR wait took as long as it did (model/format.ts rnrWait). */
  rnrNote: (timer: number, w: { askedMs: number; floorMs: number }, afterNakMs: number) =>
    w.askedMs >= w.floorMs
      ? `the NAK's timer ${timer} asks for ${w.askedMs} ms`
      : `the NAK's timer ${timer} asks for ${w.askedMs} ms, but rxe waits in whole ${w.floorMs} ms jiffies, at least ` +
        `one, and its timer fires on a tick: ${w.floorMs} to ${2 * w.floorMs} ms (the retry went ${afterNakMs} ms after the NAK)`,
};

export type Strings = typeof en;

/** "rxe1 上的 QP 17". */
const zhQp = (q: QpRef) => (q.device ? `${q.device} 上的 QP ${hex(q.qpn)}` : `QP ${hex(q.qpn)}`);
const zhRange = (a: number, n: number) => `[${hex(a)}, ${hex(a + n)})`;
const zhFlags = (a: number) => accessNames(a, "无");
const zhOwner = (o: SgeOwner) => (o === "send" ? "该 WR 的" : "它的接收 WQE 的");
const zhRkeyMr = (rkey: number, mr?: string) => (mr ? `${mr}（rkey ${hex(rkey)}）` : `rkey 为 ${hex(rkey)} 的 MR`);
/** The simulator's packet-log words for a drop (sim/world.ts) that a retry can meet; others stay as logged. */
/** Why a packet was dropped (verbs/wc-reason.ts PacketDrop), in Chinese. */
function zhDrop(d: PacketDrop): string {
  switch (d.kind) {
    case "fault":
      return zhFault(d.fault);
    case "link-down":
      return "链路断开";
    case "no-route":
      return "没有到目的 GID 的路由";
    case "no-device-with-ip":
      return `没有设备拥有 GID ${d.ip}`;
    case "tx-queue-full":
      return `${d.link} 的发送队列已满`;
    case "no-qp":
      return `${d.device} 上没有 QP ${hex(d.qpn)}`;
    case "qp-type":
      return "QP 类型与操作码不符";
    case "not-ready":
      return "目的 QP 尚未就绪";
    case "path":
      return "地址与该 QP 的路径不符";
    case "qkey":
      return "Q_Key 不匹配";
    case "no-group-member":
      return `${d.device} 上没有 QP 加入该组`;
    case "no-member-netdev":
      return "没有网卡是该多播组的成员";
    case "qdisc-purged":
      return "随 netem qdisc 一起被清除";
  }
}

/** A fault of the lab link (sim/faults.ts) in Chinese. */
function zhFault(f: LinkFault): string {
  switch (f.kind) {
    case "mtu":
      return `${f.bytes} 字节的包超过了 ${f.netdev} 的 MTU`;
    case "loss":
      return `丢失（${f.netdev} 上 netem 的丢包率 ${f.percent}%）`;
    case "udp-blocked":
      return `UDP 4791 被拦截（${f.netdev} 所在主机的 nftables input 规则）`;
    case "psn-dropped":
      return `PSN ${f.psn} 被丢弃一次（${f.netdev} 所在主机的 nftables input 规则）`;
  }
}

/** Why a completion failed, in Chinese: one case per kind of verbs/wc-reason.ts, the same values. */
function zhWcReason(r: WcReason): string {
  if (typeof r !== "object" || r === null) return String(r);
  const at = "at" in r && r.at ? `${zhQp(r.at)}：` : "";
  return at + zhWcBody(r);
}

function zhWcBody(r: WcReason): string {
  switch (r.kind) {
    case "rkey-zero":
      return "rkey 0 不指向任何 MR（注册时没有 REMOTE_* 访问标志的 MR，rkey 就是 0）";
    case "rkey-is-lkey":
      if (r.mrRkey !== 0)
        return r.mr
          ? `rkey ${hex(r.rkey)} 是 ${r.mr} 的 lkey，不是它的 rkey（${hex(r.mrRkey)}）`
          : `rkey ${hex(r.rkey)} 是某个 MR 的 lkey，该 MR 的 rkey 是 ${hex(r.mrRkey)}`;
      return r.mr
        ? `rkey ${hex(r.rkey)} 是 ${r.mr} 的 lkey；${r.mr} 注册时没有 REMOTE_* 访问标志，它的 rkey 是 0`
        : `rkey ${hex(r.rkey)} 是某个 MR 的 lkey；该 MR 注册时没有 REMOTE_* 访问标志，它的 rkey 是 0` +
            "（rxe 只给带远程访问权限的 MR 分配 rkey，值与其 lkey 相同）";
    case "rkey-unknown":
      return r.peer
        ? `rkey ${hex(r.rkey)} 不是 ${zhQp(r.peer)} 所在设备上任何 MR 的 rkey`
        : `rkey ${hex(r.rkey)} 在本设备上不指向任何 MR`;
    case "mr-other-pd":
      return `${zhRkeyMr(r.rkey, r.mr)} 与 ${r.peer ? zhQp(r.peer) : "该 QP"} 不属于同一个 PD`;
    case "mr-access":
      return `${zhRkeyMr(r.rkey, r.mr)} 缺少 ${accessName(r.need)}（它的访问标志是 ${zhFlags(r.have)}）`;
    case "outside-mr": {
      const past = r.va + r.n - (r.mrAddr + r.mrLen);
      return (
        `${zhRange(r.va, r.n)}（${r.n} 字节）超出了${r.mr ? ` ${r.mr}` : "该 MR"} ${zhRange(r.mrAddr, r.mrLen)}` +
        (past > 0 && r.va >= r.mrAddr ? `：越过末尾 ${past} 字节` : "")
      );
    }
    case "qp-access":
      return `${r.peer ? `${zhQp(r.peer)} 的` : "它的"} qp_access_flags 缺少 ${accessName(r.need)}（现在是 ${zhFlags(r.have)}）`;
    case "no-rd-atomic":
      return `${zhQp(r.qp)} 的 max_dest_rd_atomic 为 0：它不接受 RDMA READ 或原子操作`;
    case "atomic-unaligned":
      return `原子操作的远端地址 ${hex(r.va)} 没有按 8 字节对齐`;
    case "op-sequence":
      return "到达的包不符合其消息的操作码顺序";
    case "op-invalid":
      return `该 QP 现在不能发送这个操作码（${wrOpcodeName(r.opcode)}：对此 QP 类型无效，或顺序不对）`;
    case "refused":
      return { "invalid-request": "请求无效", access: "访问被拒绝", "recv-wqe": "接收 WQE 有误" }[r.what];
    case "recv-short":
      return `消息比它的接收 WQE（${r.recvBytes} 字节）长`;
    case "send-longer":
      return `这个 SEND 携带 ${r.sendBytes} 字节，而 ${zhQp(r.peer)} 的接收 WQE 只能容纳 ${r.recvBytes} 字节`;
    case "sge-lkey-unknown":
      return `${zhOwner(r.owner)} sg_list[${r.i}].lkey ${hex(r.lkey)} ${r.device ? `在 ${r.device} 上不指向任何 MR` : "不是本 QP 所在设备上任何 MR 的 lkey"}`;
    case "sge-other-pd":
      return r.mr
        ? `${zhOwner(r.owner)} sg_list[${r.i}] 指向 ${r.mr}，它与该 QP 不属于同一个 PD`
        : `${zhOwner(r.owner)} sg_list[${r.i}].lkey ${hex(r.lkey)} 指向的 MR 与该 QP 不属于同一个 PD`;
    case "sge-no-local-write":
      return `${zhOwner(r.owner)} sg_list[${r.i}] 的 MR（lkey ${hex(r.lkey)}）缺少 IBV_ACCESS_LOCAL_WRITE（它的访问标志是 ${zhFlags(r.have)}）`;
    case "sge-outside":
      return `${zhOwner(r.owner)} sg_list[${r.i}] ${zhRange(r.addr, r.len)} 超出了${r.mr ? ` ${r.mr}` : "它的 MR"} ${zhRange(r.mrAddr, r.mrLen)}`;
    case "sge-refused":
      return `${zhOwner(r.owner)} sg_list 被拒绝`;
    case "psn-ahead":
      return `${zhQp(r.qp)} 期望 PSN ${hex(r.expected)}，却收到更靠后的 ${hex(r.got)}：发送方的 sq_psn 与本 QP 的 rq_psn 不一致`;
    case "psn-behind":
      return (
        `${zhQp(r.qp)} 期望 PSN ${hex(r.expected)}，却收到更早的 ${hex(r.got)}，于是把请求当作重复请求：` +
        "发送方的 sq_psn 与本 QP 的 rq_psn 不一致"
      );
    case "psn-set-apart":
      return (
        `本 QP 的 sq_psn 设为 ${r.sqPsn}，而 ${zhQp(r.peer)} 的 rq_psn 设为 ${r.rqPsn}：响应方` +
        (r.sqPsn > r.rqPsn ? "以 PSN 顺序错误回 NAK" : "把这些请求当作重复请求")
      );
    case "no-qp":
      return `${r.device} 丢弃了它的包：${r.device} 上没有 QP ${hex(r.qpn)}`;
    case "dropped": {
      const what = zhDrop(r.drop);
      return r.where === "send"
        ? `${r.device} 无法发送：${what}`
        : r.where === "wire"
          ? `${r.device} 没有收到它的包：${what}`
          : `${r.device} 丢弃了它的包：${what}`;
    }
    case "dest-qp-unknown":
      return (
        `dest_qp_num 是 ${r.qpn}（${hex(r.qpn)}），而本会话里没有这个编号的 QP` +
        (r.others.length ? `（其他 QP 是 ${r.others.map(hex).join("、")}）` : "") +
        "：对端设备丢弃每一个包"
      );
    case "peer-not-ready":
      return `${zhQp(r.peer)} 处于 ${qpStateShort(r.state)}：QP 要到 RTR 及之后才接受请求`;
    case "peer-answers-other":
      return `${zhQp(r.peer)} 应答的是 QP ${hex(r.answers)}（它的 dest_qp_num），不是 QP ${hex(r.me)}：不会有 ACK 回来`;
    case "no-answer":
      return `QP ${hex(r.qpn)} 没有任何应答`;
    case "rnr":
      return r.qp
        ? `SEND 到达时 ${zhQp(r.qp)} 没有提交任何接收 WQE（要在对端发送之前 post_recv）`
        : "响应方回了 RNR NAK";
    case "retries":
      return (
        `${zhWcReason(r.cause)}；共尝试 ${r.value + 1} 次（${r.counter} ${r.value}）` +
        (r.counter === "rnr_retry" ? "后请求方放弃了" : "")
      );
    default:
      return JSON.stringify(r);
  }
}

/** The session's notices in Chinese, from their data; a transcript from before they had data keeps its English. */
function zhNotice(n: SessionNotice): string {
  const english = n.text;
  if (n.id === "cq_rounded_up") {
    if (!("asked" in n)) return english;
    const users = n.users.map((u) => {
      const parts = [...(u.send ? [`${u.send} 个发送`] : []), ...(u.recv ? [`${u.recv} 个接收`] : [])];
      return `${qpName(u.qpn, u.variable)}：${parts.join(" + ")}`;
    });
    return (
      `创建 CQ 时请求的 cqe 是 ${n.asked}，${n.device} 返回了 cqe ${n.actual}（rxe 向上取整到 2^k − 1）。` +
      `最多有 ${n.wrs} 个 WR 会完成到这个 CQ（${users.join("，")}），比请求的 ${n.asked} 多：它能工作只是因为取整。` +
      `严格按请求分配的设备会溢出（IBV_EVENT_CQ_ERR）。请把 cqe 设为 ≥ ${n.wrs}。`
    );
  }
  if (n.id === "late_rearm") {
    if (!("lastPoll" in n)) return english;
    return (
      `${n.cq}.reqNotify() 在清空 CQ 的那次轮询（返回了 ${n.lastPoll} 个）之后才重新武装。` +
      "在那次轮询和这次重新武装之间到达的完成不会触发事件：程序若接着在 getCqEvent 中等待，" +
      "可能在 CQ 里还有工作时永远睡下去。先重新武装，再轮询直到清空。"
    );
  }
  if (n.id === "cq_overflow") {
    return (
      `有 ${n.pending} 个完成正在进入 ${n.cq}，而它只能容纳 ${n.cqe} 个（它的 cqe），其间没有轮询腾出空间：` +
      "CQ 满时设备会丢弃下一个完成并产生 IBV_EVENT_CQ_ERR（rxe_cq_post），程序等待的完成永远不会到来。" +
      `请边提交边轮询，或者用 cqe ≥ ${n.pending} 创建 CQ。`
    );
  }
  if (!("mr" in n)) return english;
  const wr = n.recv ? "一个已提交的 RECV" : `一个 ${shortWrOpcode(n.opcode ?? 0)}`;
  return (
    `${n.mr}.read(${n.offset}, ${n.length}) 读取的字节正被${wr}（${qpName(n.qpn, n.variable)} 上的 wr_id ${n.wr_id}）` +
    "修改，而它的完成还没有被轮询：在那之前，它们可能是旧字节、新字节或两者混合" +
    "（在同一设备上，模拟器像 rxe 的环回一样立即写完，所以看起来像最终结果）。" +
    `请先轮询它的完成${n.signaled ? "" : "（它是无信号的：轮询该 QP 之后一个有信号的 WR）"}。`
  );
}

const zh: Strings = {
  goals: "目标",
  hint: "显示提示",
  moreHint: "更多提示",
  solution: "载入参考答案",
  nextStep: "下一步 →",
  nextLesson: "下一课：",
  lessonDone: "课程完成",
  noLesson: "未加载课程。",
  passedBefore: "以前已经通过：再运行一次来重新检查目标",
  stepPassed: "本步已通过",
  breakIt: "故意出错",
  backToStep: "回到本步",
  checkFailed: (why) => `无法检查本步：${why}`,
  lessonPicker: "课程",
  backendTitle: "由哪个 verbs 后端运行程序",
  backendSim: "模拟器（行为同 rxe）",
  wireModel: (m) => `链路：${WIRE_NAME_ZH[m]}`,
  wireModelName: (m) => WIRE_NAME_ZH[m],
  wireModelTitle:
    "模拟器的时间来自一个链路模型（sim/wire.ts），按实验虚拟机中的 rxe 拟合；25GbE 和 100GbE 是网卡模型。它们都不是真实的 rxe。",
  backendNative: "真实 rxe（libibverbs）",
  notAvailable: " —— 此处不可用",
  backendState: (state) => `后端${state}`,
  backendStates: { running: "运行中", starting: "启动中", died: "已崩溃", disconnected: "已断开" },
  restarted: (n) => ` · 已重启 ${n} 次`,
  backendDied: (exit) => `后端进程已停止（${exit ? backendExitZh(exit) : "原因不明"}）。正在重启…`,
  backendBack: "后端已恢复。到目前为止的记录完好无损。",
  staleResults: "这些视图显示的是另一步的上一次运行：运行本步的程序来替换它们。",
  hostLost: (reason) => `与 VerbsLab 主机的连接已断开：${reason}`,
  hostUnreachable: (why) => `无法连接 VerbsLab 主机：${why}`,
  resyncFailed: (why) => `暂时无法重新读取记录：${why}`,
  switched: (native) => `已切换到${native ? "真实 rxe 设备" : "模拟器"}：新的会话。`,
  stillOn: (native, why) => `仍在${native ? "真实 rxe 设备" : "模拟器"}上，没有丢失任何内容。${why}`,
  run: "▶ 运行",
  step: "⤼ 单步",
  continue: "⇥ 继续",
  stop: "■ 停止",
  reset: "↺ 重置",
  runTitle: "运行（Ctrl+Enter）",
  stepTitle: "单步（F10）",
  continueTitle: "继续（F8）",
  stopTitle: "停止（Shift+F5）",
  resetTitle: "新的会话：所有对象都会被释放",
  pausedBefore: "暂停于",
  line: (n) => `第 ${n} 行`,
  showLine: (n) => `main.ts 第 ${n} 行：点击显示`,
  typeErrors: (n) => `${n} 个类型错误：仍要运行吗？`,
  moreTypeErrors: (n) => `另有 ${n} 个（已在编辑器中标出）`,
  runAnyway: "仍然运行",
  atLine: (line, column) => `位于 main.ts 第 ${line} 行第 ${column} 列`,
  notAwaited: " —— 这次调用没有 await",
  cancel: "取消",
  editorLoading: "正在加载编辑器…",
  stopped: "已停止。",
  failedWith: "失败，错误码",
  attribute: "属性",
  verbWhy: (w) => verbFailureZh(w),
  endedLine: (e) => `程序结束：${e.code}：${e.verb ? `${e.verb}：` : ""}${verbFailureZh(e.why)}`,
  lineOutcome: (o) =>
    o.kind === "error"
      ? o.attribute
        ? `${o.code}：${o.missing ? "缺少 " : ""}${o.attribute}`
        : o.code
      : o.kind === "completions"
        ? `${o.n} 个完成${o.bad ? `，${o.bad}` : ""}`
        : o.text,
  wcStatus: {
    IBV_WC_SUCCESS: "工作请求已完成。",
    IBV_WC_LOC_LEN_ERR: "接收缓冲区放不下到达的消息，或者发送的长度超过了允许值。",
    IBV_WC_LOC_QP_OP_ERR: "本地 QP 无法执行该请求（操作码不对，或者 SGE 个数 / 内联字节数过多）。",
    IBV_WC_LOC_PROT_ERR: "某个 SGE 指向的内存不在 lkey 覆盖的范围内，或者要写入的 MR 没有 LOCAL_WRITE 权限。",
    IBV_WC_WR_FLUSH_ERR: "已冲刷（flush）：QP 处于 ERR，所有未完成的请求都以这个状态完成，并未执行。",
    IBV_WC_MW_BIND_ERR: "内存窗口（memory window）绑定失败。",
    IBV_WC_BAD_RESP_ERR: "响应方发回了意料之外的应答。",
    IBV_WC_LOC_ACCESS_ERR: "写入到达的数据（例如 RDMA READ 的响应）时发生本地访问违规。",
    IBV_WC_REM_INV_REQ_ERR: "远端认为请求无效而拒绝（操作不被允许，或消息过长）。",
    IBV_WC_REM_ACCESS_ERR: "远端拒绝访问：rkey 不对、地址超出了它的 MR，或者该 MR 没有相应的 REMOTE_* 权限。",
    IBV_WC_REM_OP_ERR: "远端无法完成该操作（例如它的接收缓冲区太小）。",
    IBV_WC_RETRY_EXC_ERR:
      "等了 timeout × (retry_cnt + 1) 仍没有收到 ACK：对端不可达，或者 dest_qp_num / PSN / GID 设错了。",
    IBV_WC_RNR_RETRY_EXC_ERR: "接收方未就绪（RNR）：对端没有提交接收请求，rnr_retry 次数已用完。",
    IBV_WC_REM_INV_RD_REQ_ERR: "远端拒绝了 RDMA READ 或原子操作（max_dest_rd_atomic 为 0，或缺少访问权限）。",
    IBV_WC_REM_ABORT_ERR: "远端中止了该操作。",
    IBV_WC_FATAL_ERR: "设备发生致命错误。",
    IBV_WC_RESP_TIMEOUT_ERR: "响应超时。",
    IBV_WC_GENERAL_ERR: "一般性错误。",
  },
  wcStatusOther: (status) => `状态 ${status}。`,
  why: "原因：",
  notice: (n) => zhNotice(n),
  wcReason: (r) => zhWcReason(r),
  whySimulator: "确切原因：来自模拟器的响应方",
  whyInferred: "根据双方的对象推断",
  opcodeUnset: (opcode) => `opcode ${opcode}（未设置）`,
  errorOpcodeNote: (opcode, posted) =>
    `这里的 opcode ${opcode} 没有意义：rxe 在错误完成中只填写 wr_id、status 和 qp_num` +
    (posted ? `（这个 WR 是 ${posted}）` : ""),
  transcript: (n) => `记录（${n}）`,
  log: (n) => (n ? `日志（${n}）` : "日志"),
  logEmpty: "verbs.log(…) 输出的行会显示在这里。",
  exportLabel: "导出",
  exportC: "C 程序",
  exportPcap: "pcap",
  exportPcapTitle:
    "模拟器发出的数据包（在模拟器上重放该程序），按 rxe 放到线路上的格式写出：用 Wireshark 打开。在真实的 rxe 上，只有 rxe0 与 rxe1 之间的流量会经过抓包可见的 veth；同一设备上两个 QP 之间的数据包在 rxe 内部回环，永远不会到达 veth。",
  importReplay: "导入并重放…",
  transcriptEmpty: "运行或单步执行程序：每一次 verb 调用都会记录在这里。",
  colVerb: "verb",
  colWhat: "内容",
  colResult: "结果",
  imported: (n) => `已导入 ${n} 个事件，正在新的会话中重放…`,
  replayed: (n, d) => `已重放 ${n} 个事件，${d} 处不一致。`,
  importFailed: (why) => `无法导入该记录：${why}`,
  qpStateMachine: "QP 状态机",
  diverged: "不一致",
  dropReason: (d) => zhDrop(d),
  droppedBecause: (why) => `已丢弃：${why}`,
  packetDetail: (p) => packetDetailZh(p, zhDrop),
  packetLabel: (label, p) => packetLabelZh(label, p),
  // Worded from the check's data; a transcript recorded before it carries only its English.
  divergence: (d) =>
    d.outcomes
      ? `模型预期 ${checkOutcomeZh(d.outcomes.expected)}；设备实际 ${checkOutcomeZh(d.outcomes.actual)}`
      : `模型预期 ${d.expected}；设备实际 ${d.actual}`,
  divergenceNote: (d) => (d.outcomes ? checkNoteZh(d.outcomes.expected) : d.note),
  predicts: (errno) => `预测 ${errno}`,
  predictedError: (errno, reason) => `预测：${errno}${reason ? ` —— ${reason}` : ""}`,
  predictionShown: "已显示预测",
  legendTaken: "刚刚发生的转换",
  legendPredicted: "预测的下一步",
  legendLegal: "从此处合法的转换",
  legendGoal: "目标状态",
  goalMark: "目标",
  goalState: (qp: string, state: string, passed?: boolean) =>
    `目标：${qp} 最终处于 ${state}${passed === true ? " ✓" : passed === false ? " ✗" : ""}`,
  mrGoal: (offset: number, shown: string) => `目标（偏移 ${offset}）：${shown}`,
  mrGoalSeen: (seen: "match" | "differ" | "unread") =>
    seen === "match" ? "✓ MR 中正是这些字节" : seen === "differ" ? "✗ MR 中是别的字节" : "尚未读取",
  bothEnds: "两端并排显示",
  noQp: "还没有 QP：用 pd.createQp() 创建一个。",
  tabConnection: "连接",
  tabResources: "资源",
  tabCompletions: (n) => (n ? `完成（${n}）` : "完成"),
  tabMemory: "内存",
  tabCounters: "计数器",
  tabPackets: "数据包",
  tabThroughput: "吞吐量",
  tabNetwork: "网络",
  netTitle: "实验链路 rxe0 ⇄ rxe1",
  netWhereSim: "模拟器：故障由种子决定，作用在 rxe0 与 rxe1 之间的模拟线路上。",
  netWhereNative:
    "真实 rxe：只在实验虚拟机的 veth 对上用 tc netem、ip link 和 nftables 注入。在其他任何地方后端都会拒绝（EPERM）并说明原因；绝不会动你自己的网络。",
  netUnsupported: "这个后端不能在链路上注入故障。",
  netLoopback: "设备发给自己的流量（rxe0 → rxe0）在 rxe 内部回环，从不受故障影响。",
  netKept: "在你清除之前，每次运行都从这条链路开始（verbslab_set_link，记录中的第一项）。",
  netNow: "当前：",
  netClean: "无故障",
  netSummary: (l) =>
    [
      l.loss > 0 && `丢包 ${pct(l.loss)}%`,
      l.delay > 0 && `延迟 ${l.delay} ms`,
      l.reorder > 0 && `乱序 ${pct(l.reorder)}%`,
      l.blockRoceUdp && "UDP 4791 已阻断",
      l.dropPsn !== null && `丢弃 PSN ${l.dropPsn}`,
    ].filter(Boolean) as string[],
  netMtuNow: (l) => `MTU rxe0 ${l.mtu.rxe0} · rxe1 ${l.mtu.rxe1}`,
  netWire: "链路模型",
  netWireTitle:
    "模拟器线路的速度：按实验虚拟机拟合的 rxe 模型（较慢：虚拟机是模拟的），或 25GbE、100GbE 网卡模型。已在线路上的包保持原来的时间。",
  netWireNative: "真实 rxe 以其主机的速度运行：链路模型只属于模拟器。",
  netLoss: "丢包率 (%)",
  netDelay: "延迟 (ms)",
  netReorder: "乱序 (%)",
  netMtu: (dev) => `MTU ${dev}`,
  netBlock: "阻断 UDP 4791（RoCE v2）",
  netApply: "应用",
  netClear: "清除全部故障",
  netRunning: "程序正在运行：等它结束后再修改链路。",
  netNothing: "没有要修改的：链路已经是这样。",
  netRange: (label, min, max, whole) => `${label}：请输入 ${min} 到 ${max} 之间的${whole ? "整数字节数" : "数"}。`,
  netReason: (label, why) => `${label}：${why}`,
  netRefused: (why) => `后端拒绝：${why}`,
  connectionEmpty: "有两个 RC QP 之后，连接信息会显示在这里。",
  outOfBand: "带外交换",
  expected: (v) => `应为 ${v}`,
  peerSays: (field, actual, expected) => `${field} 是 ${actual}，对端给的是 ${expected}`,
  connectionTab: "（见“连接”页）",
  wrFailedWith: (status) => `有一个 WR 以 ${status} 失败`,
  notInTable: "有上表没有显示的地方出了错",
  sidesAgree: "到目前为止，两端配置的内容全部一致。",
  seeCompletions: "状态的含义见“完成”页",
  nothingOpened: "尚未打开任何对象。",
  portNotQueried: (port) => `未查询（ctx.queryPort(${port})）`,
  completionsEmpty: "还没有轮询到完成：cq.poll() 或 cq.pollWait()。",
  noMr: "还没有注册 MR：pd.regMr()。",
  notRead: "内容尚未读取。",
  countersEmpty: "第一次运行后显示计数器。",
  colDevice: "设备",
  colCounter: "计数器",
  colValue: "值",
  packetsNative:
    "在原生后端上看不到数据包：网卡（或内核的 rdma_rxe）在 verbs API 之下把它们发到线路上。切换到模拟器可以看到每一个数据包；提交的 WQE 和轮询到的 CQE 仍会显示在这里。",
  packetsEmpty:
    "还没有流量。在模拟器上，程序提交的每个 WQE、它发到线路上的数据包（操作码、PSN、ACK、NAK、丢包）以及完成它的 CQE 都会显示在这里，每个 QP 一条泳道。",
  waitRnr: "RNR 定时器到期，请求方重新发送",
  waitRetransmit: "未及时收到 ACK，请求方重传",
  waitProgram: "程序在等待（sleep、pollWait）",
  waitWire: "在途：上面的包用了这么久才穿过线路",
  clock: (ms) => `时钟 +${ms} ms：`,
  gap: (n) => `⋯ 有 ${n} 个数据包未显示（长消息的中间部分）⋯`,
  legend: {
    wqe: "已提交的 WQE",
    request: "请求包",
    response: "READ 响应",
    ack: "ACK",
    rnr: "RNR NAK",
    nak: "NAK",
    dropped: "丢弃",
    cqe: "轮询到的 CQE",
    "cqe-bad": "错误 CQE",
  },
  sweepEmpty: '运行吞吐量课程的扫描（verbs.log("sweep", …)），结果会绘制在这里。',
  bandwidth: "带宽",
  noBandwidth:
    "未测量：在模拟器上，只有程序等待时时间才会流逝，而扫描中的 WRITE 不占用任何时间，所以程序记录的 MB/s 为 null。在真实 rxe 上运行可以得到曲线。",
  packetsPerMsg: "每条消息的数据包数",
  packetsPerMsgNote:
    "rxe 的 sent_pkts 按消息计：⌈字节数 / path MTU⌉ 个请求包，加上响应方的 ACK（两个 QP 都在 rxe0 上）。在两种后端上都精确。",
  messageSize: "消息大小（字节）",
  packetsUnit: "数据包",
  tabCm: (n) => (n ? `CM（${n}）` : "CM"),
  cmEmpty:
    "还没有 rdma_cm id：先 verbs.cm.createEventChannel()，再 channel.createId(RDMA_PS_TCP)。每个 id 的调用和事件都显示在这里；监听 id 下面是它收到的每个连接请求带来的新 id。",
  cmListening: "监听中",
  cmDestroyed: "已销毁",
  cmOn: (channel) => `在 ${channel} 上`,
  cmChildOf: (listener, seq) => `${listener} 的子 id：由它的 CONNECT_REQUEST（#${seq}）带来`,
  cmNewId: (name) => `新 id：${name}`,
  cmNotAcked: "尚未确认（rdma_ack_cm_event）",
  cmByLibrdmacm: "由 librdmacm 完成",
  cmPrivateData: (len) => `private_data，${len} 字节：`,
  cmZeros: (n) => `… ${n} × 00`,
  cmStatus: "status",
  cmStatusMeaning: {
    IB_CM_REJ_CONSUMER_DEFINED: "consumer reject：对端调用了 rdma_reject",
    IB_CM_REJ_INVALID_SERVICE_ID: "invalid service id：那里没有人监听这个端口",
    IB_CM_REJ_STALE_CONN: "stale connection：对端仍持有使用这些 QP 的旧连接",
    IB_CM_REJ_TIMEOUT: "对端的 CM 超时",
    IB_SIDR_UNSUPPORTED: "unsupported service：那里没有人监听这个端口",
    IB_SIDR_REJECT: "服务器拒绝了请求",
    "-ETIMEDOUT": "超时：CM 重试了所有次数都没有应答",
    "-ENODEV": "没有设备拥有这个地址",
    "-EADDRNOTAVAIL": "没有接口拥有这个地址",
    "-ENETUNREACH": "没有到该网络的路由",
    "-EHOSTUNREACH": "主机不可达",
    "-ECONNREFUSED": "连接被拒绝",
  },
  legendCm: "由 librdmacm 完成",
  cmEdgeTitle: (by, during, seq) => `由 librdmacm 完成，而不是你的程序：${during} 中的 ${by}（#${seq}）`,
  dismiss: "关闭",
  rnrNote: (timer, w, afterNakMs) =>
    w.askedMs >= w.floorMs
      ? `NAK 的定时器 ${timer} 要求等待 ${w.askedMs} ms`
      : `NAK 的定时器 ${timer} 要求等待 ${w.askedMs} ms，但 rxe 以整数个 ${w.floorMs} ms 的 jiffy 计时，至少一个，` +
        `而且定时器在节拍上触发：${w.floorMs} 到 ${2 * w.floorMs} ms（这次重试在 NAK 之后 ${afterNakMs} ms 发出）`,
};

export const STRINGS: Record<Language, Strings> = { en, zh };

/** The language the learner chose (App provides it). */
export const LangContext = createContext<Language>("en");

/** The UI strings in the learner's language. */
export function useStrings(): Strings {
  return STRINGS[useContext(LangContext)];
}

const LANG_KEY = "verbslab.lang";

/** The language chosen last time in this browser, else English. */
export function savedLanguage(): Language {
  try {
    return localStorage.getItem(LANG_KEY) === "zh" ? "zh" : "en";
  } catch {
    return "en";
  }
}

export function saveLanguage(lang: Language): void {
  try {
    localStorage.setItem(LANG_KEY, lang);
  } catch {
    // Storage disabled: the choice lasts until the page reloads.
  }
}
