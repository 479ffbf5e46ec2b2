/**
 * The loader on a machine without RDMA: the native backend must say why it is unavailable
 * and what to do, never throw. On this project's machines (no RDMA in the kernel at all)
 * the reason is ibv_get_device_list's ENOSYS; where the addon is not built, the reason is
 * the missing build. In the lab VM (rxe0 and rxe1 up) it must load and list them.
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ADDON_PATH, loadAddon } from "../addon.js";
import { loadNativeBackend, noDevicesReason } from "../index.js";
import { parseRdmaResQp } from "../rdma-res.js";

const built = existsSync(ADDON_PATH);
// ib_uverbs registers this class; without it libibverbs answers ENOSYS.
const kernelHasRdma = existsSync("/sys/class/infiniband_verbs");

describe("loadNativeBackend", () => {
  it.runIf(!built)("says the addon is not built and how to build it", () => {
    const r = loadNativeBackend();
    expect("unavailable" in r && r.unavailable).toMatch(/not built.*libibverbs-dev.*build:native/);
  });

  it.runIf(built && !kernelHasRdma)("reports ENOSYS from ibv_get_device_list and points to the lab VM", () => {
    const r = loadNativeBackend();
    expect("unavailable" in r).toBe(true);
    const reason = "unavailable" in r ? r.unavailable : "";
    expect(reason).toContain("ibv_get_device_list: ENOSYS (38)");
    expect(reason).toContain("rdma link add");
    expect(reason).toContain("scripts/rxe-vm/run.sh");
  });

  it.runIf(built && !kernelHasRdma)("gets the NULL device list from libibverbs itself, with errno ENOSYS", () => {
    const loaded = loadAddon();
    if (!("addon" in loaded)) throw new Error(loaded.missing);
    expect(loaded.addon.getDeviceList()).toEqual({ devices: [], errno: 38 });
  });

  it.runIf(built && kernelHasRdma)("loads and lists the lab VM's rxe devices", () => {
    const r = loadNativeBackend();
    if (!("backend" in r)) throw new Error(r.unavailable);
    const names = r.backend.getDeviceList().map((d) => d.name);
    expect(names).toEqual(expect.arrayContaining(["rxe0", "rxe1"]));
    expect(r.backend.kind).toBe("native");
  });

  it("names the errno in the reason for any other failure", () => {
    expect(noDevicesReason(19)).toMatch(/^ibv_get_device_list: ENODEV \(19\)/);
  });
});

describe("rdma res show qp -j", () => {
  it("parses the tool's JSON (as printed by iproute2 6.1 in the lab VM)", () => {
    const json =
      '[{"ifindex":0,"ifname":"rxe0","port":1,"lqpn":17,"rqpn":18,"type":"RC","state":"RTS","rq-psn":0,"sq-psn":1,' +
      '"path-mig-state":"MIGRATED","pdn":1,"pid":209,"comm":"node"},{"ifindex":0,"ifname":"rxe0","lqpn":1,"type":"GSI","state":"RTS","sq-psn":0}]';
    const qps = parseRdmaResQp(json);
    expect(qps[0]).toMatchObject({ dev: "rxe0", port: 1, lqpn: 17, rqpn: 18, type: "RC", state: "RTS", sq_psn: 1 });
    expect(qps[1]).toMatchObject({ lqpn: 1, type: "GSI", rqpn: undefined, pid: undefined });
  });
});
