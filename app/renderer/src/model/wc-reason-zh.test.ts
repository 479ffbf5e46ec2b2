/**
 * Every kind of completion reason (verbs/wc-reason.ts) and every session notice, worded in
 * Chinese by i18n.ts: Chinese text, no English sentence left around the code names, and the
 * same values (rkeys, addresses, byte counts, QP numbers) as the English wording names.
 */
import { describe, expect, it } from "vitest";
import * as c from "../../../../verbs/constants.js";
import { dropText, wcReasonText, type PacketDrop, type WcReason } from "../../../../verbs/wc-reason.js";
import { cqRoundedUpText, lateRearmText, readBeforePollText } from "../../../session/notice-text.js";
import type { SessionNotice } from "../../../session/transcript.js";
import { STRINGS } from "../i18n.js";
import { unackedEventsError } from "../../../../verbs/cq-events.js";
import type { VerbEvent } from "../../../session/transcript.js";
import { verbWhy } from "./verb-why.js";

const zh = STRINGS.zh;
const at = { qpn: 0x12, device: "rxe1" };
const peer = { qpn: 18, device: "rxe1" };

/** One reason of each kind: the record's type makes a kind without a sample a compile error. */
const SAMPLES: { [K in WcReason["kind"]]: Extract<WcReason, { kind: K }> } & Record<string, WcReason> = {
  "rkey-zero": { kind: "rkey-zero", at },
  "rkey-is-lkey": { kind: "rkey-is-lkey", at, rkey: 0x1200, mrRkey: 0 },
  "rkey-unknown": { kind: "rkey-unknown", rkey: 0x999, peer },
  "mr-other-pd": { kind: "mr-other-pd", rkey: 0x1234, mr: "mr7", peer },
  "mr-access": { kind: "mr-access", at, rkey: 0x1234, need: c.IBV_ACCESS_REMOTE_WRITE, have: c.IBV_ACCESS_LOCAL_WRITE },
  "outside-mr": { kind: "outside-mr", at, va: 0x1fe0, n: 64, mrAddr: 0x1000, mrLen: 0x1000 },
  "qp-access": { kind: "qp-access", at, need: c.IBV_ACCESS_REMOTE_WRITE, have: 0 },
  "no-rd-atomic": { kind: "no-rd-atomic", qp: peer },
  "atomic-unaligned": { kind: "atomic-unaligned", at, va: 0x1004 },
  "op-sequence": { kind: "op-sequence", at },
  "op-invalid": { kind: "op-invalid", opcode: c.IBV_WR_RDMA_READ },
  refused: { kind: "refused", at, what: "access" },
  "recv-short": { kind: "recv-short", at, recvBytes: 8 },
  "send-longer": { kind: "send-longer", peer, sendBytes: 32, recvBytes: 8 },
  "sge-lkey-unknown": { kind: "sge-lkey-unknown", owner: "send", i: 0, lkey: 0x78, device: "rxe0" },
  "sge-other-pd": { kind: "sge-other-pd", owner: "send", i: 1, lkey: 0x78, mr: "mr2" },
  "sge-no-local-write": { kind: "sge-no-local-write", at, owner: "recv", i: 0, lkey: 0x78, have: 0 },
  "sge-outside": { kind: "sge-outside", owner: "send", i: 0, addr: 0x1ff8, len: 16, mrAddr: 0x1000, mrLen: 0x1000 },
  "sge-refused": { kind: "sge-refused", owner: "recv", at },
  "psn-ahead": { kind: "psn-ahead", qp: at, expected: 0, got: 0x64 },
  "psn-behind": { kind: "psn-behind", qp: at, expected: 0x64, got: 0 },
  "psn-set-apart": { kind: "psn-set-apart", peer, sqPsn: 100, rqPsn: 0 },
  "no-qp": { kind: "no-qp", device: "rxe1", qpn: 0xabcde },
  dropped: { kind: "dropped", device: "rxe1", where: "receive", drop: { kind: "not-ready" } },
  "dropped-wire": {
    kind: "dropped",
    device: "rxe1",
    where: "wire",
    drop: { kind: "fault", fault: { kind: "loss", percent: 100, netdev: "veth0" } },
  },
  "dropped-mtu": {
    kind: "dropped",
    device: "rxe1",
    where: "wire",
    drop: { kind: "fault", fault: { kind: "mtu", bytes: 1120, netdev: "veth1" } },
  },
  "dest-qp-unknown": { kind: "dest-qp-unknown", qpn: 99, others: [17, 18] },
  "peer-not-ready": { kind: "peer-not-ready", peer, state: c.IBV_QPS_INIT },
  "peer-answers-other": { kind: "peer-answers-other", peer, answers: 40, me: 17 },
  "no-answer": { kind: "no-answer", qpn: 18 },
  rnr: { kind: "rnr", qp: peer },
  retries: { kind: "retries", cause: { kind: "rnr", qp: peer }, counter: "rnr_retry", value: 1 },
};

/** Code names, numbers and ranges taken out: what is left is the sentence around them. */
const prose = (s: string) => s.replace(/[\w.[\]*|()-]*[_\d.[\]][\w.[\]*|()-]*/g, " ");
const ENGLISH = /\b(the|is|are|and|of|no|not|has|its|it|to|an?|from|on|with|lacks?|names?|outside|after|tries)\b/i;
/** The numbers (decimal or hex) a text names, in order. */
const numbers = (s: string) => (s.match(/0x[0-9a-f]+|\b\d+\b/g) ?? []).filter((n) => n !== "0").sort();

describe("completion reasons in Chinese", () => {
  it.each(Object.values(SAMPLES).map((r) => [r.kind, r] as const))("%s", (_kind, r) => {
    const text = zh.wcReason(r);
    const english = wcReasonText(r);
    expect(text).toMatch(/[\u4e00-\u9fff]/);
    expect(prose(text)).not.toMatch(ENGLISH);
    // Every value the English names, the Chinese names too.
    for (const n of numbers(english)) expect(text).toContain(n);
    expect(STRINGS.en.wcReason(r)).toBe(english);
    // The check bites: the English of the same reason fails it (a bare "access refused" aside).
    if (r.kind !== "refused") expect(prose(english)).toMatch(ENGLISH);
  });

  it("a transcript from before reasons were data shows its sentence", () => {
    const old = "rkey 0 names no MR" as unknown as WcReason;
    expect(zh.wcReason(old)).toBe("rkey 0 names no MR");
    expect(wcReasonText(old)).toBe("rkey 0 names no MR");
  });
});

/** One of each kind of drop (the Packets tab's "✗ dropped: …" and a "dropped" reason's tail). */
const DROPS: Record<PacketDrop["kind"], PacketDrop> = {
  fault: { kind: "fault", fault: { kind: "psn-dropped", psn: 0x65, netdev: "veth1" } },
  "link-down": { kind: "link-down" },
  "no-route": { kind: "no-route" },
  "no-device-with-ip": { kind: "no-device-with-ip", ip: "10.77.0.9" },
  "tx-queue-full": { kind: "tx-queue-full", link: "rxe0→rxe1" },
  "no-qp": { kind: "no-qp", qpn: 0x99, device: "rxe1" },
  "qp-type": { kind: "qp-type" },
  "not-ready": { kind: "not-ready" },
  path: { kind: "path" },
  qkey: { kind: "qkey" },
  "no-group-member": { kind: "no-group-member", device: "rxe1" },
  "no-member-netdev": { kind: "no-member-netdev" },
  "qdisc-purged": { kind: "qdisc-purged" },
};

describe("drop reasons in Chinese", () => {
  it.each(Object.values(DROPS).map((d) => [d.kind, d] as const))("%s", (_kind, d) => {
    const text = zh.dropReason(d);
    expect(text).toMatch(/[\u4e00-\u9fff]/);
    expect(prose(text)).not.toMatch(ENGLISH);
    for (const n of numbers(dropText(d))) expect(text).toContain(n);
    expect(STRINGS.en.dropReason(d)).toBe(dropText(d));
    expect(zh.droppedBecause(text)).toMatch(/^已丢弃：/);
  });
});

describe("session notices in Chinese", () => {
  const cq = { asked: 10, actual: 15, device: "rxe0", wrs: 15, users: [{ qpn: 17, send: 10, recv: 5 }] };
  const rearm = { cq: "cq0", lastPoll: 2 };
  const read = { mr: "mr1", offset: 0, length: 64, opcode: c.IBV_WR_RDMA_WRITE, wr_id: 7, qpn: 17, signaled: false };
  const notices: SessionNotice[] = [
    { id: "cq_rounded_up", text: cqRoundedUpText(cq), ...cq },
    { id: "read_before_poll", text: readBeforePollText(read), ...read },
    { id: "late_rearm", text: lateRearmText(rearm), ...rearm },
  ];
  it.each(notices.map((n) => [n.id, n] as const))("%s", (_id, n) => {
    const text = zh.notice(n);
    expect(text).toMatch(/[\u4e00-\u9fff]/);
    expect(prose(text)).not.toMatch(ENGLISH);
    for (const v of numbers(n.text)) expect(text).toContain(v);
    expect(STRINGS.en.notice(n)).toBe(n.text);
    expect(prose(n.text)).toMatch(ENGLISH);
  });

  it("the unacknowledged-events refusal of ibv_destroy_cq is worded from its count", () => {
    // The count travels as data on the one error the session and both backends give.
    const event = { kind: "verb", method: "destroy", error: unackedEventsError(2).toJSON() } as unknown as VerbEvent;
    expect(verbWhy(event, undefined)).toEqual({ kind: "unacked-events", n: 2 });
    expect(zh.verbWhy({ kind: "unacked-events", n: 2 })).toMatch(/2 个完成事件.*cq\.ackEvents\(2\)/);
    expect(STRINGS.en.verbWhy({ kind: "unacked-events", n: 2 })).toBe(unackedEventsError(2).reason);
  });
});
