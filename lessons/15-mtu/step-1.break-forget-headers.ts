import type { Verbs } from "verbslab";
import { IBV_MTU_256, IBV_MTU_512, IBV_MTU_1024, IBV_MTU_2048, IBV_MTU_4096 } from "verbslab";

/** The netdev MTUs to try on rxe1's veth, in bytes (all ≥ 1280, so IPv6 and the link-local GID stay). */
const NETDEV_MTUS = [1500, 9000, 4096, 4200, 2100, 1280];

export default async function main(verbs: Verbs) {
  const rxe1 = await verbs.openDevice("rxe1");
  const before = (await verbs.lab.getLink()).mtu.rxe1;
  const active_mtus: number[] = [];
  let predicted_right = 0;
  try {
    for (const mtu of NETDEV_MTUS) {
      await verbs.lab.setLink({ mtu: { rxe1: mtu } });
      const port = await rxe1.queryPort(1);
      active_mtus.push(port.active_mtu);
      const predicted = predictActiveMtu(mtu);
      if (predicted === port.active_mtu) predicted_right++;
      await verbs.log(`netdev mtu ${mtu}`, { active_mtu: port.active_mtu, predicted, max_mtu: port.max_mtu });
    }
  } finally {
    // The lab link outlives the program: put rxe1's MTU back.
    await verbs.lab.clearLink();
  }
  await verbs.log("active_mtus", active_mtus);
  await verbs.log("predicted_right", predicted_right);
  await verbs.log("mtu_restored", (await verbs.lab.getLink()).mtu.rxe1 === before);
}

/**
 * rxe's rule (rxe_set_mtu, eth_mtu_int_to_enum): take the netdev MTU, subtract the 80 bytes
 * rxe reserves for its headers, and round down to an IB MTU; at most 4096.
 */
function predictActiveMtu(netdevMtu: number): number {
  // The mistake: the netdev MTU itself rounded down, as if rxe's headers took no room.
  if (netdevMtu >= 4096) return IBV_MTU_4096;
  if (netdevMtu >= 2048) return IBV_MTU_2048;
  if (netdevMtu >= 1024) return IBV_MTU_1024;
  if (netdevMtu >= 512) return IBV_MTU_512;
  return IBV_MTU_256;
}
