/** An RDMA WRITE with immediate of 2000 bytes from rxe0 to rxe1 (IPv4): WRITE_FIRST (RETH), WRITE_LAST_WITH_IMMEDIATE, ACK. */
import { IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE_WITH_IMM } from "../../learner.js";
import type { Verbs } from "../../verbs-api.js";
import { connectPair } from "./connect.js";

export default async function main(verbs: Verbs) {
  const { a, b, cqA, cqB, mrA, mrB } = await connectPair(verbs, { gidIndex: 1 });
  await b.postRecv({ wr_id: 2, sg_list: [mrB.sge(0, 16)] });
  await a.postSend({
    wr_id: 1,
    opcode: IBV_WR_RDMA_WRITE_WITH_IMM,
    send_flags: IBV_SEND_SIGNALED,
    imm_data: 0x12345678,
    sg_list: [mrA.sge(0, 2000)],
    rdma: { remote_addr: mrB.addr + 4096, rkey: mrB.rkey },
  });
  const sent = await cqA.pollWait(1, 5000);
  const got = await cqB.pollWait(1, 5000);
  await verbs.log(`WRITE_WITH_IMM: status ${sent[0]?.status}, imm 0x${(got[0]?.imm_data ?? 0).toString(16)}`);
}
