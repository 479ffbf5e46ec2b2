/**
 * Every kind of verb failure (verbs/verb-failure.ts) worded in Chinese: Chinese text, no English
 * sentence left around the code names, and the same values (sizes, limits, attribute names,
 * states, addresses) as the English wording names. The sample record's type makes a kind
 * without a sample a compile error, so a new kind cannot go unworded.
 */
import { describe, expect, it } from "vitest";
import * as c from "../../../../verbs/constants.js";
import { verbFailureText, type VerbFailure } from "../../../../verbs/verb-failure.js";
import { STRINGS } from "../i18n.js";

const zh = STRINGS.zh;

const SAMPLES: { [K in VerbFailure["kind"]]: Extract<VerbFailure, { kind: K }> } & Record<string, VerbFailure> = {
  "no-device": { kind: "no-device", name: "rxe9" },
  "one-port": { kind: "one-port", port: 2 },
  "port-num": { kind: "port-num", field: "ah_attr.port_num", got: 3 },
  "gid-index": { kind: "gid-index", index: 7, count: 3 },
  "gid-empty": { kind: "gid-empty", index: 2 },
  "pkey-index": { kind: "pkey-index" },
  "pd-busy": { kind: "pd-busy", mrs: 2, qps: 1, ahs: 0 },
  "access-unknown": { kind: "access-unknown", bits: 0x40000 },
  "remote-needs-local-write": { kind: "remote-needs-local-write", access: c.IBV_ACCESS_REMOTE_WRITE },
  "no-odp": { kind: "no-odp" },
  "length-not-positive": { kind: "length-not-positive", length: -4 },
  "length-zero": { kind: "length-zero" },
  "cannot-pin": { kind: "cannot-pin", length: 4294967296, allocate: false },
  "cannot-allocate": { kind: "cannot-pin", length: 2000000000, allocate: true },
  "mr-pool-exhausted": { kind: "mr-pool-exhausted" },
  destroyed: { kind: "destroyed", object: "CQ" },
  "cqe-range": { kind: "cqe-range", cqe: 40000, max: 32767 },
  "comp-vector": { kind: "comp-vector", vector: 5, count: 2 },
  "channel-other-device": { kind: "channel-other-device" },
  "negative-num-entries": { kind: "negative-num-entries", n: -1 },
  "cq-busy": { kind: "cq-busy", qps: 2 },
  "channel-busy": { kind: "channel-busy", cqs: 3 },
  "unacked-events": { kind: "unacked-events", n: 4 },
  "qp-type": { kind: "qp-type", type: 9, known: true },
  "qp-type-unknown": { kind: "qp-type", type: 77, known: false },
  "cq-required": { kind: "cq-required", cq: "recv_cq" },
  "cq-other-context": { kind: "cq-other-context", cq: "send_cq" },
  "cap-limit": { kind: "cap-limit", field: "max_send_wr", value: 40000, max: 32768 },
  "qp-in-mcast": { kind: "qp-in-mcast" },
  "wr-list-empty": { kind: "wr-list-empty" },
  "sq-not-ready": { kind: "sq-not-ready", state: c.IBV_QPS_RTR },
  "send-needs-rts": { kind: "send-needs-rts", state: c.IBV_QPS_INIT },
  "recv-needs-init": { kind: "recv-needs-init" },
  "recv-in-reset": { kind: "recv-in-reset" },
  "predict-no-grh": { kind: "predict-no-grh", from: c.IBV_QPS_INIT, to: c.IBV_QPS_RTR },
  "predict-sgid-index": {
    kind: "predict-sgid-index",
    from: c.IBV_QPS_INIT,
    to: c.IBV_QPS_RTR,
    index: 7,
    valid: [0, 1],
  },
  "predict-path-mtu": {
    kind: "predict-path-mtu",
    from: c.IBV_QPS_INIT,
    to: c.IBV_QPS_RTR,
    mtu: 6,
    maxMtu: "IBV_MTU_4096",
  },
  "too-many-sge": { kind: "too-many-sge", queue: "send", i: 1, n: 3, max: 2 },
  "atomic-buffer": { kind: "atomic-buffer", i: 0 },
  "atomic-unaligned": { kind: "atomic-unaligned", i: 2, addr: 0x1004 },
  "inline-too-long": { kind: "inline-too-long", i: 0, bytes: 300, max: 64 },
  "inline-unregistered": { kind: "inline-unregistered", i: 1, k: 2, addr: 0xdead0 },
  "no-mw": { kind: "no-mw" },
  "ud-ah": { kind: "ud-ah", i: 3, gone: false },
  "ud-ah-gone": { kind: "ud-ah", i: 4, gone: true },
  "queue-full": { kind: "queue-full", queue: "send", capacity: 16 },
  "queue-full-recv": { kind: "queue-full", queue: "recv", capacity: 8 },
  mask: {
    kind: "mask",
    from: c.IBV_QPS_RESET,
    to: c.IBV_QPS_INIT,
    needs: ["IBV_QP_PKEY_INDEX", "IBV_QP_PORT"],
    missing: ["IBV_QP_PORT"],
    notAllowed: ["IBV_QP_SQ_PSN"],
  },
  illegal: { kind: "illegal", from: c.IBV_QPS_RESET, to: c.IBV_QPS_RTS, withoutState: false },
  "illegal-without-state": { kind: "illegal", from: c.IBV_QPS_INIT, to: c.IBV_QPS_INIT, withoutState: true },
  "cur-state": { kind: "cur-state", claimed: c.IBV_QPS_RTS, actual: c.IBV_QPS_INIT },
  "rate-limit": { kind: "rate-limit", notAllowed: ["IBV_QP_RATE_LIMIT"] },
  "not-a-state": { kind: "not-a-state", field: "qp_state", value: 9 },
  "no-modify-table": { kind: "no-modify-table", qpType: 8 },
  "qkey-privileged": { kind: "qkey-privileged" },
  "no-alt-path": { kind: "no-alt-path" },
  "sq-draining": { kind: "sq-draining" },
  "path-mtu": { kind: "path-mtu", mtu: 7 },
  "max-rd-atomic": { kind: "max-rd-atomic", value: 200, max: 128 },
  "qp-timeout": { kind: "qp-timeout", value: 40 },
  "needs-grh": { kind: "needs-grh", prefix: "ah_attr" },
  "no-gid": { kind: "no-gid", device: "rxe1", index: 5 },
  "not-a-gid": { kind: "not-a-gid", text: "10.77.0.2" },
  "dgid-unset": { kind: "dgid-unset" },
  "link-down": { kind: "link-down", device: "rxe0" },
  "no-route": { kind: "no-route", gid: "::ffff:10.77.0.9", why: { kind: "no-device" } },
  "no-route-down": { kind: "no-route", gid: "::ffff:10.77.0.2", why: { kind: "link-down", device: "rxe1" } },
  "gid-family": { kind: "gid-family", dgid: "fe80::1" },
  "wait-too-long": { kind: "wait-too-long", arg: "timeoutMs", ms: 3000000000, max: 2147483647 },
  "clock-limit": { kind: "clock-limit", arg: "ms", ms: 2000000000000, max: 1099511627776 },
  "port-space": { kind: "port-space", ps: 0x999, numbers: true },
  "port-space-short": { kind: "port-space", ps: 0x998, numbers: false },
  service: { kind: "service", service: "http", decimal: false },
  "service-decimal": { kind: "service", service: "70000", decimal: true },
  "node-not-numeric": { kind: "node-not-numeric", node: "server.example" },
  "node-required": { kind: "node-required" },
  "ephemeral-ports": { kind: "ephemeral-ports" },
  "cm-channel-busy": { kind: "cm-channel-busy", ids: 2 },
  "event-acked": { kind: "event-acked", event: "RDMA_CM_EVENT_ESTABLISHED" },
  "event-acked-native": { kind: "event-acked" },
  "unacked-cm-events": { kind: "unacked-cm-events", n: 3 },
  "conn-param-u8": { kind: "conn-param-u8", field: "retry_count", value: 300 },
  "private-data-u8": { kind: "private-data-u8", bytes: 300, param: true },
  "private-data-u8-reject": { kind: "private-data-u8", bytes: 256, param: false },
  "private-data-long": { kind: "private-data-long", bytes: 60, what: "tcp-req", max: 56 },
  "id-bound": { kind: "id-bound", state: "addr_bound" },
  "bind-stale-netdev": { kind: "bind-stale-netdev", netdev: "veth0", ip: "10.77.0.2" },
  "no-device-ip": { kind: "no-device-ip", ip: "10.77.0.9" },
  "port-privileged": { kind: "port-privileged", port: 80 },
  "port-any-conflict": { kind: "port-any-conflict", port: 7471 },
  "addr-in-use": { kind: "addr-in-use", ip: "10.77.0.1", port: 7471 },
  "id-state": { kind: "id-state", step: "connect", state: "addr_resolved" },
  "id-state-listen": { kind: "id-state", step: "listen", state: "idle" },
  "cm-no-route": { kind: "cm-no-route", ip: "192.168.1.4", mcast: false },
  "cm-no-route-mcast": { kind: "cm-no-route", ip: "239.1.1.1", mcast: true },
  "id-has-qp": { kind: "id-has-qp" },
  "id-no-qp": { kind: "id-no-qp" },
  "id-unbound": { kind: "id-unbound", join: false },
  "id-unbound-join": { kind: "id-unbound", join: true },
  "id-no-device": { kind: "id-no-device" },
  "pd-other-context": { kind: "pd-other-context" },
  "cm-modify": {
    kind: "cm-modify",
    cause: { kind: "path-mtu", mtu: 6 },
    text: "path_mtu 6 is above the port's max_mtu (5 = IBV_MTU_4096)",
  },
  "connection-state": { kind: "connection-state", state: "REQ_SENT", need: "rts-psn" },
  "init-qp-attr-state": { kind: "init-qp-attr-state", state: 4 },
  "conn-param-required": { kind: "conn-param-required" },
  "rd-atom-limit": { kind: "rd-atom-limit", field: "initiator_depth", value: 200, max: 128 },
  "accept-needs-request": { kind: "accept-needs-request" },
  "no-request": { kind: "no-request" },
  "request-answered": { kind: "request-answered" },
  "not-rejectable": { kind: "not-rejectable", state: "ESTABLISHED" },
  "not-connected": { kind: "not-connected" },
  "join-needs-udp": { kind: "join-needs-udp" },
  "addr-any": { kind: "addr-any" },
  "not-joined": { kind: "not-joined", ip: "239.1.1.1", port: 7471 },
  "port-16": { kind: "port-16", field: "dst_addr", port: 70000 },
  "not-ipv4": { kind: "not-ipv4", field: "src_addr", addr: "fe80::1", ipv6: true },
  "not-ipv4-text": { kind: "not-ipv4", field: "dst_addr", addr: "server", ipv6: false },
  "link-fraction": { kind: "link-fraction", field: "loss", got: "2" },
  "link-mtu": { kind: "link-mtu", side: "rxe1", min: 576, max: 9000, got: "100" },
  "link-not-object": { kind: "link-not-object", got: "42" },
  "link-unknown": { kind: "link-unknown", name: "los", known: ["loss", "delay"] },
  "link-delay": { kind: "link-delay", max: 1000, got: "5000" },
  "link-mtu-object": { kind: "link-mtu-object", got: "1200" },
  "link-mtu-device": { kind: "link-mtu-device", got: '"rxe2"' },
  "link-bool": { kind: "link-bool", field: "blockRoceUdp", got: '"yes"' },
  "link-psn": { kind: "link-psn", max: 16777215, got: "-1" },
  "link-wire": { kind: "link-wire", models: ["rxe", "25GbE", "100GbE"], got: '"40GbE"' },
  "link-reorder": { kind: "link-reorder" },
  "link-wire-native": { kind: "link-wire-native" },
  "off-lab": { kind: "off-lab", check: { kind: "not-vm" } },
  "off-lab-peer": { kind: "off-lab", check: { kind: "wrong-peer", netdev: "veth0", peer: "eth3", expected: "veth1" } },
  "off-lab-address": { kind: "off-lab", check: { kind: "no-address", netdev: "veth1", address: "10.77.0.2" } },
  "link-unsupported": { kind: "link-unsupported" },
  "backend-died": { kind: "backend-died", exit: { code: null, signal: "SIGKILL" }, during: "run" },
  "backend-died-hung": {
    kind: "backend-died",
    exit: { code: 1, signal: null, hung: { method: "call", ms: 30000 } },
    during: "request",
  },
  "backend-died-ping": { kind: "backend-died", exit: { code: 0, signal: null, hung: { ms: 5000 } }, during: "run" },
  "arg-type": {
    kind: "arg-type",
    field: "wr[0].sg_list[0].length",
    expected: "integer",
    got: { t: "string", text: "4" },
  },
  "arg-type-number": { kind: "arg-type", field: "access", expected: "integer", got: { t: "number", text: "1.5" } },
  "arg-type-null": { kind: "arg-type", field: "init_attr", expected: "object", got: { t: "null" } },
  "arg-type-array": { kind: "arg-type", field: "wr[1]", expected: "object", got: { t: "array" } },
  "arg-type-bool": { kind: "arg-type", field: "conn_param", expected: "object", got: { t: "boolean" } },
  "arg-type-bigint": { kind: "arg-type", field: "compare_add", expected: "bigint", got: { t: "object" } },
  "arg-type-u8": { kind: "arg-type", field: "private_data", expected: "uint8array", got: { t: "undefined" } },
  "arg-type-fn": { kind: "arg-type", field: "memory", expected: "memory", got: { t: "function" } },
  "arg-type-no-got": { kind: "arg-type", field: "dst_addr", expected: "addr-port" },
  "arg-type-ip": { kind: "arg-type", field: "dst_addr.addr", expected: "ip-string" },
  "arg-type-ipv4": { kind: "arg-type", field: "ipv4", expected: "ipv4", got: { t: "string", text: "10.77.0" } },
  "arg-type-data": { kind: "arg-type", field: "data", expected: "mr-data", got: { t: "symbol" } },
  "foreign-object": { kind: "foreign-object", field: "send_cq", what: "CQ" },
  "foreign-object-native": { kind: "foreign-object", field: "pd", what: "object", native: true },
  "foreign-channel": { kind: "foreign-object", field: "channel", what: "completion channel" },
  "arg-negative": { kind: "arg-negative", field: "nevents", value: -3 },
  "no-sim-device": { kind: "no-sim-device", name: "rxe7", devices: ["rxe0", "rxe1"] },
  "mr-range": { kind: "mr-range", offset: 40, length: 30, mrLength: 64 },
  "mr-offset": { kind: "mr-offset", offset: 300, mrLength: 256 },
  "mr-past-end": { kind: "mr-past-end", op: "sge", offset: 200, length: 100, mrLength: 256 },
  "mr-past-end-read": { kind: "mr-past-end", op: "read", offset: 250, length: 16, mrLength: 256 },
  "mr-past-end-write": { kind: "mr-past-end", op: "write", offset: 251, length: 17, mrLength: 256 },
  "mr-deregistered": { kind: "mr-deregistered", mr: "mr3" },
  "no-object-type": { kind: "no-object-type", type: "xrcd" },
  "not-a-handle": { kind: "not-a-handle", handle: '"cq2"' },
  "no-handle": { kind: "no-handle", handle: "9" },
  "no-method": { kind: "no-method", type: "qp", method: "post" },
  "too-deep": { kind: "too-deep", max: 64 },
  "too-deep-path": { kind: "too-deep", max: 64, path: "args[0].a.a" },
  "cannot-encode": { kind: "cannot-encode", path: "args[1]", what: "function" },
  "not-hex": { kind: "not-hex", text: "zz" },
  runner: { kind: "runner", runner: { kind: "no-default-export" } },
  "runner-awaited": { kind: "runner", runner: { kind: "not-awaited", method: "postSend" } },
};

/** Code names, numbers and ranges taken out: what is left is the sentence around them. */
const prose = (s: string) => s.replace(/[\w.[\]*|()/:"-]*[_\d.[\]:][\w.[\]*|()/:"-]*/g, " ");
const ENGLISH =
  /\b(the|is|are|and|of|no|not|has|its|it|to|an?|from|on|with|lacks?|names?|outside|needs?|must|got|already|only|first|cannot|this|unknown|bytes|exceed)\b/i;
/** The numbers (decimal or hex) a text names. */
const numbers = (s: string) => (s.match(/0x[0-9a-f]+|\b\d+\b/g) ?? []).filter((n) => n !== "0");
/**
 * Enumerations worded, not quoted (an argument error's `expected`, its value's type `t`, an MR
 * access's `op`); and cm-modify's text is the English of its cause.
 */
const WORDED = new Set(["kind", "queue", "step", "what", "need", "text", "during", "expected", "t", "op"]);
/** The names and values (strings) a failure carries, which every wording quotes. */
function strings(v: unknown, key = ""): string[] {
  if (typeof v === "string") return WORDED.has(key) ? [] : [v];
  if (Array.isArray(v)) return v.flatMap((x) => strings(x));
  if (v && typeof v === "object") return Object.entries(v).flatMap(([k, x]) => strings(x, k));
  return [];
}

describe("verb failures in Chinese", () => {
  it.each(Object.entries(SAMPLES))("%s", (_name, w) => {
    const text = zh.verbWhy(w);
    const english = verbFailureText(w);
    expect(text).toMatch(/[\u4e00-\u9fff]/);
    expect(prose(text)).not.toMatch(ENGLISH);
    for (const n of numbers(english)) expect(text).toContain(n);
    for (const s of strings(w)) expect(text).toContain(s);
    expect(STRINGS.en.verbWhy(w)).toBe(english);
    // The check bites: the English of the same failure fails it.
    expect(prose(english)).toMatch(ENGLISH);
  });

  it("quotes the value an argument error names as the English does", () => {
    const w = SAMPLES["arg-type"]!;
    expect(verbFailureText(w)).toBe('wr[0].sg_list[0].length must be an integer, got the string "4"');
    expect(zh.verbWhy(w)).toBe('wr[0].sg_list[0].length 必须是整数，传入的是字符串 "4"');
    expect(zh.verbWhy(SAMPLES["arg-type-null"]!)).toContain("null");
    expect(zh.verbWhy(SAMPLES["arg-type-array"]!)).toContain("数组");
  });

  it("words states by name, in both languages", () => {
    const w: VerbFailure = { kind: "sq-not-ready", state: c.IBV_QPS_RTR };
    expect(zh.verbWhy(w)).toContain("RTR");
    expect(verbFailureText(w)).toContain("QP state RTR");
  });
});
