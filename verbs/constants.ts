/**
 * Constants spelled and valued exactly as in rdma-core's <infiniband/verbs.h>, so what a
 * learner types here is what they will type in C. Each enum is one object (for looking a
 * value's name up) and its members are also exported one by one.
 */

export const ibv_qp_state = {
  IBV_QPS_RESET: 0,
  IBV_QPS_INIT: 1,
  IBV_QPS_RTR: 2,
  IBV_QPS_RTS: 3,
  IBV_QPS_SQD: 4,
  IBV_QPS_SQE: 5,
  IBV_QPS_ERR: 6,
  IBV_QPS_UNKNOWN: 7,
} as const;
export const {
  IBV_QPS_RESET,
  IBV_QPS_INIT,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPS_SQD,
  IBV_QPS_SQE,
  IBV_QPS_ERR,
  IBV_QPS_UNKNOWN,
} = ibv_qp_state;

export const ibv_qp_type = {
  IBV_QPT_RC: 2,
  IBV_QPT_UC: 3,
  IBV_QPT_UD: 4,
  IBV_QPT_RAW_PACKET: 8,
  IBV_QPT_XRC_SEND: 9,
  IBV_QPT_XRC_RECV: 10,
} as const;
export const { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV } =
  ibv_qp_type;

/** enum ibv_qp_attr_mask */
export const ibv_qp_attr_mask = {
  IBV_QP_STATE: 1 << 0,
  IBV_QP_CUR_STATE: 1 << 1,
  IBV_QP_EN_SQD_ASYNC_NOTIFY: 1 << 2,
  IBV_QP_ACCESS_FLAGS: 1 << 3,
  IBV_QP_PKEY_INDEX: 1 << 4,
  IBV_QP_PORT: 1 << 5,
  IBV_QP_QKEY: 1 << 6,
  IBV_QP_AV: 1 << 7,
  IBV_QP_PATH_MTU: 1 << 8,
  IBV_QP_TIMEOUT: 1 << 9,
  IBV_QP_RETRY_CNT: 1 << 10,
  IBV_QP_RNR_RETRY: 1 << 11,
  IBV_QP_RQ_PSN: 1 << 12,
  IBV_QP_MAX_QP_RD_ATOMIC: 1 << 13,
  IBV_QP_ALT_PATH: 1 << 14,
  IBV_QP_MIN_RNR_TIMER: 1 << 15,
  IBV_QP_SQ_PSN: 1 << 16,
  IBV_QP_MAX_DEST_RD_ATOMIC: 1 << 17,
  IBV_QP_PATH_MIG_STATE: 1 << 18,
  IBV_QP_CAP: 1 << 19,
  IBV_QP_DEST_QPN: 1 << 20,
  IBV_QP_RATE_LIMIT: 1 << 25,
} as const;
export const {
  IBV_QP_STATE,
  IBV_QP_CUR_STATE,
  IBV_QP_EN_SQD_ASYNC_NOTIFY,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_QKEY,
  IBV_QP_AV,
  IBV_QP_PATH_MTU,
  IBV_QP_TIMEOUT,
  IBV_QP_RETRY_CNT,
  IBV_QP_RNR_RETRY,
  IBV_QP_RQ_PSN,
  IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_QP_ALT_PATH,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_SQ_PSN,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_PATH_MIG_STATE,
  IBV_QP_CAP,
  IBV_QP_DEST_QPN,
  IBV_QP_RATE_LIMIT,
} = ibv_qp_attr_mask;

/** Every mask bit below IBV_QP_RATE_LIMIT: what `qp.query()` asks for by default. */
export const IBV_QP_ALL_ATTRS = (1 << 21) - 1;

/** enum ibv_access_flags */
export const ibv_access_flags = {
  IBV_ACCESS_LOCAL_WRITE: 1,
  IBV_ACCESS_REMOTE_WRITE: 1 << 1,
  IBV_ACCESS_REMOTE_READ: 1 << 2,
  IBV_ACCESS_REMOTE_ATOMIC: 1 << 3,
  IBV_ACCESS_MW_BIND: 1 << 4,
  IBV_ACCESS_ZERO_BASED: 1 << 5,
  IBV_ACCESS_ON_DEMAND: 1 << 6,
  IBV_ACCESS_HUGETLB: 1 << 7,
  IBV_ACCESS_RELAXED_ORDERING: 1 << 20,
} as const;
export const {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_ACCESS_REMOTE_READ,
  IBV_ACCESS_REMOTE_ATOMIC,
  IBV_ACCESS_MW_BIND,
  IBV_ACCESS_ZERO_BASED,
  IBV_ACCESS_ON_DEMAND,
  IBV_ACCESS_HUGETLB,
  IBV_ACCESS_RELAXED_ORDERING,
} = ibv_access_flags;

/** enum ibv_wr_opcode */
export const ibv_wr_opcode = {
  IBV_WR_RDMA_WRITE: 0,
  IBV_WR_RDMA_WRITE_WITH_IMM: 1,
  IBV_WR_SEND: 2,
  IBV_WR_SEND_WITH_IMM: 3,
  IBV_WR_RDMA_READ: 4,
  IBV_WR_ATOMIC_CMP_AND_SWP: 5,
  IBV_WR_ATOMIC_FETCH_AND_ADD: 6,
  IBV_WR_LOCAL_INV: 7,
  IBV_WR_BIND_MW: 8,
  IBV_WR_SEND_WITH_INV: 9,
} as const;
export const {
  IBV_WR_RDMA_WRITE,
  IBV_WR_RDMA_WRITE_WITH_IMM,
  IBV_WR_SEND,
  IBV_WR_SEND_WITH_IMM,
  IBV_WR_RDMA_READ,
  IBV_WR_ATOMIC_CMP_AND_SWP,
  IBV_WR_ATOMIC_FETCH_AND_ADD,
  IBV_WR_LOCAL_INV,
  IBV_WR_BIND_MW,
  IBV_WR_SEND_WITH_INV,
} = ibv_wr_opcode;

/** enum ibv_send_flags */
export const ibv_send_flags = {
  IBV_SEND_FENCE: 1,
  IBV_SEND_SIGNALED: 1 << 1,
  IBV_SEND_SOLICITED: 1 << 2,
  IBV_SEND_INLINE: 1 << 3,
  IBV_SEND_IP_CSUM: 1 << 4,
} as const;
export const { IBV_SEND_FENCE, IBV_SEND_SIGNALED, IBV_SEND_SOLICITED, IBV_SEND_INLINE, IBV_SEND_IP_CSUM } =
  ibv_send_flags;

/** enum ibv_wc_status */
export const ibv_wc_status = {
  IBV_WC_SUCCESS: 0,
  IBV_WC_LOC_LEN_ERR: 1,
  IBV_WC_LOC_QP_OP_ERR: 2,
  IBV_WC_LOC_EEC_OP_ERR: 3,
  IBV_WC_LOC_PROT_ERR: 4,
  IBV_WC_WR_FLUSH_ERR: 5,
  IBV_WC_MW_BIND_ERR: 6,
  IBV_WC_BAD_RESP_ERR: 7,
  IBV_WC_LOC_ACCESS_ERR: 8,
  IBV_WC_REM_INV_REQ_ERR: 9,
  IBV_WC_REM_ACCESS_ERR: 10,
  IBV_WC_REM_OP_ERR: 11,
  IBV_WC_RETRY_EXC_ERR: 12,
  IBV_WC_RNR_RETRY_EXC_ERR: 13,
  IBV_WC_LOC_RDD_VIOL_ERR: 14,
  IBV_WC_REM_INV_RD_REQ_ERR: 15,
  IBV_WC_REM_ABORT_ERR: 16,
  IBV_WC_INV_EECN_ERR: 17,
  IBV_WC_INV_EEC_STATE_ERR: 18,
  IBV_WC_FATAL_ERR: 19,
  IBV_WC_RESP_TIMEOUT_ERR: 20,
  IBV_WC_GENERAL_ERR: 21,
} as const;
export const {
  IBV_WC_SUCCESS,
  IBV_WC_LOC_LEN_ERR,
  IBV_WC_LOC_QP_OP_ERR,
  IBV_WC_LOC_EEC_OP_ERR,
  IBV_WC_LOC_PROT_ERR,
  IBV_WC_WR_FLUSH_ERR,
  IBV_WC_MW_BIND_ERR,
  IBV_WC_BAD_RESP_ERR,
  IBV_WC_LOC_ACCESS_ERR,
  IBV_WC_REM_INV_REQ_ERR,
  IBV_WC_REM_ACCESS_ERR,
  IBV_WC_REM_OP_ERR,
  IBV_WC_RETRY_EXC_ERR,
  IBV_WC_RNR_RETRY_EXC_ERR,
  IBV_WC_LOC_RDD_VIOL_ERR,
  IBV_WC_REM_INV_RD_REQ_ERR,
  IBV_WC_REM_ABORT_ERR,
  IBV_WC_INV_EECN_ERR,
  IBV_WC_INV_EEC_STATE_ERR,
  IBV_WC_FATAL_ERR,
  IBV_WC_RESP_TIMEOUT_ERR,
  IBV_WC_GENERAL_ERR,
} = ibv_wc_status;

/** enum ibv_wc_opcode */
export const ibv_wc_opcode = {
  IBV_WC_SEND: 0,
  IBV_WC_RDMA_WRITE: 1,
  IBV_WC_RDMA_READ: 2,
  IBV_WC_COMP_SWAP: 3,
  IBV_WC_FETCH_ADD: 4,
  IBV_WC_BIND_MW: 5,
  IBV_WC_LOCAL_INV: 6,
  IBV_WC_RECV: 128,
  IBV_WC_RECV_RDMA_WITH_IMM: 129,
} as const;
export const {
  IBV_WC_SEND,
  IBV_WC_RDMA_WRITE,
  IBV_WC_RDMA_READ,
  IBV_WC_COMP_SWAP,
  IBV_WC_FETCH_ADD,
  IBV_WC_BIND_MW,
  IBV_WC_LOCAL_INV,
  IBV_WC_RECV,
  IBV_WC_RECV_RDMA_WITH_IMM,
} = ibv_wc_opcode;

/** enum ibv_wc_flags */
export const ibv_wc_flags = {
  IBV_WC_GRH: 1,
  IBV_WC_WITH_IMM: 1 << 1,
  IBV_WC_IP_CSUM_OK: 1 << 2,
  IBV_WC_WITH_INV: 1 << 3,
} as const;
export const { IBV_WC_GRH, IBV_WC_WITH_IMM, IBV_WC_IP_CSUM_OK, IBV_WC_WITH_INV } = ibv_wc_flags;

/** enum ibv_mtu */
export const ibv_mtu = {
  IBV_MTU_256: 1,
  IBV_MTU_512: 2,
  IBV_MTU_1024: 3,
  IBV_MTU_2048: 4,
  IBV_MTU_4096: 5,
} as const;
export const { IBV_MTU_256, IBV_MTU_512, IBV_MTU_1024, IBV_MTU_2048, IBV_MTU_4096 } = ibv_mtu;

/** Bytes in a path MTU enum value (IBV_MTU_1024 → 1024). */
export function mtuBytes(mtu: number): number {
  return 128 << mtu;
}

/** enum ibv_port_state */
export const ibv_port_state = {
  IBV_PORT_NOP: 0,
  IBV_PORT_DOWN: 1,
  IBV_PORT_INIT: 2,
  IBV_PORT_ARMED: 3,
  IBV_PORT_ACTIVE: 4,
  IBV_PORT_ACTIVE_DEFER: 5,
} as const;
export const { IBV_PORT_NOP, IBV_PORT_DOWN, IBV_PORT_INIT, IBV_PORT_ARMED, IBV_PORT_ACTIVE, IBV_PORT_ACTIVE_DEFER } =
  ibv_port_state;

/** enum ibv_mig_state */
export const ibv_mig_state = { IBV_MIG_MIGRATED: 0, IBV_MIG_REARM: 1, IBV_MIG_ARMED: 2 } as const;
export const { IBV_MIG_MIGRATED, IBV_MIG_REARM, IBV_MIG_ARMED } = ibv_mig_state;

/** enum ibv_event_type */
export const ibv_event_type = {
  IBV_EVENT_CQ_ERR: 0,
  IBV_EVENT_QP_FATAL: 1,
  IBV_EVENT_QP_REQ_ERR: 2,
  IBV_EVENT_QP_ACCESS_ERR: 3,
  IBV_EVENT_COMM_EST: 4,
  IBV_EVENT_SQ_DRAINED: 5,
  IBV_EVENT_PATH_MIG: 6,
  IBV_EVENT_PATH_MIG_ERR: 7,
  IBV_EVENT_DEVICE_FATAL: 8,
  IBV_EVENT_PORT_ACTIVE: 9,
  IBV_EVENT_PORT_ERR: 10,
  IBV_EVENT_LID_CHANGE: 11,
  IBV_EVENT_PKEY_CHANGE: 12,
  IBV_EVENT_SM_CHANGE: 13,
  IBV_EVENT_SRQ_ERR: 14,
  IBV_EVENT_SRQ_LIMIT_REACHED: 15,
  IBV_EVENT_QP_LAST_WQE_REACHED: 16,
  IBV_EVENT_CLIENT_REREGISTER: 17,
  IBV_EVENT_GID_CHANGE: 18,
  IBV_EVENT_WQ_FATAL: 19,
} as const;
export const {
  IBV_EVENT_CQ_ERR,
  IBV_EVENT_QP_FATAL,
  IBV_EVENT_QP_REQ_ERR,
  IBV_EVENT_QP_ACCESS_ERR,
  IBV_EVENT_COMM_EST,
  IBV_EVENT_SQ_DRAINED,
  IBV_EVENT_PATH_MIG,
  IBV_EVENT_PATH_MIG_ERR,
  IBV_EVENT_DEVICE_FATAL,
  IBV_EVENT_PORT_ACTIVE,
  IBV_EVENT_PORT_ERR,
  IBV_EVENT_LID_CHANGE,
  IBV_EVENT_PKEY_CHANGE,
  IBV_EVENT_SM_CHANGE,
  IBV_EVENT_SRQ_ERR,
  IBV_EVENT_SRQ_LIMIT_REACHED,
  IBV_EVENT_QP_LAST_WQE_REACHED,
  IBV_EVENT_CLIENT_REREGISTER,
  IBV_EVENT_GID_CHANGE,
  IBV_EVENT_WQ_FATAL,
} = ibv_event_type;

/** Link layer, node type, transport, GID type and atomic capability values. */
export const IBV_LINK_LAYER_UNSPECIFIED = 0;
export const IBV_LINK_LAYER_INFINIBAND = 1;
export const IBV_LINK_LAYER_ETHERNET = 2;
export const IBV_NODE_CA = 1;
export const IBV_TRANSPORT_IB = 0;
export const IBV_GID_TYPE_IB = 0;
export const IBV_GID_TYPE_ROCE_V1 = 1;
export const IBV_GID_TYPE_ROCE_V2 = 2;
export const IBV_ATOMIC_NONE = 0;
export const IBV_ATOMIC_HCA = 1;
export const IBV_ATOMIC_GLOB = 2;

/** The enum groups by the name a learner would search for. */
export const enums = {
  ibv_qp_state,
  ibv_qp_type,
  ibv_qp_attr_mask,
  ibv_access_flags,
  ibv_wr_opcode,
  ibv_send_flags,
  ibv_wc_status,
  ibv_wc_opcode,
  ibv_wc_flags,
  ibv_mtu,
  ibv_port_state,
  ibv_mig_state,
  ibv_event_type,
} as const;

/**
 * The RNR timer table (IBA table 45, rxe's rnrnak_usec[]): the wait in µs that an RNR NAK's
 * timer field, the responder's min_rnr_timer, asks for. Index 0 is the longest, 655.36 ms.
 */
export const RNR_TIMER_USEC: readonly number[] = [
  655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360,
  20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
];

/** The constant's name for `value` in one enum (`nameOf(ibv_qp_state, 3)` → "IBV_QPS_RTS"). */
export function nameOf(group: Readonly<Record<string, number>>, value: number): string {
  for (const [name, v] of Object.entries(group)) if (v === value) return name;
  return String(value);
}

/** The names of the bits set in a flag word (`flagNames(ibv_qp_attr_mask, 0x31)`). Unknown bits come back as hex. */
export function flagNames(group: Readonly<Record<string, number>>, flags: number): string[] {
  const out: string[] = [];
  let rest = flags >>> 0;
  for (const [name, bit] of Object.entries(group)) {
    if (bit !== 0 && (rest & bit) === bit) {
      out.push(name);
      rest &= ~bit >>> 0;
    }
  }
  if (rest !== 0) out.push(`0x${rest.toString(16)}`);
  return out;
}
