import type { Verbs } from "verbslab";
import { IBV_GID_TYPE_ROCE_V2 } from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const port = await ctx.queryPort(1);
  await verbs.log("gid_tbl_len", port.gid_tbl_len);

  // TODO: read the GID table (ibv_query_gid_table → ctx.queryGidTable()) and log each entry's index, type and GID.
  // Pick the RoCEv2 entry with an IPv4-mapped address (::ffff:a.b.c.d) if there is one, else index 0,
  // and log its index as "chosen_gid_index" and its GID as "chosen_gid".
  // Also log whether index 0 is the link-local fe80:: address, as "index0_is_link_local".

  // An empty slot: ibv_query_gid_ex says ENODATA (ibv_query_gid would quietly return "::").
  try {
    await ctx.queryGidEx(1, port.gid_tbl_len - 1);
  } catch (err) {
    await verbs.log("empty_slot", (err as { code?: string }).code);
  }
}
