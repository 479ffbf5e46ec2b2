/** sim/RXE-FACTS.md §1.3: rxe fills only RoCE v2 GIDs, one per netdev address. */
import { expect, it } from "vitest";
import { IBV_GID_TYPE_ROCE_V2 } from "../constants.js";
import { expectVerbsError, findGid, gidBytes, isIpv4Mapped, sameGid, scope, suite } from "./harness.js";

suite("GIDs: the RoCE v2 table", () => {
  it.each(["rxe0", "rxe1"] as const)("%s: index 0 is fe80::<EUI-64 of the MAC> (the node_guid), RoCE v2", (dev) => {
    const ctx = scope().open(dev);
    const e = ctx.queryGidEx(1, 0);
    expect(e).toMatchObject({ gid_index: 0, port_num: 1, gid_type: IBV_GID_TYPE_ROCE_V2 });
    const b = gidBytes(e.gid);
    expect([...b.slice(0, 8)]).toEqual([0xfe, 0x80, 0, 0, 0, 0, 0, 0]);
    const guid = ctx.device.node_guid.replace(/:/g, "");
    const iid = [...b.slice(8)].map((x) => x.toString(16).padStart(2, "0")).join("");
    expect(iid).toBe(guid);
    expect(sameGid(ctx.queryGid(1, 0), e.gid)).toBe(true);
  });

  it.each(["rxe0", "rxe1"] as const)("%s: index 1 is the netdev's IPv4 address as ::ffff:a.b.c.d, RoCE v2", (dev) => {
    const ctx = scope().open(dev);
    const e = ctx.queryGidEx(1, 1);
    expect(isIpv4Mapped(e.gid)).toBe(true);
    expect(e.gid_type).toBe(IBV_GID_TYPE_ROCE_V2);
    // Both entries belong to the same netdev.
    expect(e.ndev_ifindex).toBeGreaterThan(0);
    expect(e.ndev_ifindex).toBe(ctx.queryGidEx(1, 0).ndev_ifindex);
  });

  it("ibv_query_gid_table lists only valid entries, all RoCE v2 on port 1, matching ibv_query_gid_ex", () => {
    const ctx = scope().open("rxe0");
    const table = ctx.queryGidTable();
    expect(table.length).toBeGreaterThanOrEqual(2);
    for (const e of table) {
      expect(e.gid_type).toBe(IBV_GID_TYPE_ROCE_V2);
      expect(e.port_num).toBe(1);
      expect(ctx.queryGidEx(1, e.gid_index)).toEqual(e);
    }
    // No IB or RoCE v1 entries and no duplicates.
    expect(new Set(table.map((e) => e.gid_index)).size).toBe(table.length);
  });

  it("an empty slot: ibv_query_gid reads '::' (rc 0), ibv_query_gid_ex gives ENODATA", () => {
    const ctx = scope().open("rxe0");
    const empty = Math.max(...ctx.queryGidTable().map((e) => e.gid_index)) + 1;
    expect(gidBytes(ctx.queryGid(1, empty)).every((x) => x === 0)).toBe(true);
    expectVerbsError(() => ctx.queryGidEx(1, empty), "ENODATA");
  });

  it("rxe0 and rxe1 have different GIDs (one netdev each)", () => {
    const s = scope();
    const a = s.open("rxe0");
    const b = s.open("rxe1");
    expect(sameGid(findGid(a, "linklocal").gid, findGid(b, "linklocal").gid)).toBe(false);
    expect(sameGid(findGid(a, "ipv4").gid, findGid(b, "ipv4").gid)).toBe(false);
  });
});
