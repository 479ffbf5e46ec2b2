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
  links?: Record<string, string>;
  stats?: Record<string, { mode: number; uid: number; gid: number }>;
  groups?: number[];
}): SystemProbe {
  const files = opts.files ?? {};
  const dirs = opts.dirs ?? {};
  return {
    kernel: "6.1.0-56-amd64",
    uid: opts.uid ?? 1000,
    user: "alice",
    groups: opts.groups ?? [1000],
    stat: (p) => opts.stats?.[p] ?? null,
    readFile: (p) => files[p] ?? null,
    listDir: (p) => dirs[p] ?? null,
    exists: (p) => p in files || p in dirs,
    readLink: (p) => opts.links?.[p] ?? null,
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
    // rxe is what the course's facts are about: no word on rxe-only lessons.
    expect(formatFindings(f)).not.toContain("facts about rxe");
  });

  it("with a ConnectX (mlx5) NIC: names the lessons that carry rxe-only facts, and their steps", () => {
    const port = "/sys/class/infiniband/mlx5_0/ports/1";
    const f = doctor(
      machine({
        native: { backend: { devices: ["mlx5_0"] } },
        dirs: {
          "/sys/class/infiniband": ["mlx5_0"],
          "/sys/class/infiniband/mlx5_0/ports": ["1"],
          [`${port}/gids`]: ["0"],
        },
        files: {
          [`${port}/state`]: "4: ACTIVE\n",
          [`${port}/link_layer`]: "Ethernet\n",
          [`${port}/gids/0`]: "fe80:0000:0000:0000:0e42:a1ff:fe00:0001\n",
        },
        links: { "/sys/class/infiniband/mlx5_0/device/driver": "../../../../bus/pci/drivers/mlx5_core" },
      }),
    );
    const facts = f.find((x) => x.title.startsWith("mlx5_0 (mlx5)"))!;
    expect(facts.title).toMatch(/lesson\(s\) state facts about rxe that mlx5 may not share/);
    // Lesson 6 step 1 expects rxe's IBV_WC_GRH on an RC receive; lesson 4 step 1, rxe's rounding.
    expect(facts.detail).toContain("06-first-message (step 1): First message: SEND and RECV");
    expect(facts.detail?.some((d) => d.startsWith("04-completion-queues (step 1)"))).toBe(true);
    // A lesson with no rxe fact (lesson 8: READ and atomics) is not listed.
    expect(facts.detail?.some((d) => d.startsWith("08-"))).toBe(false);
  });

  it("a device whose driver cannot be told is said to be judged as rxe", () => {
    const f = doctor(machine({ dirs: { "/sys/class/infiniband": ["weird0"] } }));
    expect(f.find((x) => x.title.startsWith("weird0"))?.title).toContain("lessons judge it as rxe");
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

  describe("the pain points of a RoCE setup", () => {
    const UV = "/dev/infiniband/uverbs0";
    const withUverbs = (mode: number, gid: number, groups: number[], uid = 1000) =>
      doctor(
        machine({
          uid,
          groups,
          dirs: { "/dev/infiniband": ["uverbs0", "rdma_cm"] },
          stats: { [UV]: { mode: 0o20000 | mode, uid: 0, gid } },
        }),
      ).find((x) => x.title.startsWith(UV))!;

    it("uverbs device files: 0666 is ok for anyone; 0660 needs the group (usermod line); 0600 fails for non-root", () => {
      expect(withUverbs(0o666, 0, [1000])).toMatchObject({ status: "ok", title: expect.stringContaining("any user") });
      expect(withUverbs(0o660, 107, [1000, 107]).status).toBe("ok");
      const notMember = withUverbs(0o660, 107, [1000]);
      expect(notMember).toMatchObject({ status: "warn", fix: expect.stringContaining("usermod -aG") });
      expect(notMember.fix).toContain("alice");
      const rootOnly = withUverbs(0o600, 0, [1000]);
      expect(rootOnly).toMatchObject({ status: "fail", title: expect.stringContaining("EACCES") });
      expect(rootOnly.fix).toContain('KERNEL=="uverbs*", MODE="0666"');
    });

    it("memlock as non-root: the exact limits.conf line for this user", () => {
      const f = doctor(machine({ files: { "/proc/self/limits": LIMITS("8388608") } })).find((x) =>
        x.title.startsWith("memlock"),
      )!;
      expect(f.status).toBe("warn");
      expect(f.fix).toContain("'alice  -  memlock  unlimited'");
      expect(f.fix).toContain("/etc/security/limits.conf");
    });

    it("a firewall rule on UDP 4791 is shown with the RETRY_EXC_ERR it causes; none: ok; unreadable: says it needs root", () => {
      const ruleset =
        'table inet verbslab_lab {\n\tchain input {\n\t\tudp dport 4791 counter packets 3 bytes 252 drop comment "VerbsLab"\n\t}\n}\n';
      const hit = doctor(machine({ commands: { nft: { status: 0, stdout: ruleset } } })).find((x) =>
        x.title.includes("4791"),
      )!;
      expect(hit.status).toBe("warn");
      expect(hit.title).toContain("IBV_WC_RETRY_EXC_ERR");
      expect(hit.detail).toEqual(['nft: udp dport 4791 counter packets 3 bytes 252 drop comment "VerbsLab"']);
      const none = doctor(
        machine({
          commands: { nft: { status: 0, stdout: "table inet filter {\n}\n" }, "iptables-save": { status: 0 } },
        }),
      ).find((x) => x.title.includes("4791"))!;
      expect(none.status).toBe("ok");
      const denied = doctor(
        machine({ commands: { nft: { status: 1, stderr: "Operation not permitted (you must be root)" } } }),
      ).find((x) => x.title.includes("firewall"))!;
      expect(denied).toMatchObject({ status: "info", fix: expect.stringContaining("sudo nft list ruleset") });
    });

    const twoDevices = (mtu0: string, mtu1: string, types = ["RoCE v2", "RoCE v2"]) => {
      const files: Record<string, string> = {};
      const dirs: Record<string, string[]> = { "/sys/class/infiniband": ["rxe0", "rxe1"] };
      let devinfo = "";
      ["rxe0", "rxe1"].forEach((dev, i) => {
        const port = `/sys/class/infiniband/${dev}/ports/1`;
        dirs[`/sys/class/infiniband/${dev}/ports`] = ["1"];
        dirs[`${port}/gids`] = ["0", "1"];
        files[`${port}/state`] = "4: ACTIVE\n";
        files[`${port}/link_layer`] = "Ethernet\n";
        files[`${port}/gids/0`] = `fe80:0000:0000:0000:0000:0000:0000:000${i}\n`;
        files[`${port}/gid_attrs/types/0`] = `${types[0]}\n`;
        files[`${port}/gid_attrs/ndevs/0`] = `veth${i}\n`;
        files[`${port}/gids/1`] = `0000:0000:0000:0000:0000:ffff:0a4d:000${i + 1}\n`;
        files[`${port}/gid_attrs/types/1`] = `${types[1]}\n`;
        files[`${port}/gid_attrs/ndevs/1`] = `veth${i}\n`;
        const mtu = i === 0 ? mtu0 : mtu1;
        files[`/sys/class/net/veth${i}/mtu`] = `${mtu}\n`;
        const active = Number(mtu) >= 4176 ? "4096 (5)" : "1024 (3)";
        devinfo += `hca_id:\t${dev}\n\tport:\t1\n\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\tactive_mtu:\t\t${active}\n\t\tlink_layer:\t\tEthernet\n`;
      });
      return doctor(machine({ files, dirs, commands: { ibv_devinfo: { status: 0, stdout: devinfo } } }));
    };

    it("GID types per index: RoCE v2 and v1 indexes listed; no v2 at all is a warning", () => {
      const v2 = twoDevices("1500", "1500").find((x) => x.title.startsWith("rxe0 port 1 GID types"))!;
      expect(v2).toMatchObject({
        status: "info",
        title: "rxe0 port 1 GID types: RoCE v2 at index 0, 1; RoCE v1 at index none",
      });
      const v1 = twoDevices("1500", "1500", ["IB/RoCE v1", "IB/RoCE v1"]).find((x) =>
        x.title.startsWith("rxe1 port 1 GID types"),
      )!;
      expect(v1).toMatchObject({
        status: "warn",
        title: "rxe1 port 1 GID types: RoCE v2 at index none; RoCE v1 at index 0, 1",
      });
    });

    it("netdev MTU vs active_mtu per port, and a mismatch between devices with the path_mtu it breaks", () => {
      const same = twoDevices("1500", "1500");
      expect(same.find((x) => x.title.startsWith("rxe0 port 1: active_mtu"))?.title).toBe(
        "rxe0 port 1: active_mtu 1024 on veth0 with MTU 1500; MTU 2128 or more on veth0 would give 2048",
      );
      expect(same.some((x) => x.title.startsWith("netdev MTUs differ"))).toBe(false);
      const differ = twoDevices("9000", "1500");
      expect(differ.find((x) => x.title.startsWith("rxe0 port 1: active_mtu"))?.title).toBe(
        "rxe0 port 1: active_mtu 4096 on veth0 with MTU 9000",
      );
      const m = differ.find((x) => x.title.startsWith("netdev MTUs differ"))!;
      expect(m).toMatchObject({ status: "warn", title: "netdev MTUs differ: veth0 9000, veth1 1500" });
      expect(m.detail?.[0]).toContain("rxe1's active_mtu (1024)");
      expect(m.fix).toBe("set one MTU on both sides (sudo ip link set veth1 mtu 9000), or use path_mtu ≤ 1024");
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
