/**
 * Which verbs backends this process can offer: the simulator always, native rxe or a NIC
 * when libibverbs finds a device. The native addon is loaded only here, in the backend
 * process, never in a host or the renderer.
 */
import type { VerbsBackend } from "../../verbs/backend.js";
import type { BackendChoice, BackendKind } from "../bridge/contract.js";

import { createSimBackend } from "../../sim/index.js";
import { loadNativeBackend } from "../../native/index.js";

export interface BackendProvider {
  /** A fresh simulator (a new world: same seed, same keys and QPNs). */
  sim(seed?: number): VerbsBackend;
  /** The native backend, or why it cannot be used (and what to install). */
  native(): Promise<{ backend: VerbsBackend } | { unavailable: string }>;
}

export const defaultProvider: BackendProvider = {
  sim: (seed) => createSimBackend(seed === undefined ? {} : { seed }),
  native: async () => loadNativeBackend(),
};

/** Native if it has a device, else why not. */
export async function nativeOrReason(
  provider: BackendProvider,
): Promise<{ backend: VerbsBackend } | { reason: string }> {
  let loaded: Awaited<ReturnType<BackendProvider["native"]>>;
  try {
    loaded = await provider.native();
  } catch (err) {
    return { reason: `the native backend failed to load: ${(err as Error).message}` };
  }
  if ("unavailable" in loaded) return { reason: loaded.unavailable };
  const devices = loaded.backend.getDeviceList();
  if (devices.length === 0)
    return {
      reason:
        loaded.backend.unavailableReason ??
        "libibverbs found no RDMA device (load rdma_rxe and add one: rdma link add rxe0 type rxe netdev eth0)",
    };
  return { backend: loaded.backend };
}

export async function listBackends(provider: BackendProvider): Promise<BackendChoice[]> {
  const sim = provider.sim();
  const native = await nativeOrReason(provider);
  return [
    { kind: "sim", available: true, devices: sim.getDeviceList() },
    "backend" in native
      ? { kind: "native", available: true, devices: native.backend.getDeviceList() }
      : { kind: "native", available: false, unavailableReason: native.reason, devices: [] },
  ];
}

/** The backend to start on when the learner has not chosen: native when a device exists, else the simulator. */
export async function defaultKind(provider: BackendProvider): Promise<BackendKind> {
  return "backend" in (await nativeOrReason(provider)) ? "native" : "sim";
}
