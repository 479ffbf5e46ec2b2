/**
 * The live QPs by number. A QP number is unique on its device only: rxe0 and rxe1 both hand out
 * 0x11 first, so the two ends of a two-device lesson often share a number, and "the QP numbered
 * 0x11" means nothing without saying which device. A completion names its QP by number, but it
 * was polled from a CQ, and a CQ's QPs live on its device: that pins it exactly. A QP's peer is
 * named by dest_qp_num alone (its device is the one the AV leads to): `pickPeer` chooses.
 */
import type { Cq, Qp } from "../../verbs/backend.js";
import type { Entry } from "./handles.js";

/** What pickPeer compares of a QP. */
export interface Numbered {
  qp_num: number;
  device?: string;
  dest_qp_num?: number;
}

/**
 * The QP `me` sends to among `others` (any QPs, `me` among them or not): one numbered
 * `me.dest_qp_num`, preferring one whose dest_qp_num points back at `me`, then one on another
 * device (two-device lessons pair rxe0 with rxe1; one device's two QPs never share a number).
 */
export function pickPeer<T extends Numbered>(me: T, others: Iterable<T>): T | undefined {
  let best: T | undefined;
  let bestScore = -1;
  for (const q of others) {
    if (q === me || q.qp_num !== me.dest_qp_num) continue;
    const score = (q.dest_qp_num === me.qp_num ? 2 : 0) + (q.device !== undefined && q.device !== me.device ? 1 : 0);
    if (score > bestScore) {
      best = q;
      bestScore = score;
    }
  }
  return best;
}

const deviceOf = (e: Entry) => (e.obj as Qp).pd.context.device.name;

export function createQpIndex() {
  const byNum = new Map<number, Entry[]>();
  return {
    add(e: Entry): void {
      const qpn = (e.obj as Qp).qp_num;
      byNum.set(qpn, [...(byNum.get(qpn) ?? []).filter((o) => !o.destroyed && o !== e), e]);
    },
    remove(e: Entry): void {
      const qpn = (e.obj as Qp).qp_num;
      const rest = (byNum.get(qpn) ?? []).filter((o) => o !== e);
      if (rest.length) byNum.set(qpn, rest);
      else byNum.delete(qpn);
    },
    /** The live QP numbered `qpn` that uses `cq` (a completion polled from it names that QP). */
    onCq(cq: Cq, qpn: number): Entry | undefined {
      return byNum.get(qpn)?.find((e) => (e.obj as Qp).send_cq === cq || (e.obj as Qp).recv_cq === cq);
    },
    /** The live QP numbered `qpn` on `device`. */
    onDevice(device: string, qpn: number): Entry | undefined {
      return byNum.get(qpn)?.find((e) => deviceOf(e) === device);
    },
    /** The live QP `e` sends to, given each QP's last known dest_qp_num. */
    peerOf(e: Entry, destOf: (e: Entry) => number | undefined): Entry | undefined {
      const dest = destOf(e);
      if (!dest) return undefined;
      const view = (o: Entry): Numbered & { e: Entry } => ({
        e: o,
        qp_num: (o.obj as Qp).qp_num,
        device: deviceOf(o),
        ...(destOf(o) !== undefined && { dest_qp_num: destOf(o) }),
      });
      const me = view(e);
      me.dest_qp_num = dest;
      return pickPeer(me, (byNum.get(dest) ?? []).filter((o) => o !== e).map(view))?.e;
    },
  };
}
