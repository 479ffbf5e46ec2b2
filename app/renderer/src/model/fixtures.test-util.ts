/** Plain QP views for pane tests: two RC QPs on rxe0 as a loopback lesson creates them. */
import { IBV_QPT_RC, IBV_QPS_RESET, IBV_MTU_1024 } from "../../../../verbs/constants.js";
import type { QpAttr } from "../../../../verbs/types.js";
import type { QpView } from "./view.js";

export function attr(over: Partial<QpAttr> = {}): QpAttr {
  const ah = {
    grh: { dgid: "::", flow_label: 0, sgid_index: 0, hop_limit: 0, traffic_class: 0 },
    dlid: 0,
    sl: 0,
    src_path_bits: 0,
    static_rate: 0,
    is_global: 0,
    port_num: 0,
  };
  return {
    qp_state: IBV_QPS_RESET,
    cur_qp_state: IBV_QPS_RESET,
    path_mtu: IBV_MTU_1024,
    path_mig_state: 0,
    qkey: 0,
    rq_psn: 0,
    sq_psn: 0,
    dest_qp_num: 0,
    qp_access_flags: 0,
    cap: { max_send_wr: 8, max_recv_wr: 8, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 },
    ah_attr: ah,
    alt_ah_attr: ah,
    pkey_index: 0,
    alt_pkey_index: 0,
    en_sqd_async_notify: 0,
    sq_draining: 0,
    max_rd_atomic: 0,
    max_dest_rd_atomic: 0,
    min_rnr_timer: 0,
    port_num: 1,
    timeout: 0,
    retry_cnt: 0,
    rnr_retry: 0,
    alt_port_num: 0,
    alt_timeout: 0,
    rate_limit: 0,
    ...over,
  };
}

export function qpView(qp_num: number, over: Partial<QpView> = {}, a: Partial<QpAttr> = {}): QpView {
  const at = attr(a);
  return {
    handle: `qp${qp_num}`,
    name: `QP 0x${qp_num.toString(16)}`,
    qp_num,
    qp_type: IBV_QPT_RC,
    device: "rxe0",
    state: at.qp_state,
    query: { attr: at, init_attr: { qp_type: IBV_QPT_RC, sq_sig_all: 0, cap: at.cap } },
    changed: [],
    sqOutstanding: 0,
    rqOutstanding: 0,
    pd: "pd0",
    ...over,
  };
}
