/** sim/RXE-FACTS.md §1.1–1.3: device list, ibv_query_device, ibv_query_port, P_Keys. */
import { expect, it } from "vitest";
import {
  IBV_ATOMIC_HCA,
  IBV_LINK_LAYER_ETHERNET,
  IBV_MTU_1024,
  IBV_MTU_4096,
  IBV_NODE_CA,
  IBV_PORT_ACTIVE,
  IBV_TRANSPORT_IB,
} from "../constants.js";
import type { PortAttr } from "../types.js";
import { B, expectVerbsError, scope, suite } from "./harness.js";

const GUID = /^[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}$/;

suite("device: ibv_get_device_list and ibv_open_device", () => {
  it("lists rxe0 and rxe1 as CA nodes with the IB transport and an EUI-64 node_guid", () => {
    const list = B().getDeviceList();
    const names = list.map((d) => d.name);
    expect(names).toContain("rxe0");
    expect(names).toContain("rxe1");
    for (const d of list.filter((x) => x.name === "rxe0" || x.name === "rxe1")) {
      expect(d.node_type).toBe(IBV_NODE_CA);
      expect(d.transport_type).toBe(IBV_TRANSPORT_IB);
      expect(d.node_guid).toMatch(GUID);
      // EUI-64 of a MAC: ff:fe in the middle (bytes 3 and 4).
      expect(d.node_guid.replace(/:/g, "").slice(6, 10)).toBe("fffe");
    }
    const [a, b] = ["rxe0", "rxe1"].map((n) => list.find((d) => d.name === n)!);
    expect(a.node_guid).not.toBe(b.node_guid);
  });

  it("ibv_open_device of a device that does not exist fails with ENODEV", () => {
    expectVerbsError(() => B().openDevice("rxe9"), "ENODEV");
  });

  it("an opened context names its device", () => {
    const ctx = scope().open("rxe1");
    expect(ctx.device.name).toBe("rxe1");
  });
});

suite("device: ibv_query_device returns rxe's fixed limits (§1.1)", () => {
  it("reports rxe_param.h's values field by field", () => {
    const attr = scope().open("rxe0").queryDevice();
    expect(attr).toMatchObject({
      fw_ver: "0.0.0",
      vendor_id: 0xffffff,
      vendor_part_id: 0,
      hw_ver: 0,
      max_mr_size: 0xffffffffffffffffn,
      page_size_cap: 0xfffff000n,
      max_qp: 1048560,
      max_qp_wr: 1048576,
      device_cap_flags: 0x1223c76,
      max_sge: 32,
      max_sge_rd: 32,
      max_cq: 1048576,
      max_cqe: 32767,
      max_mr: 524287,
      max_mw: 524287,
      max_pd: 1048576,
      max_ah: 32767,
      max_qp_rd_atom: 128,
      max_qp_init_rd_atom: 128,
      max_res_rd_atom: 258048,
      atomic_cap: IBV_ATOMIC_HCA,
      max_ee: 0,
      max_rdd: 0,
      max_ee_rd_atom: 0,
      max_ee_init_rd_atom: 0,
      max_raw_ipv6_qp: 0,
      max_raw_ethy_qp: 0,
      max_fmr: 0,
      max_map_per_fmr: 0,
      max_mcast_grp: 8192,
      max_mcast_qp_attach: 56,
      max_total_mcast_qp_attach: 458752,
      max_srq: 917503,
      max_srq_wr: 1048576,
      max_srq_sge: 27,
      max_pkeys: 64,
      local_ca_ack_delay: 15,
      phys_port_cnt: 1,
    });
  });

  it("node_guid equals sys_image_guid and the device list's node_guid", () => {
    const ctx = scope().open("rxe0");
    const attr = ctx.queryDevice();
    expect(attr.node_guid).toMatch(GUID);
    expect(attr.sys_image_guid).toBe(attr.node_guid);
    expect(attr.node_guid).toBe(ctx.device.node_guid);
  });
});

suite("device: ibv_query_port (§1.2)", () => {
  it("port 1 is ACTIVE Ethernet with rxe's fixed values; active_mtu 1024 on a 1500-byte netdev", () => {
    const port = scope().open("rxe0").queryPort(1);
    expect(port).toMatchObject({
      state: IBV_PORT_ACTIVE,
      phys_state: 5,
      max_mtu: IBV_MTU_4096,
      active_mtu: IBV_MTU_1024,
      gid_tbl_len: 1024,
      port_cap_flags: 0x10000,
      port_cap_flags2: 0,
      max_msg_sz: 0x800000,
      pkey_tbl_len: 1,
      lid: 0,
      sm_lid: 0,
      lmc: 0,
      sm_sl: 0,
      subnet_timeout: 0,
      init_type_reply: 0,
      max_vl_num: 1,
      active_width: 1,
      active_speed: 8,
      link_layer: IBV_LINK_LAYER_ETHERNET,
      flags: 1,
    });
  });

  it("rxe1's port 1 reports the same values", () => {
    const s = scope();
    // Minus the two violation counters, which count this port's history (see ud.test.ts).
    const strip = ({ bad_pkey_cntr: _b, qkey_viol_cntr: _q, ...rest }: PortAttr) => rest;
    const p0 = s.open("rxe0").queryPort(1);
    const p1 = s.open("rxe1").queryPort(1);
    expect(strip(p1)).toEqual(strip(p0));
  });

  it.each([0, 2])("ibv_query_port(%i) fails with EINVAL (rxe has only port 1)", (port) => {
    const ctx = scope().open("rxe0");
    expectVerbsError(() => ctx.queryPort(port), "EINVAL");
  });
});

suite("device: P_Key table (§1.3)", () => {
  it("ibv_query_pkey(1, 0) is the default P_Key 0xffff", () => {
    expect(scope().open("rxe0").queryPkey(1, 0)).toBe(0xffff);
  });

  it("ibv_query_pkey(1, 1) fails with ENOENT: the table has one entry (no sysfs file for index 1)", () => {
    const ctx = scope().open("rxe0");
    // The C call returns -1 with errno ENOENT (measured in the lab VM).
    expectVerbsError(() => ctx.queryPkey(1, 1), "ENOENT");
  });

  it("bad_pkey_cntr and qkey_viol_cntr are counters (non-negative integers), not fixed values", () => {
    const p = scope().open("rxe0").queryPort(1);
    for (const v of [p.bad_pkey_cntr, p.qkey_viol_cntr]) {
      expect(Number.isInteger(v)).toBe(true);
      expect(v).toBeGreaterThanOrEqual(0);
    }
  });
});
