/**
 * UD through rdma_cm (RDMA_PS_UDP): rdma_create_qp brings the QP to RTS at once with
 * RDMA_UDP_QKEY; "connecting" is a SIDR exchange whose ESTABLISHED event carries the
 * ah_attr, qp_num and qkey to send with. Failures come back as UNREACHABLE with the SIDR status.
 */
import { expect, it } from "vitest";
import {
  RDMA_CM_EVENT_CONNECT_REQUEST,
  RDMA_CM_EVENT_ESTABLISHED,
  RDMA_CM_EVENT_UNREACHABLE,
  RDMA_PS_UDP,
  RDMA_UDP_QKEY,
  ib_cm_sidr_status,
} from "../cm.js";
import {
  IBV_QPS_ERR,
  IBV_QPS_RTS,
  IBV_QPT_UD,
  IBV_WC_GRH,
  IBV_WC_RECV,
  IBV_WC_SUCCESS,
  IBV_WR_SEND,
} from "../constants.js";
import { PARAM, RXE1_IP, bytes, channel, createCmQp, expectEvent, freshPort, listen, resolve } from "./cm-harness.js";
import { B, expectState, expectVerbsError, scope, suite, waitWc } from "./harness.js";

const cmSuite = (title: string, body: () => void) =>
  suite(title, () => {
    if (B().cm) body();
    else it.skip(`no rdma_cm on this backend: ${B().cmUnavailableReason}`, () => {});
  });

cmSuite("rdma_cm UD (RDMA_PS_UDP)", () => {
  it("rdma_create_qp leaves a UD QP in RTS with qkey RDMA_UDP_QKEY", async () => {
    const s = scope();
    const ch = channel(s);
    const id = await resolve(ch, freshPort(), { ps: RDMA_PS_UDP });
    const c = createCmQp(s, id, IBV_QPT_UD);
    expectState(c.qp, IBV_QPS_RTS);
    const a = c.qp.query().attr;
    expect({ qkey: a.qkey, sq_psn: a.sq_psn }).toEqual({ qkey: RDMA_UDP_QKEY, sq_psn: 0 });
  });

  it("ESTABLISHED carries the server's qp_num, qkey and an ah_attr to rxe1; a datagram sent with them arrives", async () => {
    const s = scope();
    const sch = channel(s);
    const cch = channel(s);
    const port = freshPort();
    listen(sch, port, { ps: RDMA_PS_UDP });
    const id = await resolve(cch, port, { ps: RDMA_PS_UDP });
    const c = createCmQp(s, id, IBV_QPT_UD);
    id.connect({ ...PARAM, private_data: bytes("udp hello") });
    const req = await expectEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
    expect(req.param.ud!.private_data_len).toBe(180);
    // A SIDR request's id arrives bound to rxe1 but without a path (RC children have one).
    expect(req.id.verbs?.device.name).toBe("rxe1");
    expect(req.id.route.num_paths).toBe(0);
    expect(new TextDecoder().decode(req.param.ud!.private_data.subarray(0, 9))).toBe("udp hello");
    const v = createCmQp(s, req.id, IBV_QPT_UD);
    req.ack();
    req.id.accept({ private_data: bytes("welcome") });
    const e = await expectEvent(cch, RDMA_CM_EVENT_ESTABLISHED);
    const ud = e.param.ud!;
    expect({ qp_num: ud.qp_num, qkey: ud.qkey, is_global: ud.ah_attr.is_global, dgid: ud.ah_attr.grh.dgid }).toEqual({
      qp_num: v.qp.qp_num,
      qkey: RDMA_UDP_QKEY,
      is_global: 1,
      dgid: `::ffff:${RXE1_IP}`,
    });
    expect(ud.private_data_len).toBe(136);
    expect(new TextDecoder().decode(ud.private_data.subarray(0, 7))).toBe("welcome");
    e.ack();

    const ah = c.pd.createAh(ud.ah_attr);
    s.defer(() => ah.destroy());
    const smr = v.pd.regMr(256, 1);
    const cmr = c.pd.regMr(64, 1);
    s.defer(() => smr.dereg());
    s.defer(() => cmr.dereg());
    cmr.bytes.set(bytes("datagram"));
    v.qp.postRecv({ wr_id: 1, sg_list: [smr.sge()] });
    c.qp.postSend({
      wr_id: 2,
      opcode: IBV_WR_SEND,
      sg_list: [cmr.sge(0, 8)],
      ud: { ah, remote_qpn: ud.qp_num, remote_qkey: ud.qkey },
    });
    await waitWc(c.cq);
    const [rw] = await waitWc(v.cq);
    expect([rw.status, rw.opcode, rw.byte_len, rw.wc_flags & IBV_WC_GRH]).toEqual([
      IBV_WC_SUCCESS,
      IBV_WC_RECV,
      48,
      IBV_WC_GRH,
    ]);
    expect(new TextDecoder().decode(smr.bytes.subarray(40, 48))).toBe("datagram");
  });

  it("nobody listening: UNREACHABLE with status IB_SIDR_UNSUPPORTED (1)", async () => {
    const s = scope();
    const ch = channel(s);
    const id = await resolve(ch, freshPort(), { ps: RDMA_PS_UDP });
    createCmQp(s, id, IBV_QPT_UD);
    id.connect(PARAM);
    const e = await expectEvent(ch, RDMA_CM_EVENT_UNREACHABLE, 5000);
    expect(e.status).toBe(ib_cm_sidr_status.IB_SIDR_UNSUPPORTED);
    expect(e.param.ud!.private_data_len).toBe(136);
    expect(e.param.ud!.private_data.every((b) => b === 0)).toBe(true);
  });

  it("rdma_accept with 137 bytes: EINVAL, the server's QP in ERR, the client UNREACHABLE 2; the request is gone", async () => {
    const s = scope();
    const sch = channel(s);
    const cch = channel(s);
    const port = freshPort();
    listen(sch, port, { ps: RDMA_PS_UDP });
    const id = await resolve(cch, port, { ps: RDMA_PS_UDP });
    const c = createCmQp(s, id, IBV_QPT_UD);
    id.connect(PARAM);
    const req = await expectEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
    const v = createCmQp(s, req.id, IBV_QPT_UD);
    req.ack();
    expectVerbsError(() => req.id.accept({ private_data: new Uint8Array(137) }), "EINVAL");
    // librdmacm moves the QP to ERR whenever the kernel refuses an accept (ucma_modify_qp_err).
    expectState(v.qp, IBV_QPS_ERR);
    const e = await expectEvent(cch, RDMA_CM_EVENT_UNREACHABLE);
    expect(e.status).toBe(ib_cm_sidr_status.IB_SIDR_REJECT);
    expect(e.param.ud!.private_data.every((b) => b === 0)).toBe(true);
    // The kernel rejected the request: a fitting accept finds nothing to answer.
    expectVerbsError(() => req.id.accept({ private_data: new Uint8Array(136) }), "EINVAL");
    expectState(c.qp, IBV_QPS_RTS);
  });

  it("rdma_reject: UNREACHABLE with status IB_SIDR_REJECT (2) and the server's private data", async () => {
    const s = scope();
    const sch = channel(s);
    const cch = channel(s);
    const port = freshPort();
    listen(sch, port, { ps: RDMA_PS_UDP });
    const id = await resolve(cch, port, { ps: RDMA_PS_UDP });
    const c = createCmQp(s, id, IBV_QPT_UD);
    id.connect(PARAM);
    const req = await expectEvent(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
    req.ack();
    req.id.reject(bytes("full"));
    const e = await expectEvent(cch, RDMA_CM_EVENT_UNREACHABLE);
    expect(e.status).toBe(ib_cm_sidr_status.IB_SIDR_REJECT);
    expect(e.param.ud!.private_data_len).toBe(136);
    expect(new TextDecoder().decode(e.param.ud!.private_data.subarray(0, 4))).toBe("full");
    expect(e.param.ud!.private_data.subarray(4).every((b) => b === 0)).toBe(true);
    // A UD reject leaves the client's QP alone (librdmacm modifies no QP on UNREACHABLE).
    expectState(c.qp, IBV_QPS_RTS);
  });
});
