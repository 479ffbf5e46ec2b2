/** A two-packet SEND from rxe0 to rxe1 over the IPv4 GID: SEND_FIRST, SEND_LAST, then the ACK. */
import { IBV_SEND_SIGNALED, IBV_WR_SEND } from "../../learner.js";
import type { Verbs } from "../../verbs-api.js";
import { connectPair } from "./connect.js";

export default async function main(verbs: Verbs) {
  const { a, b, cqA, cqB, mrA, mrB } = await connectPair(verbs, { gidIndex: 1 });
  await mrA.write(0, "hello, rdma".repeat(150));
  await b.postRecv({ wr_id: 2, sg_list: [mrB.sge(0, 4096)] });
  await a.postSend({ wr_id: 1, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [mrA.sge(0, 1500)] });
  const sent = await cqA.pollWait(1, 5000);
  const got = await cqB.pollWait(1, 5000);
  await verbs.log(`SEND: status ${sent[0]?.status}, received ${got[0]?.byte_len} bytes`);
}
