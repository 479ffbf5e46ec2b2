/**
 * DeviceInfo.driver and the IB port counters on the native backend, from sysfs as the
 * kernel lays it out (a fake tree: runs everywhere, no RDMA needed).
 */
import { mkdirSync, mkdtempSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { driverOf, portIbCounters } from "../index.js";

function sysfs(): string {
  const root = mkdtempSync(join(tmpdir(), "verbslab-sysfs-"));
  const drivers = join(root, "bus", "pci", "drivers");
  mkdirSync(join(drivers, "mlx5_core"), { recursive: true });
  mkdirSync(join(drivers, "bnxt_en"), { recursive: true });
  const ib = join(root, "class", "infiniband");
  for (const [dev, drv] of [
    ["mlx5_0", "mlx5_core"],
    ["bnxt_re0", "bnxt_en"],
    ["roce7", "mlx5_core"],
  ] as const) {
    mkdirSync(join(ib, dev, "device"), { recursive: true });
    symlinkSync(join(drivers, drv), join(ib, dev, "device", "driver"));
  }
  // rxe and siw have no parent device: no device/driver link.
  mkdirSync(join(ib, "rxe0"), { recursive: true });
  mkdirSync(join(ib, "mlx5_0", "ports", "1", "counters"), { recursive: true });
  writeFileSync(join(ib, "mlx5_0", "ports", "1", "counters", "port_xmit_packets"), "1234\n");
  writeFileSync(join(ib, "mlx5_0", "ports", "1", "counters", "port_rcv_packets"), "99\n");
  return ib;
}

describe("native: which driver a device has", () => {
  const ib = sysfs();
  const readLink = (p: string) => {
    try {
      return readlinkSync(p);
    } catch {
      return null;
    }
  };

  it("reads the device's driver link (mlx5_core → mlx5), whatever the device is named", () => {
    expect(driverOf("mlx5_0", readLink, ib)).toBe("mlx5");
    expect(driverOf("roce7", readLink, ib)).toBe("mlx5");
    expect(driverOf("bnxt_re0", readLink, ib)).toBe("bnxt_re");
  });

  it("falls back to the kernel's name prefix for software devices (rxe0, siw1), else says nothing", () => {
    expect(driverOf("rxe0", readLink, ib)).toBe("rxe");
    expect(driverOf("siw1", readLink, ib)).toBe("siw");
    expect(driverOf("weird", readLink, ib)).toBeUndefined();
  });

  it("reads a NIC's IB port counters (port_xmit_packets, …); none where the folder is missing", () => {
    expect(portIbCounters("mlx5_0", 1, ib)).toEqual({ port_xmit_packets: 1234, port_rcv_packets: 99 });
    expect(portIbCounters("rxe0", 1, ib)).toEqual({});
  });
});
