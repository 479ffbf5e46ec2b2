import { describe, expect, it } from "vitest";
import { IBV_QPS_ERR, IBV_QPS_INIT, IBV_QPS_RESET, IBV_QPS_RTR, IBV_QPS_RTS } from "../../../../verbs/constants.js";
import {
  RDMA_CM_EVENT_REJECTED,
  RDMA_CM_EVENT_UNREACHABLE,
  RDMA_CM_EVENT_ADDR_ERROR,
  RDMA_PS_TCP,
  RDMA_PS_UDP,
} from "../../../../verbs/cm.js";
import { buildView } from "./reduce.js";
import { cmStatusName } from "./format.js";
import { privateDataOf } from "./cm-log.js";
import { connectAndDisconnect, eventsOf, rejectWithPrivateData } from "../../../session/cm-programs.test-util.js";
import lesson19 from "../../../../lessons/19-datagrams-through-the-cm/step-1.solution.js";
import type { CmLogRow } from "./view.js";

const eventNames = (rows: CmLogRow[]) => rows.flatMap((r) => (r.kind === "event" ? [r.event] : []));

describe("the CM log", () => {
  it("puts the child id of a CONNECT_REQUEST under its listening id, each id with its own events", async () => {
    const view = buildView({ events: await eventsOf(connectAndDisconnect) });
    const [listener, client] = view.cm;
    expect(view.cm).toHaveLength(2);
    expect(listener.listening).toBe(true);
    expect(listener.local).toBe("10.77.0.2:7471");
    expect(eventNames(listener.rows)).toEqual(["RDMA_CM_EVENT_CONNECT_REQUEST"]);
    expect(listener.children).toHaveLength(1);
    const child = listener.children[0];
    expect(child.parent?.name).toBe(listener.name);
    expect(listener.rows.find((r) => r.kind === "event")).toMatchObject({ child: child.name, acked: true });
    expect(child.name).not.toBe(listener.name);
    expect(eventNames(child.rows)).toEqual(["RDMA_CM_EVENT_ESTABLISHED", "RDMA_CM_EVENT_DISCONNECTED"]);
    expect(child.rows.filter((r) => r.kind === "call").map((r) => r.kind === "call" && r.verb)).toEqual([
      "rdma_create_qp",
      "rdma_accept",
      "rdma_disconnect",
    ]);
    expect(eventNames(client.rows)).toEqual([
      "RDMA_CM_EVENT_ADDR_RESOLVED",
      "RDMA_CM_EVENT_ROUTE_RESOLVED",
      "RDMA_CM_EVENT_ESTABLISHED",
      "RDMA_CM_EVENT_DISCONNECTED",
    ]);
    expect(client.remote).toBe("10.77.0.2:7471");
    expect(client.ps).toBe("RDMA_PS_TCP");
    // The same name in the transcript's "on" column as in the CM pane: one name per object.
    const accept = view.transcript.find((r) => r.verb === "rdma_accept");
    expect(accept?.on).toBe(child.name);
  });

  it("records on each QP the transitions librdmacm made, and where", async () => {
    const view = buildView({ events: await eventsOf(connectAndDisconnect) });
    const moves = view.qps.map((q) => (q.cmMoves ?? []).map((m) => `${m.from}>${m.to} ${m.by} in ${m.during}`));
    expect(moves[0]).toEqual([
      `${IBV_QPS_RESET}>${IBV_QPS_INIT} ucma_init_conn_qp in rdma_create_qp`,
      `${IBV_QPS_INIT}>${IBV_QPS_RTR} ucma_modify_qp_rtr in rdma_get_cm_event`,
      `${IBV_QPS_RTR}>${IBV_QPS_RTS} ucma_modify_qp_rts in rdma_get_cm_event`,
      expect.stringMatching(new RegExp(`^${IBV_QPS_RTS}>${IBV_QPS_ERR} .* in rdma_disconnect$`)),
    ]);
    expect(moves[1].slice(0, 3)).toEqual([
      `${IBV_QPS_RESET}>${IBV_QPS_INIT} ucma_init_conn_qp in rdma_create_qp`,
      `${IBV_QPS_INIT}>${IBV_QPS_RTR} ucma_modify_qp_rtr in rdma_accept`,
      `${IBV_QPS_RTR}>${IBV_QPS_RTS} ucma_modify_qp_rts in rdma_accept`,
    ]);
  });

  it("a REJECTED event: status 28 by name, the private data cut where the zeros start", async () => {
    const view = buildView({ events: await eventsOf(rejectWithPrivateData) });
    const client = view.cm[1];
    const rej = client.rows.find((r) => r.kind === "event" && r.event === "RDMA_CM_EVENT_REJECTED");
    expect(rej).toMatchObject({ status: 28, statusName: "IB_CM_REJ_CONSUMER_DEFINED", bad: true, acked: true });
    const pd = rej?.kind === "event" ? rej.privateData : undefined;
    expect(pd && new TextDecoder().decode(pd.bytes)).toBe("busy, try later");
    expect(pd).toMatchObject({ len: 148, zeros: 133 });
    // librdmacm moved the client's QP to ERR when it handed the event out.
    expect(rej?.moves).toEqual([{ qp: "QP 0x11", from: IBV_QPS_INIT, to: IBV_QPS_ERR }]);
    // rdma_destroy_qp took the client's QP with it: the diagram has no QP left.
    expect(view.qps).toEqual([]);
    const child = view.cm[0].children[0];
    expect(child.rows.map((r) => r.kind === "call" && `${r.verb} ${r.detail ?? ""}`)).toEqual([
      "rdma_reject private_data 15 B",
      "rdma_destroy_id ",
    ]);
    expect(child.destroyed).toBe(true);
  });

  it("RDMA_PS_UDP (lesson 19): the ESTABLISHED event says how to reach the peer (qp_num, qkey)", async () => {
    const view = buildView({ events: await eventsOf(lesson19 as never) });
    const ids = view.cm.flatMap((i) => [i, ...i.children]);
    expect(ids.every((i) => i.ps === "RDMA_PS_UDP")).toBe(true);
    const est = ids.flatMap((i) => i.rows).find((r) => r.kind === "event" && r.event === "RDMA_CM_EVENT_ESTABLISHED");
    expect(est?.kind === "event" && est.ud).toEqual({ qp_num: expect.any(Number), qkey: 0x01234567 });
  });

  it("names statuses as the headers do", () => {
    expect(cmStatusName(RDMA_CM_EVENT_REJECTED, 28, RDMA_PS_TCP)).toBe("IB_CM_REJ_CONSUMER_DEFINED");
    expect(cmStatusName(RDMA_CM_EVENT_REJECTED, 8, RDMA_PS_TCP)).toBe("IB_CM_REJ_INVALID_SERVICE_ID");
    expect(cmStatusName(RDMA_CM_EVENT_ADDR_ERROR, -110, RDMA_PS_TCP)).toBe("-ETIMEDOUT");
    expect(cmStatusName(RDMA_CM_EVENT_UNREACHABLE, -110, RDMA_PS_TCP)).toBe("-ETIMEDOUT");
    expect(cmStatusName(RDMA_CM_EVENT_UNREACHABLE, 2, RDMA_PS_UDP)).toBe("IB_SIDR_REJECT");
    expect(cmStatusName(RDMA_CM_EVENT_UNREACHABLE, 2, RDMA_PS_TCP)).toBeUndefined();
    expect(cmStatusName(RDMA_CM_EVENT_REJECTED, 0, RDMA_PS_TCP)).toBeUndefined();
  });

  it("private data: trailing zeros collapse, zeros inside stay", () => {
    expect(privateDataOf(new Uint8Array([1, 0, 2, 0, 0]))).toEqual({
      len: 5,
      bytes: new Uint8Array([1, 0, 2]),
      zeros: 2,
    });
    expect(privateDataOf(new Uint8Array(56))).toEqual({ len: 56, bytes: new Uint8Array(0), zeros: 56 });
  });
});
