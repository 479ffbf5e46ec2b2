/** sim/RXE-FACTS.md §3: ibv_query_qp field by field through a whole life, with the probe's values. */
import { expect, it } from "vitest";
import {
  IBV_ACCESS_LOCAL_WRITE,
  IBV_ACCESS_REMOTE_ATOMIC,
  IBV_ACCESS_REMOTE_READ,
  IBV_ACCESS_REMOTE_WRITE,
  IBV_MTU_2048,
  IBV_MTU_256,
  IBV_QPS_ERR,
  IBV_QPS_INIT,
  IBV_QPS_RESET,
  IBV_QPS_RTR,
  IBV_QPS_RTS,
  IBV_QPS_SQD,
  IBV_QPT_RC,
  IBV_QPT_UD,
  IBV_QP_ACCESS_FLAGS,
  IBV_QP_AV,
  IBV_QP_CUR_STATE,
  IBV_QP_DEST_QPN,
  IBV_QP_MAX_DEST_RD_ATOMIC,
  IBV_QP_MAX_QP_RD_ATOMIC,
  IBV_QP_MIN_RNR_TIMER,
  IBV_QP_PATH_MTU,
  IBV_QP_PKEY_INDEX,
  IBV_QP_PORT,
  IBV_QP_QKEY,
  IBV_QP_RETRY_CNT,
  IBV_QP_RNR_RETRY,
  IBV_QP_RQ_PSN,
  IBV_QP_SQ_PSN,
  IBV_QP_STATE,
  IBV_QP_TIMEOUT,
} from "../constants.js";
import type { Qp } from "../backend.js";
import type { GidEntry } from "../types.js";
import { expectState, findGid, gidBytes, sameGid, scope, suite, toState } from "./harness.js";

const LW = IBV_ACCESS_LOCAL_WRITE;
const RW = IBV_ACCESS_REMOTE_WRITE;
const RR = IBV_ACCESS_REMOTE_READ;
const RA = IBV_ACCESS_REMOTE_ATOMIC;
const PROBE_CAP = { max_send_wr: 10, max_recv_wr: 5, max_send_sge: 3, max_recv_sge: 2, max_inline_data: 100 };
const ROUNDED_CAP = { max_send_wr: 15, max_recv_wr: 7, max_send_sge: 6, max_recv_sge: 2, max_inline_data: 100 };

function probeQp(type: number = IBV_QPT_RC, sq_sig_all = 0) {
  const s = scope();
  const ctx = s.open("rxe0");
  const pd = s.pd(ctx);
  const cq = s.cq(ctx);
  const qp = s.qp(pd, { send_cq: cq, qp_type: type, cap: PROBE_CAP, sq_sig_all });
  return { s, ctx, qp, cq, gid: findGid(ctx, "linklocal") };
}

function probeInit(qp: Qp) {
  qp.modify(
    { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: LW | RW | RR },
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
  );
}
function probeRtr(qp: Qp, gid: GidEntry) {
  qp.modify(
    {
      qp_state: IBV_QPS_RTR,
      path_mtu: IBV_MTU_2048,
      dest_qp_num: 0x12,
      rq_psn: 0xabcdef,
      max_dest_rd_atomic: 3,
      min_rnr_timer: 14,
      ah_attr: {
        is_global: 1,
        port_num: 1,
        sl: 3,
        static_rate: 2,
        grh: { dgid: gid.gid, sgid_index: gid.gid_index, traffic_class: 0x10, flow_label: 0x1234, hop_limit: 5 },
      },
    },
    IBV_QP_STATE |
      IBV_QP_AV |
      IBV_QP_PATH_MTU |
      IBV_QP_DEST_QPN |
      IBV_QP_RQ_PSN |
      IBV_QP_MAX_DEST_RD_ATOMIC |
      IBV_QP_MIN_RNR_TIMER,
  );
}
function probeRts(qp: Qp) {
  qp.modify(
    { qp_state: IBV_QPS_RTS, sq_psn: 0x123456, timeout: 17, retry_cnt: 5, rnr_retry: 6, max_rd_atomic: 5 },
    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
  );
}

suite("query_qp: a new RC QP in RESET (§3)", () => {
  it("qp_state 0, cur_qp_state 0, path_mtu 256 (1), everything else 0, cap rounded {15,7,6,2,100}", () => {
    const { qp } = probeQp();
    const { attr, init_attr } = qp.query();
    expect(attr).toMatchObject({
      qp_state: IBV_QPS_RESET,
      cur_qp_state: IBV_QPS_RESET,
      path_mtu: IBV_MTU_256,
      path_mig_state: 0,
      qkey: 0,
      rq_psn: 0,
      sq_psn: 0,
      dest_qp_num: 0,
      qp_access_flags: 0,
      cap: ROUNDED_CAP,
      pkey_index: 0,
      alt_pkey_index: 0,
      sq_draining: 0,
      max_rd_atomic: 0,
      max_dest_rd_atomic: 0,
      min_rnr_timer: 0,
      port_num: 0,
      timeout: 0,
      retry_cnt: 0,
      rnr_retry: 0,
      alt_port_num: 0,
      alt_timeout: 0,
    });
    expect(init_attr).toEqual({ qp_type: IBV_QPT_RC, sq_sig_all: 0, cap: ROUNDED_CAP });
  });

  it("ah_attr and alt_ah_attr read is_global 1 with port_num 0 and dgid ::", () => {
    const { qp } = probeQp();
    const { ah_attr, alt_ah_attr } = qp.query().attr;
    for (const ah of [ah_attr, alt_ah_attr]) {
      expect({ ...ah, grh: undefined }).toMatchObject({
        is_global: 1,
        port_num: 0,
        dlid: 0,
        sl: 0,
        static_rate: 0,
        src_path_bits: 0,
      });
      expect(gidBytes(ah.grh.dgid).every((b) => b === 0)).toBe(true);
      expect(ah.grh).toMatchObject({ sgid_index: 0, flow_label: 0, traffic_class: 0, hop_limit: 0 });
    }
  });

  it("init_attr.sq_sig_all is what the QP was created with", () => {
    const { qp } = probeQp(IBV_QPT_RC, 1);
    expect(qp.query().init_attr.sq_sig_all).toBe(1);
  });
});

suite("query_qp: RC through INIT, RTR, RTS, SQD, ERR and back to RESET (§3 probe)", () => {
  it("INIT: port_num 1 and qp_access_flags 7; cur_qp_state still 0", () => {
    const { qp } = probeQp();
    probeInit(qp);
    expect(qp.query().attr).toMatchObject({
      qp_state: IBV_QPS_INIT,
      cur_qp_state: 0,
      port_num: 1,
      qp_access_flags: 7,
      path_mtu: IBV_MTU_256,
      cap: ROUNDED_CAP,
    });
  });

  it("RTR: path_mtu 2048, dest 0x12, rq_psn 0xabcdef, max_dest_rd_atomic 3→4, min_rnr_timer 14", () => {
    const { qp, gid } = probeQp();
    probeInit(qp);
    probeRtr(qp, gid);
    expect(qp.query().attr).toMatchObject({
      qp_state: IBV_QPS_RTR,
      cur_qp_state: 0,
      path_mtu: IBV_MTU_2048,
      dest_qp_num: 0x12,
      rq_psn: 0xabcdef,
      sq_psn: 0,
      max_dest_rd_atomic: 4,
      max_rd_atomic: 0,
      min_rnr_timer: 14,
      timeout: 0,
      retry_cnt: 0,
      rnr_retry: 0,
      port_num: 1,
    });
  });

  it("RTR: the AV keeps dgid, sgid_index, flow_label, traffic_class; hop_limit reads 64, sl and static_rate 0", () => {
    const { qp, gid } = probeQp();
    probeInit(qp);
    probeRtr(qp, gid);
    const ah = qp.query().attr.ah_attr;
    expect(sameGid(ah.grh.dgid, gid.gid)).toBe(true);
    expect(ah.grh).toMatchObject({ sgid_index: gid.gid_index, flow_label: 0x1234, traffic_class: 0x10, hop_limit: 64 });
    expect({ ...ah, grh: undefined }).toMatchObject({ is_global: 1, port_num: 1, sl: 0, static_rate: 0, dlid: 0 });
  });

  it("RTS: sq_psn 0x123456, timeout 17, retry 5, rnr_retry 6, max_rd_atomic 5→8", () => {
    const { qp, gid } = probeQp();
    probeInit(qp);
    probeRtr(qp, gid);
    probeRts(qp);
    expect(qp.query().attr).toMatchObject({
      qp_state: IBV_QPS_RTS,
      cur_qp_state: 0,
      sq_psn: 0x123456,
      rq_psn: 0xabcdef,
      timeout: 17,
      retry_cnt: 5,
      rnr_retry: 6,
      max_rd_atomic: 8,
      max_dest_rd_atomic: 4,
      path_mig_state: 0,
      sq_draining: 0,
    });
  });

  it("max_rd_atomic 0 stays 0 (the power-of-2 rounding leaves 0 alone)", () => {
    const { qp, gid } = probeQp();
    probeInit(qp);
    probeRtr(qp, gid);
    qp.modify(
      { qp_state: IBV_QPS_RTS, sq_psn: 0, timeout: 14, retry_cnt: 7, rnr_retry: 7, max_rd_atomic: 0 },
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
    );
    expect(qp.query().attr.max_rd_atomic).toBe(0);
  });

  it("cur_qp_state is sticky: 3 after RTS→RTS with CUR_STATE, and still 3 through SQD, ERR and RESET", () => {
    const { qp, gid } = probeQp();
    probeInit(qp);
    probeRtr(qp, gid);
    probeRts(qp);
    qp.modify(
      { qp_state: IBV_QPS_RTS, cur_qp_state: IBV_QPS_RTS, min_rnr_timer: 20, qp_access_flags: RA },
      IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_ACCESS_FLAGS,
    );
    expect(qp.query().attr).toMatchObject({ qp_state: 3, cur_qp_state: 3, min_rnr_timer: 20, qp_access_flags: RA });
    const seen: [number, number][] = [];
    for (const st of [IBV_QPS_SQD, IBV_QPS_ERR, IBV_QPS_RESET]) {
      toState(qp, st);
      const a = qp.query().attr;
      seen.push([a.qp_state, a.cur_qp_state]);
    }
    expect(seen).toEqual([
      [IBV_QPS_SQD, 3],
      [IBV_QPS_ERR, 3],
      [IBV_QPS_RESET, 3],
    ]);
  });

  it("SQD with an empty SQ: qp_state 4 and sq_draining 0 at once", () => {
    const { qp, gid } = probeQp();
    probeInit(qp);
    probeRtr(qp, gid);
    probeRts(qp);
    toState(qp, IBV_QPS_SQD);
    expect(qp.query().attr).toMatchObject({ qp_state: IBV_QPS_SQD, sq_draining: 0 });
  });

  it("after ERR→RESET all attributes are kept (dest_qp_num, PSNs, timeouts, AV)", () => {
    const { qp, gid } = probeQp();
    probeInit(qp);
    probeRtr(qp, gid);
    probeRts(qp);
    const before = qp.query().attr;
    toState(qp, IBV_QPS_ERR);
    toState(qp, IBV_QPS_RESET);
    const after = qp.query().attr;
    expectState(qp, IBV_QPS_RESET);
    expect({ ...after, qp_state: 0 }).toEqual({ ...before, qp_state: 0 });
  });
});

suite("query_qp: UD (§3)", () => {
  it("after INIT/RTR/RTS with qkey 0x1234 and sq_psn 0x777: port 1, qkey, sq_psn, path_mtu 1, RC fields 0", () => {
    const { qp } = probeQp(IBV_QPT_UD);
    qp.modify(
      { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qkey: 0x1234 },
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
    );
    toState(qp, IBV_QPS_RTR);
    qp.modify({ qp_state: IBV_QPS_RTS, sq_psn: 0x777 }, IBV_QP_STATE | IBV_QP_SQ_PSN);
    expect(qp.query().attr).toMatchObject({
      qp_state: IBV_QPS_RTS,
      port_num: 1,
      qkey: 0x1234,
      sq_psn: 0x777,
      rq_psn: 0,
      path_mtu: IBV_MTU_256,
      dest_qp_num: 0,
      qp_access_flags: 0,
      max_rd_atomic: 0,
      max_dest_rd_atomic: 0,
      min_rnr_timer: 0,
      timeout: 0,
      retry_cnt: 0,
      rnr_retry: 0,
    });
  });
});
