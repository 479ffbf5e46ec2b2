import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ADDON_PATH } from "../../native/addon.js";
import { loadNativeBackend } from "../../native/index.js";
import { doctor, formatFindings, systemProbe, type NativeProbe, type SystemProbe } from "./doctor.js";

const ADDON = "/repo/native/build/Release/verbslab_native.node";
const ENOSYS =
  "ibv_get_device_list: ENOSYS (38): this kernel has no RDMA support (no ib_uverbs in /sys/class/infiniband_verbs). " +
  "Real verbs run in the lab VM (scripts/rxe-vm/run.sh -- <command>), or on a Linux kernel with soft-RoCE: sudo modprobe rdma_rxe";

/** A machine made of files and command outputs. */
function machine(opts: {
  files?: Record<string, string>;
  dirs?: Record<string, string[]>;
  commands?: Record<string, { status: number; stdout?: string; stderr?: string }>;
  ipv4?: Record<string, string[]>;
  uid?: number;
  native?: Partial<NativeProbe>;
}): SystemProbe {
  const files = opts.files ?? {};
  const dirs = opts.dirs ?? {};
  return {
    kernel: "6.1.0-56-amd64",
    uid: opts.uid ?? 1000,
    readFile: (p) => files[p] ?? null,
    listDir: (p) => dirs[p] ?? null,
    exists: (p) => p in files || p in dirs,
    run: (cmd) => {
      const c = opts.commands?.[cmd];
      return c ? { status: c.status, stdout: c.stdout ?? "", stderr: c.stderr ?? "" } : null;
    },
    ipv4: () => opts.ipv4 ?? { lo: ["127.0.0.1"], eth0: ["192.168.1.5"] },
    native: () => ({
      addonPath: ADDON,
      built: true,
      loadError: null,
      backend: { unavailable: ENOSYS },
      ...opts.native,
    }),
  };
}

const LIMITS = (soft: string) =>
  `Limit Soft Limit Hard Limit Units\nMax locked memory         ${soft}     ${soft}     bytes\n`;

describe("verbslab doctor", () => {
  it("on a machine without RDMA: says so, what to use instead, and the rxe command it would need", () => {
    const f = doctor(
      machine({
        files: { "/usr/include/infiniband/verbs.h": "", "/proc/self/limits": LIMITS("8388608") },
        commands: {
          ldconfig: { status: 0, stdout: "libibverbs.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libibverbs.so.1" },
          ibv_devinfo: { status: 255, stderr: "Failed to get IB devices list: Function not implemented" },
          rdma: { status: 0 },
        },
      }),
    );
    const text = formatFindings(f);
    expect(f[0]).toMatchObject({ status: "ok", title: "libibverbs found (with headers)" });
    expect(f.find((x) => x.title.includes("no RDMA support"))).toMatchObject({ status: "fail" });
    expect(text).toContain("Function not implemented");
    expect(text).toContain("verbslab run --backend sim");
    const rxe = f.find((x) => x.title.startsWith("rdma_rxe"))!;
    expect(rxe.status).toBe("fail");
    expect(rxe.detail?.join()).toContain("sudo rdma link add rxe0 type rxe netdev eth0");
    expect(f.at(-1)).toMatchObject({ status: "warn", title: expect.stringContaining("memlock limit 8 MiB") });
  });

  it("without libibverbs: fails that finding with the apt command", () => {
    const f = doctor(machine({ commands: { ldconfig: { status: 0, stdout: "" } } }));
    expect(f[0]).toMatchObject({ status: "fail", fix: expect.stringContaining("libibverbs-dev") });
  });

  it("with rxe0 on veth0: ports, MTU, GIDs with type and netdev, and which index is RoCEv2 IPv4", () => {
    const port = "/sys/class/infiniband/rxe0/ports/1";
    const f = doctor(
      machine({
        uid: 0,
        native: { backend: { devices: ["rxe0"] } },
        dirs: {
          "/sys/class/infiniband": ["rxe0"],
          "/sys/class/infiniband/rxe0/ports": ["1"],
          [`${port}/gids`]: ["0", "1", "2"],
          "/sys/module/rdma_rxe": [],
          "/dev/infiniband": ["uverbs0"],
        },
        files: {
          [`${port}/state`]: "4: ACTIVE\n",
          [`${port}/link_layer`]: "Ethernet\n",
          [`${port}/gids/0`]: "fe80:0000:0000:0000:c8eb:fdff:fe2b:30f0\n",
          [`${port}/gid_attrs/types/0`]: "RoCE v2\n",
          [`${port}/gid_attrs/ndevs/0`]: "veth0\n",
          [`${port}/gids/1`]: "0000:0000:0000:0000:0000:ffff:0a00:0001\n",
          [`${port}/gid_attrs/types/1`]: "RoCE v2\n",
          [`${port}/gid_attrs/ndevs/1`]: "veth0\n",
          [`${port}/gids/2`]: "0000:0000:0000:0000:0000:0000:0000:0000\n",
          "/proc/self/limits": LIMITS("65536"),
        },
        commands: {
          ldconfig: { status: 0, stdout: "libibverbs.so.1" },
          ibv_devinfo: {
            status: 0,
            stdout:
              "hca_id:\trxe0\n\tport:\t1\n\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\tactive_mtu:\t\t1024 (3)\n\t\tlink_layer:\t\tEthernet\n",
          },
          rdma: { status: 0 },
        },
        ipv4: { lo: ["127.0.0.1"], veth0: ["10.0.0.1"], eth1: ["192.168.7.2"] },
      }),
    );
    const portFinding = f.find((x) => x.title.startsWith("rxe0 port 1"))!;
    expect(portFinding).toMatchObject({
      status: "ok",
      title: "rxe0 port 1: 4: ACTIVE, link layer Ethernet, active MTU 1024",
    });
    expect(portFinding.detail).toEqual([
      "GID[0] fe80:0000:0000:0000:c8eb:fdff:fe2b:30f0  RoCE v2  veth0",
      "GID[1] 0000:0000:0000:0000:0000:ffff:0a00:0001  RoCE v2  veth0  ← RoCEv2 IPv4",
    ]);
    expect(f.find((x) => x.title.includes("sgid_index"))?.title).toBe(
      "rxe0: use sgid_index 1 for RoCEv2 over IPv4 (10.0.0.1)",
    );
    const loaded = f.find((x) => x.title.startsWith("rdma_rxe is loaded"))!;
    expect(loaded).toMatchObject({ status: "ok", title: "rdma_rxe is loaded (rxe0)" });
    // veth0 already carries rxe0: only the free interface is offered.
    expect(loaded.detail).toEqual(["another device, if you want one: sudo rdma link add rxe1 type rxe netdev eth1"]);
    expect(f.find((x) => x.title.startsWith("memlock"))?.title).toContain("root");
    expect(f.some((x) => x.status === "fail")).toBe(false);
  });

  it("with the module available but not loaded: the modprobe and rdma link commands for this machine's interfaces", () => {
    const f = doctor(
      machine({
        dirs: { "/sys/class/infiniband": [] },
        files: {
          "/lib/modules/6.1.0-56-amd64/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko.xz": "",
          "/proc/self/limits": LIMITS("unlimited"),
        },
        commands: { ldconfig: { status: 0, stdout: "libibverbs.so.1" }, rdma: { status: 0 } },
        ipv4: { lo: ["127.0.0.1"], enp3s0: ["192.168.1.5"], ifb0: [] },
      }),
    );
    expect(f.find((x) => x.title === "RDMA is supported but no device exists yet")).toBeDefined();
    expect(f.find((x) => x.title === "rdma_rxe can be loaded but is not")?.fix).toBe(
      "sudo modprobe rdma_rxe && sudo rdma link add rxe0 type rxe netdev enp3s0",
    );
    expect(f.find((x) => x.title.startsWith("memlock"))).toMatchObject({
      status: "ok",
      title: "memlock limit unlimited",
    });
  });

  describe("the native addon", () => {
    const nativeOf = (native: Partial<NativeProbe>) =>
      doctor(machine({ native })).find((x) => x.title.startsWith("native "))!;

    it("built, loads, but ENOSYS: says the kernel has no RDMA, how to get real verbs, and to use the simulator here", () => {
      const f = nativeOf({});
      expect(f.status).toBe("fail");
      expect(f.title).toContain("native addon built and loads");
      expect(f.title).toContain("ENOSYS (38): this kernel has no RDMA support");
      expect(f.detail?.join(" ")).toMatch(/lab VM .*rdma_rxe/);
      expect(f.fix).toContain("--backend sim");
      expect(f.facts).toEqual({ native: { addon: ADDON, built: true, loads: true, unavailable: ENOSYS } });
    });

    it("not built: fails with the build command", () => {
      const f = nativeOf({ built: false, backend: { unavailable: "the native addon is not built" } });
      expect(f).toMatchObject({ status: "fail", fix: expect.stringContaining("npm run build:native") });
      expect(f.title).toContain(`${ADDON} is missing`);
      expect(f.facts).toMatchObject({ native: { built: false, loads: false } });
    });

    it("built but not loadable: gives the loader's reason", () => {
      const why = "the native addon could not be loaded (libibverbs.so.1: cannot open shared object file)";
      const f = nativeOf({ loadError: why, backend: { unavailable: why } });
      expect(f).toMatchObject({ status: "fail", title: "native addon built, but it does not load", detail: [why] });
      expect(f.facts).toMatchObject({ native: { built: true, loads: false } });
    });

    it("with a device: ok, naming the devices", () => {
      const f = nativeOf({ backend: { devices: ["rxe0"] } });
      expect(f).toMatchObject({ status: "ok", title: "native addon built and loads; the native backend sees rxe0" });
      expect(f.facts).toMatchObject({ native: { built: true, loads: true, devices: ["rxe0"] } });
    });

    it("on this machine: reports what the addon file and loadNativeBackend() say", () => {
      const f = doctor(systemProbe()).find((x) => x.title.startsWith("native "))!;
      const native = (f.facts as { native: { built: boolean; loads: boolean; unavailable?: string } }).native;
      expect(native.built).toBe(existsSync(ADDON_PATH));
      const r = loadNativeBackend();
      if ("unavailable" in r) {
        expect(f.status).toBe("fail");
        expect(native.unavailable).toBe(r.unavailable);
      } else expect(f.status).toBe("ok");
    });
  });
});
