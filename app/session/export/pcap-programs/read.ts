/** An RDMA READ of 3000 bytes by rxe0 from rxe1 over the link-local IPv6 GID: the request, then READ_RESPONSE FIRST, MIDDLE, LAST. */
import { IBV_SEND_SIGNALED, IBV_WR_RDMA_READ } from "../../learner.js";
import type { Verbs } from "../../verbs-api.js";
import { connectPair } from "./connect.js";

export default async function main(verbs: Verbs) {
  const { a, cqA, mrA, mrB } = await connectPair(verbs, { gidIndex: 0 });
  await mrB.write(0, "remote bytes ".repeat(250));
  await a.postSend({
    wr_id: 1,
    opcode: IBV_WR_RDMA_READ,
    send_flags: IBV_SEND_SIGNALED,
    sg_list: [mrA.sge(0, 3000)],
    rdma: { remote_addr: mrB.addr, rkey: mrB.rkey },
  });
  const done = await cqA.pollWait(1, 5000);
  await verbs.log(`READ: status ${done[0]?.status}, ${done[0]?.byte_len} bytes`);
}
