/**
 * A lossy run (IPv4): a 4096-byte RDMA WRITE from rxe0 to rxe1 at path_mtu 1024 is four packets,
 * PSNs 100-103, and the link drops the last one once (`dropPsn`, an nftables rule on real rxe).
 * rxe1 got 100-102 but no last packet, so it says nothing (only a message's last packet asks
 * for an ACK); rxe0's retransmit timer (timeout 18: 1.07 s) fires and go-back-N resends the
 * whole message from its first unacknowledged PSN, 100. rxe1 takes 100-102 for duplicates and
 * ACKs each with the last PSN it has (102, MSN 0); 103 completes the WRITE and its ACK (103,
 * MSN 1) completes the work request.
 *
 * The timeout is 18 (1.07 s), not 14: rxe arms its retransmit timer with the first packet, and
 * in a loaded lab VM the requester once took 68 ms to get the fourth packet out, 0.4 ms before
 * a 67 ms timer would have fired and resent the message before it was whole.
 *
 * Why the last packet and not one in the middle: a lost middle packet is answered at once by
 * an out-of-sequence NAK, which races rxe0's requester still sending the message. Measured with
 * PSN 101 dropped: in three captures the NAK stopped the requester before PSN 103 went out, in a
 * fourth run 103 went out first (the simulator always sends all four first). Here nothing
 * answers until every packet has gone out: the same twelve packets in six captures, three boots.
 */
import { IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE } from "../../learner.js";
import type { Verbs } from "../../verbs-api.js";
import { connectPair } from "./connect.js";

export default async function main(verbs: Verbs) {
  const { a, cqA, mrA, mrB } = await connectPair(verbs, { gidIndex: 1, timeout: 18 });
  await mrA.write(0, "go-back-N ".repeat(410));
  await verbs.lab.setLink({ dropPsn: 103 });
  try {
    await a.postSend({
      wr_id: 1,
      opcode: IBV_WR_RDMA_WRITE,
      send_flags: IBV_SEND_SIGNALED,
      sg_list: [mrA.sge(0, 4096)],
      rdma: { remote_addr: mrB.addr, rkey: mrB.rkey },
    });
    const done = await cqA.pollWait(1, 5000);
    await verbs.log(`WRITE over a link that lost PSN 103 once: status ${done[0]?.status}`);
  } finally {
    await verbs.lab.clearLink();
  }
}
