/**
 * A simulated rxe device: its netdev (MAC, IPv4 addresses, MTU, link), GID table, port,
 * counters, and the per-device pools rxe keeps (MR index, QPN), with rxe's attribute values
 * (RXE-FACTS.md §1).
 */
import {
  IBV_ATOMIC_HCA,
  IBV_GID_TYPE_ROCE_V2,
  IBV_LINK_LAYER_ETHERNET,
  IBV_MTU_1024,
  IBV_MTU_2048,
  IBV_MTU_256,
  IBV_MTU_4096,
  IBV_MTU_512,
  IBV_NODE_CA,
  IBV_PORT_ACTIVE,
  IBV_PORT_DOWN,
  IBV_TRANSPORT_IB,
} from "../verbs/constants.js";
import type { DeviceAttr, DeviceInfo, PortAttr } from "../verbs/types.js";
import { newCounters } from "./counters.js";
import { eui64, formatGid, formatGuid, gidEquals, linkLocalGid } from "./gid.js";
import type { SimMr } from "./mr.js";
import type { SimQp } from "./qp.js";
import type { SimContext } from "./context.js";
import { simProfile, type SimProfile } from "./profile.js";

export const GID_TABLE_LEN = 1024;
/** RXE_MAX_HDR_LENGTH: what rxe subtracts from the netdev MTU before picking an IB MTU. */
const RXE_MAX_HDR_LENGTH = 80;

export interface GidSlot {
  gid: Uint8Array;
  text: string;
  type: number;
}

export class SimDevice {
  readonly info: DeviceInfo;
  readonly guid: Uint8Array;
  readonly gids: (GidSlot | null)[] = new Array(GID_TABLE_LEN).fill(null);
  netdevMtu = 1500;
  linkUp = true;
  counters = newCounters();
  /** The port's Q_Key violation counter (rxe_recv.c check_keys: set_qkey_viol_cntr). */
  qkeyViolCntr = 0;
  /** Next MR pool index: 1 is the kernel's DMA MR, so user MRs start at 2 (RXE-FACTS.md §6.2). */
  nextMrIndex = 2;
  /** Next QPN: 16 is the GSI QP, so user QPs start at 0x11. */
  nextQpn = 0x11;
  /** The PSN of the next packet the GSI QP (QP1, the CM's MADs) sends; ib_mad starts it at 0. */
  gsiPsn = 0;
  mrs = new Map<number, SimMr>();
  qps = new Map<number, SimQp>();
  contexts = new Set<SimContext>();

  constructor(
    readonly name: string,
    readonly mac: Uint8Array,
    readonly ifindex: number,
    readonly netdevName: string,
    readonly profile: SimProfile = simProfile("rxe"),
  ) {
    this.guid = eui64(mac);
    this.netdevMtu = profile.netdevMtu;
    this.info = {
      name,
      node_guid: formatGuid(this.guid),
      node_type: IBV_NODE_CA,
      transport_type: IBV_TRANSPORT_IB,
      driver: profile.driver,
    };
    this.addGid(linkLocalGid(mac));
  }

  /** Adds a RoCEv2 GID in the first free slot; returns its index. */
  addGid(gid: Uint8Array): number {
    for (let i = 0; i < this.gids.length; i++) {
      const s = this.gids[i];
      if (s && gidEquals(s.gid, gid)) return i;
    }
    const i = this.gids.indexOf(null);
    this.gids[i] = { gid, text: formatGid(gid), type: IBV_GID_TYPE_ROCE_V2 };
    return i;
  }

  findGid(gid: Uint8Array): number {
    for (let i = 0; i < this.gids.length; i++) {
      const s = this.gids[i];
      if (s && gidEquals(s.gid, gid)) return i;
    }
    return -1;
  }

  get activeMtu(): number {
    const m = this.netdevMtu - RXE_MAX_HDR_LENGTH;
    if (m >= 4096) return IBV_MTU_4096;
    if (m >= 2048) return IBV_MTU_2048;
    if (m >= 1024) return IBV_MTU_1024;
    if (m >= 512) return IBV_MTU_512;
    return IBV_MTU_256;
  }

  deviceAttr(): DeviceAttr {
    const guid = this.info.node_guid;
    return {
      fw_ver: "0.0.0",
      node_guid: guid,
      sys_image_guid: guid,
      max_mr_size: 0xffffffffffffffffn,
      page_size_cap: 0xfffff000n,
      vendor_id: 0xffffff,
      vendor_part_id: 0,
      hw_ver: 0,
      max_qp: 1048560,
      max_qp_wr: 1048576,
      device_cap_flags: 0x1223c76,
      max_sge: 32,
      max_sge_rd: 32,
      max_cq: 1048576,
      max_cqe: 32767,
      max_mr: 524287,
      max_pd: 1048576,
      max_qp_rd_atom: 128,
      max_ee_rd_atom: 0,
      max_res_rd_atom: 258048,
      max_qp_init_rd_atom: 128,
      max_ee_init_rd_atom: 0,
      atomic_cap: IBV_ATOMIC_HCA,
      max_ee: 0,
      max_rdd: 0,
      max_mw: 524287,
      max_raw_ipv6_qp: 0,
      max_raw_ethy_qp: 0,
      max_mcast_grp: 8192,
      max_mcast_qp_attach: 56,
      max_total_mcast_qp_attach: 458752,
      max_ah: 32767,
      max_fmr: 0,
      max_map_per_fmr: 0,
      max_srq: 917503,
      max_srq_wr: 1048576,
      max_srq_sge: 27,
      max_pkeys: 64,
      local_ca_ack_delay: 15,
      phys_port_cnt: 1,
      ...this.profile.deviceAttr,
    };
  }

  portAttr(): PortAttr {
    return {
      state: this.linkUp ? IBV_PORT_ACTIVE : IBV_PORT_DOWN,
      max_mtu: IBV_MTU_4096,
      active_mtu: this.activeMtu,
      gid_tbl_len: GID_TABLE_LEN,
      port_cap_flags: 0x10000,
      max_msg_sz: 0x800000,
      bad_pkey_cntr: 0,
      qkey_viol_cntr: this.qkeyViolCntr,
      pkey_tbl_len: 1,
      lid: 0,
      sm_lid: 0,
      lmc: 0,
      max_vl_num: 1,
      sm_sl: 0,
      subnet_timeout: 0,
      init_type_reply: 0,
      active_width: 1,
      active_speed: 8,
      phys_state: this.linkUp ? 5 : 3,
      link_layer: IBV_LINK_LAYER_ETHERNET,
      flags: 1,
      port_cap_flags2: 0,
    };
  }
}
