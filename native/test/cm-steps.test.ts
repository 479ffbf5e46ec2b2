/**
 * Runs everywhere: how the native backend turns the QP states it sees around a librdmacm call
 * or event into librdmacm's own ibv_modify_qp steps (librdmacm v44 cma.c), and what the loader
 * says about an addon built without librdmacm.
 */
import { describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { RDMA_CM_EVENT_DISCONNECTED, RDMA_CM_EVENT_ESTABLISHED, RDMA_CM_EVENT_REJECTED } from "../../verbs/cm.js";
import * as v from "../../verbs/constants.js";
import { ADDON_PATH, RDMACM_MISSING, loadAddon, type NativeAddon } from "../addon.js";
import { expandChange, librdmacmSteps, nativeCm, type NativeWrappers } from "../cm.js";

const path = (during: string, from: number, to: number, event = -1, qpType: number = v.IBV_QPT_RC) =>
  expandChange(from, to, librdmacmSteps(during, event, qpType)).map((t) => [t.by, t.from, t.to]);

describe("librdmacm's QP steps from the observed states", () => {
  it("rdma_create_qp: RC to INIT; UD through INIT and RTR to RTS", () => {
    expect(path("rdma_create_qp", v.IBV_QPS_RESET, v.IBV_QPS_INIT)).toEqual([
      ["ucma_init_conn_qp", v.IBV_QPS_RESET, v.IBV_QPS_INIT],
    ]);
    expect(path("rdma_create_qp", v.IBV_QPS_RESET, v.IBV_QPS_RTS, -1, v.IBV_QPT_UD)).toEqual([
      ["ucma_init_ud_qp", v.IBV_QPS_RESET, v.IBV_QPS_INIT],
      ["ucma_init_ud_qp", v.IBV_QPS_INIT, v.IBV_QPS_RTR],
      ["ucma_init_ud_qp", v.IBV_QPS_RTR, v.IBV_QPS_RTS],
    ]);
  });

  it("rdma_accept and the connect response: INIT re-applied, then RTR and RTS (ERR when it failed)", () => {
    const ok = [
      ["ucma_modify_qp_rtr", v.IBV_QPS_INIT, v.IBV_QPS_INIT],
      ["ucma_modify_qp_rtr", v.IBV_QPS_INIT, v.IBV_QPS_RTR],
      ["ucma_modify_qp_rts", v.IBV_QPS_RTR, v.IBV_QPS_RTS],
    ];
    expect(path("rdma_accept", v.IBV_QPS_INIT, v.IBV_QPS_RTS)).toEqual(ok);
    expect(path("rdma_get_cm_event", v.IBV_QPS_INIT, v.IBV_QPS_RTS, RDMA_CM_EVENT_ESTABLISHED)).toEqual(ok);
    expect(path("rdma_accept", v.IBV_QPS_INIT, v.IBV_QPS_ERR)).toEqual([
      ...ok,
      ["ucma_modify_qp_err", v.IBV_QPS_RTS, v.IBV_QPS_ERR],
    ]);
  });

  it("rdma_disconnect and REJECTED: to ERR; a change librdmacm does not make there is reported as one step", () => {
    expect(path("rdma_disconnect", v.IBV_QPS_RTS, v.IBV_QPS_ERR)).toEqual([
      ["ucma_modify_qp_err", v.IBV_QPS_RTS, v.IBV_QPS_ERR],
    ]);
    expect(path("rdma_get_cm_event", v.IBV_QPS_INIT, v.IBV_QPS_ERR, RDMA_CM_EVENT_REJECTED)).toEqual([
      ["ucma_modify_qp_err", v.IBV_QPS_INIT, v.IBV_QPS_ERR],
    ]);
    expect(path("rdma_get_cm_event", v.IBV_QPS_RTS, v.IBV_QPS_SQD, RDMA_CM_EVENT_DISCONNECTED)).toEqual([
      ["librdmacm", v.IBV_QPS_RTS, v.IBV_QPS_SQD],
    ]);
  });
});

describe("the loader without librdmacm", () => {
  it("says the addon was built without librdmacm-dev and how to get it", () => {
    const fake = { RDMACM: false } as unknown as NativeAddon;
    const r = nativeCm(fake, {} as NativeWrappers);
    expect(r).toEqual({ cmUnavailableReason: RDMACM_MISSING });
    expect(RDMACM_MISSING).toMatch(/^rdma_cm unavailable: librdmacm-dev not installed when the addon was built/);
  });

  it.runIf(existsSync(ADDON_PATH) && existsSync("/usr/include/rdma/rdma_cma.h"))(
    "builds the CM classes where <rdma/rdma_cma.h> is installed",
    () => {
      const loaded = loadAddon();
      if (!("addon" in loaded)) throw new Error(loaded.missing);
      expect(loaded.addon.RDMACM).toBe(true);
      expect(typeof loaded.addon.createEventChannel).toBe("function");
    },
  );
});
