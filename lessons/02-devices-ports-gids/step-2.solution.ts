import type { Verbs } from "verbslab";
import { IBV_GID_TYPE_ROCE_V2 } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const port = await ctx.queryPort(1);
  await verbs.log("gid_tbl_len", port.gid_tbl_len);

  const table = await ctx.queryGidTable();
  for (const e of table) await verbs.log(`gid[${e.gid_index}]`, `${e.gid} type ${e.gid_type}`);
  const ipv4 = table.find((e) => e.gid_type === IBV_GID_TYPE_ROCE_V2 && e.gid.startsWith("::ffff:"));
  const chosen = ipv4 ?? table[0]!;
  await verbs.log("chosen_gid_index", chosen.gid_index);
  await verbs.log("chosen_gid", chosen.gid);
  await verbs.log("index0_is_link_local", table[0]!.gid.startsWith("fe80:"));

  // An empty slot: ibv_query_gid_ex says ENODATA (ibv_query_gid would quietly return "::").
  try {
    await ctx.queryGidEx(1, port.gid_tbl_len - 1);
  } catch (err) {
    await verbs.log("empty_slot", (err as { code?: string }).code);
  }
}
