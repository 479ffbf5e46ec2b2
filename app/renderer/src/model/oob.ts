/**
 * The out-of-band tuple two sides of an RC connection must exchange (QPN, PSN, GID and
 * index, rkey and address), and where one side's attributes do not match the other's.
 */
import { IBV_QPT_RC, IBV_QPT_UC } from "../../../../verbs/constants.js";
import type { DeviceView, MrView, QpView } from "./view.js";

export interface OobSide {
  handle: string;
  qp_num: number;
  sq_psn?: number;
  rq_psn?: number;
  gid?: string;
  sgid_index?: number;
  dest_qp_num?: number;
  dgid?: string;
  path_mtu?: number;
  /** The first MR with a remote key on this side's PD, as a program would advertise it. */
  rkey?: number;
  addr?: number;
}

export interface Mismatch {
  /** The field on `side` that disagrees ("dest_qp_num"). */
  field: string;
  side: "a" | "b";
  expected: string;
  actual: string;
}

export interface Connection {
  a: OobSide;
  b: OobSide;
  mismatches: Mismatch[];
}

const connected = (qp: QpView) => qp.qp_type === IBV_QPT_RC || qp.qp_type === IBV_QPT_UC;

/**
 * Pairs QPs: first by dest_qp_num pointing at each other (or one way), then the remaining
 * connected-mode QPs in creation order (a loopback lesson creates its two QPs together).
 */
export function pairQps(qps: QpView[]): [QpView, QpView][] {
  const rc = qps.filter(connected);
  const used = new Set<string>();
  const pairs: [QpView, QpView][] = [];
  const dest = (q: QpView) => q.query?.attr.dest_qp_num;
  for (const q of rc) {
    if (used.has(q.handle)) continue;
    const peer = rc.find((p) => p !== q && !used.has(p.handle) && (dest(q) === p.qp_num || dest(p) === q.qp_num));
    if (peer && (dest(q) || dest(peer))) {
      pairs.push([q, peer]);
      used.add(q.handle).add(peer.handle);
    }
  }
  const rest = rc.filter((q) => !used.has(q.handle));
  for (let i = 0; i + 1 < rest.length; i += 2) pairs.push([rest[i], rest[i + 1]]);
  return pairs;
}

function side(qp: QpView, devices: DeviceView[], mrs: MrView[]): OobSide {
  const attr = qp.query?.attr;
  const sgid = attr?.ah_attr.grh.sgid_index;
  const dev = devices.find((d) => d.name === qp.device);
  const gid = dev?.ports[0]?.gids.find((g) => g.index === (sgid ?? 1))?.gid;
  const mr = mrs.find((m) => m.rkey !== 0 && (!qp.pd || m.pd === qp.pd));
  return {
    handle: qp.handle,
    qp_num: qp.qp_num,
    sq_psn: attr?.sq_psn,
    rq_psn: attr?.rq_psn,
    gid,
    sgid_index: sgid,
    dest_qp_num: attr?.dest_qp_num,
    dgid: attr?.ah_attr.grh.dgid,
    path_mtu: attr?.path_mtu,
    rkey: mr?.rkey,
    addr: mr?.addr,
  };
}

/**
 * A QP state from which the connection attributes have been set (RTR and beyond), or ERR with
 * a dest_qp_num set (a failed completion moved it there: its attributes still say what it used).
 */
const pastInit = (qp: QpView) => (qp.state >= 2 && qp.state <= 5) || (qp.state === 6 && !!qp.query?.attr.dest_qp_num);
/** The peer's sq_psn is meaningful once it reached RTS (it is set on RTR → RTS). */
const inRts = (qp: QpView) => qp.state >= 3 && qp.state <= 5;

/** The tuple of both sides, with mismatches flagged only where a side has already been configured. */
export function connection(a: QpView, b: QpView, devices: DeviceView[], mrs: MrView[]): Connection {
  const sa = side(a, devices, mrs);
  const sb = side(b, devices, mrs);
  const mismatches: Mismatch[] = [];
  const check = (s: OobSide, o: OobSide, which: "a" | "b", qp: QpView) => {
    if (!pastInit(qp)) return;
    if (s.dest_qp_num !== o.qp_num)
      mismatches.push({ field: "dest_qp_num", side: which, expected: String(o.qp_num), actual: String(s.dest_qp_num) });
    const peer = which === "a" ? b : a;
    if (o.sq_psn !== undefined && s.rq_psn !== o.sq_psn && inRts(peer))
      mismatches.push({ field: "rq_psn", side: which, expected: String(o.sq_psn), actual: String(s.rq_psn) });
    if (o.gid && s.dgid && s.dgid !== o.gid)
      mismatches.push({ field: "ah_attr.grh.dgid", side: which, expected: o.gid, actual: s.dgid });
    if (pastInit(peer) && s.path_mtu !== o.path_mtu)
      mismatches.push({ field: "path_mtu", side: which, expected: String(o.path_mtu), actual: String(s.path_mtu) });
  };
  check(sa, sb, "a", a);
  check(sb, sa, "b", b);
  return { a: sa, b: sb, mismatches };
}
