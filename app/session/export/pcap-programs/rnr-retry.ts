/**
 * An RNR retry (IPv4): a SEND reaches rxe1 before any receive is posted, so rxe1 answers with
 * an RNR NAK carrying its min_rnr_timer (31: 491.52 ms); the receive is posted well inside that
 * wait, and the retried SEND is ACKed.
 */
import { IBV_SEND_SIGNALED, IBV_WR_SEND } from "../../learner.js";
import type { Verbs } from "../../verbs-api.js";
import { connectPair } from "./connect.js";

export default async function main(verbs: Verbs) {
  const { a, b, cqA, cqB, mrA, mrB } = await connectPair(verbs, { gidIndex: 1, minRnrTimer: 31 });
  await a.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mrA.sge(0, 64)] });
  await verbs.sleep(100);
  await b.postRecv({ wr_id: 2, sg_list: [mrB.sge(0, 64)] });
  const sent = await cqA.pollWait(1, 5000);
  const got = await cqB.pollWait(1, 5000);
  await verbs.log(`after the RNR wait: send status ${sent[0]?.status}, receive status ${got[0]?.status}`);
}
