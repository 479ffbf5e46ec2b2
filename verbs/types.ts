/**
 * Plain data that crosses the verbs contract. Field names keep the C spellings of
 * <infiniband/verbs.h> (struct ibv_qp_attr → QpAttr, and so on). 64-bit values that can
 * exceed 2^53 (atomic operands) are bigint; addresses, keys, PSNs and wr_ids are numbers.
 * GIDs are IPv6 text ("fe80::1"), as `ibv_devinfo -v` and `rdma` print them.
 */
import type { Ah, Cq } from "./backend.js";

/** What `ibv_get_device_list` tells about a device before it is opened. */
export interface DeviceInfo {
  name: string;
  /** EUI-64 as 4 colon-separated groups of 4 hex digits, like ibv_devinfo prints it. */
  node_guid: string;
  node_type: number;
  transport_type: number;
  /**
   * The kernel driver behind the device ("rxe", "mlx5", "siw", …): what decides which
   * counters it has and which of rxe's answers it shares. Absent when it could not be told.
   */
  driver?: string;
}

/** struct ibv_device_attr (with the ibv_device_attr_ex fields rxe reports). */
export interface DeviceAttr {
  fw_ver: string;
  node_guid: string;
  sys_image_guid: string;
  max_mr_size: bigint;
  page_size_cap: bigint;
  vendor_id: number;
  vendor_part_id: number;
  hw_ver: number;
  max_qp: number;
  max_qp_wr: number;
  device_cap_flags: number;
  max_sge: number;
  max_sge_rd: number;
  max_cq: number;
  max_cqe: number;
  max_mr: number;
  max_pd: number;
  max_qp_rd_atom: number;
  max_ee_rd_atom: number;
  max_res_rd_atom: number;
  max_qp_init_rd_atom: number;
  max_ee_init_rd_atom: number;
  atomic_cap: number;
  max_ee: number;
  max_rdd: number;
  max_mw: number;
  max_raw_ipv6_qp: number;
  max_raw_ethy_qp: number;
  max_mcast_grp: number;
  max_mcast_qp_attach: number;
  max_total_mcast_qp_attach: number;
  max_ah: number;
  max_fmr: number;
  max_map_per_fmr: number;
  max_srq: number;
  max_srq_wr: number;
  max_srq_sge: number;
  max_pkeys: number;
  local_ca_ack_delay: number;
  phys_port_cnt: number;
}

/** struct ibv_port_attr */
export interface PortAttr {
  state: number;
  max_mtu: number;
  active_mtu: number;
  gid_tbl_len: number;
  port_cap_flags: number;
  max_msg_sz: number;
  bad_pkey_cntr: number;
  qkey_viol_cntr: number;
  pkey_tbl_len: number;
  lid: number;
  sm_lid: number;
  lmc: number;
  max_vl_num: number;
  sm_sl: number;
  subnet_timeout: number;
  init_type_reply: number;
  active_width: number;
  active_speed: number;
  phys_state: number;
  link_layer: number;
  flags: number;
  port_cap_flags2: number;
}

/** struct ibv_gid_entry (ibv_query_gid_ex / ibv_query_gid_table). */
export interface GidEntry {
  gid: string;
  gid_index: number;
  port_num: number;
  gid_type: number;
  ndev_ifindex: number;
}

/** struct ibv_global_route */
export interface GlobalRoute {
  dgid: string;
  flow_label: number;
  sgid_index: number;
  hop_limit: number;
  traffic_class: number;
}

/** struct ibv_ah_attr */
export interface AhAttr {
  grh: GlobalRoute;
  dlid: number;
  sl: number;
  src_path_bits: number;
  static_rate: number;
  is_global: number;
  port_num: number;
}

/** struct ibv_qp_cap */
export interface QpCap {
  max_send_wr: number;
  max_recv_wr: number;
  max_send_sge: number;
  max_recv_sge: number;
  max_inline_data: number;
}

/** struct ibv_qp_init_attr, as given to `pd.createQp`. */
export interface QpInitAttr {
  send_cq: Cq;
  recv_cq: Cq;
  cap: QpCap;
  qp_type: number;
  /** 1: every send WR generates a completion; 0: only those with IBV_SEND_SIGNALED. */
  sq_sig_all?: number;
  qp_context?: unknown;
}

/** struct ibv_qp_attr, complete, as `qp.query()` returns it. */
export interface QpAttr {
  qp_state: number;
  cur_qp_state: number;
  path_mtu: number;
  path_mig_state: number;
  qkey: number;
  rq_psn: number;
  sq_psn: number;
  dest_qp_num: number;
  qp_access_flags: number;
  cap: QpCap;
  ah_attr: AhAttr;
  alt_ah_attr: AhAttr;
  pkey_index: number;
  alt_pkey_index: number;
  en_sqd_async_notify: number;
  sq_draining: number;
  max_rd_atomic: number;
  max_dest_rd_atomic: number;
  min_rnr_timer: number;
  port_num: number;
  timeout: number;
  retry_cnt: number;
  rnr_retry: number;
  alt_port_num: number;
  alt_timeout: number;
  rate_limit: number;
}

/** What `qp.modify(attr, mask)` reads: only the fields named in `mask` matter. */
export type QpAttrInput = Partial<Omit<QpAttr, "ah_attr" | "alt_ah_attr" | "cap">> & {
  ah_attr?: Partial<Omit<AhAttr, "grh">> & { grh?: Partial<GlobalRoute> };
  alt_ah_attr?: Partial<Omit<AhAttr, "grh">> & { grh?: Partial<GlobalRoute> };
  cap?: Partial<QpCap>;
};

/** `ibv_query_qp` result: the attributes and the init attributes. */
export interface QpQuery {
  attr: QpAttr;
  init_attr: { qp_type: number; sq_sig_all: number; cap: QpCap };
}

/** struct ibv_sge: a slice of a registered MR, named by address and lkey. */
export interface Sge {
  addr: number;
  length: number;
  lkey: number;
}

/** struct ibv_send_wr, with the C union `wr` flattened into `rdma`, `atomic` and `ud`. */
export interface SendWr {
  wr_id?: number;
  opcode: number;
  send_flags?: number;
  sg_list?: Sge[];
  /** 32-bit immediate data, delivered to the receiver exactly as posted. */
  imm_data?: number;
  rdma?: { remote_addr: number; rkey: number };
  atomic?: { remote_addr: number; compare_add: bigint; swap?: bigint; rkey: number };
  ud?: { ah: Ah; remote_qpn: number; remote_qkey: number };
}

/** struct ibv_recv_wr */
export interface RecvWr {
  wr_id?: number;
  sg_list?: Sge[];
}

/** struct ibv_wc */
export interface Wc {
  wr_id: number;
  status: number;
  opcode: number;
  vendor_err: number;
  byte_len: number;
  imm_data: number;
  qp_num: number;
  src_qp: number;
  wc_flags: number;
  pkey_index: number;
  slid: number;
  sl: number;
  dlid_path_bits: number;
}

/** struct ibv_async_event, with the element resolved to what it names. */
export interface AsyncEvent {
  event_type: number;
  /** Set for QP events: the QP's number. */
  qp_num?: number;
  /** Set for CQ events. */
  cq?: Cq;
  /** Set for port events. */
  port_num?: number;
}

/** A port's hardware counters (rxe: /sys/class/infiniband/<dev>/ports/1/hw_counters), by the driver's names. */
export type PortCounters = Record<string, number>;

/** The names rxe (Linux 6.1, rxe_hw_counters.c) gives its counters, in its order. */
export const RXE_COUNTER_NAMES = [
  "sent_pkts",
  "rcvd_pkts",
  "duplicate_request",
  "out_of_seq_request",
  "rcvd_rnr_err",
  "send_rnr_err",
  "rcvd_seq_err",
  "ack_deferred",
  "retry_exceeded_err",
  "retry_rnr_exceeded_err",
  "completer_retry_err",
  "send_err",
  "link_downed",
  "rdma_sends",
  "rdma_recvs",
] as const;

/** One of rxe's counter names: the course's name for a counter whatever the device calls it. */
export type RxeCounterName = (typeof RXE_COUNTER_NAMES)[number];

/**
 * mlx5's names for rxe's counters (mlx5's hw_counters, and the IB port counters of
 * /sys/class/infiniband/<dev>/ports/<n>/counters for packets and link_downed), per the
 * kernel's mlx5 counter documentation. rxe counters with no mlx5 equivalent are absent.
 */
const MLX5_COUNTER_NAMES: Partial<Record<RxeCounterName, string>> = {
  sent_pkts: "port_xmit_packets",
  rcvd_pkts: "port_rcv_packets",
  duplicate_request: "duplicate_request",
  out_of_seq_request: "out_of_sequence",
  // The responder found no receive WQE (rxe sends an RNR NAK and counts send_rnr_err).
  send_rnr_err: "out_of_buffer",
  rcvd_seq_err: "packet_seq_err",
  retry_rnr_exceeded_err: "rnr_nak_retry_err",
  // mlx5 counts each expiry of the ACK timer, as rxe's completer counts each retry.
  completer_retry_err: "local_ack_timeout_err",
  link_downed: "link_downed",
};

/**
 * What each driver calls rxe's counters, by driver name (DeviceInfo.driver). "generic" is the
 * simulator's generic-NIC profile, which uses mlx5's names.
 */
export const DRIVER_COUNTER_NAMES: Record<string, Partial<Record<RxeCounterName, string>>> = {
  rxe: Object.fromEntries(RXE_COUNTER_NAMES.map((n) => [n, n])),
  mlx5: MLX5_COUNTER_NAMES,
  generic: MLX5_COUNTER_NAMES,
};

/**
 * The device's own name for one of rxe's counters: `undefined` when the driver has no such
 * counter or is not in DRIVER_COUNTER_NAMES. A device whose driver is unknown is taken for rxe.
 */
export function counterName(driver: string | undefined, name: RxeCounterName): string | undefined {
  return DRIVER_COUNTER_NAMES[driver ?? "rxe"]?.[name];
}

/**
 * Reads one of rxe's counters from `ctx.queryCounters()` under the device's own name
 * (`readCounter(await ctx.queryCounters(), ctx.device, "sent_pkts")`): `undefined` when the
 * device has no such counter.
 */
export function readCounter(
  counters: PortCounters,
  device: Pick<DeviceInfo, "driver">,
  name: RxeCounterName,
): number | undefined {
  const own = counterName(device.driver, name);
  return own === undefined ? undefined : counters[own];
}
