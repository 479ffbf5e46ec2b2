/**
 * Which verbs backends this process can offer: the simulator always, native rxe or a NIC
 * when libibverbs finds a device. The native addon is loaded only here, in the backend
 * process, never in a host or the renderer.
 */
import type { VerbsBackend } from "../../verbs/backend.js";
import type { BackendChoice, BackendKind } from "../bridge/contract.js";

// Loaded on first use, by specifier, so this process starts (and typechecks) whichever of
// the two is missing. The shapes are the ones verbs/README and the brief fix.
const SIM_MODULE = "../../sim/index.js";
const NATIVE_MODULE = "../../native/index.js";
interface SimModule {
  createSimBackend(options: { seed?: number }): VerbsBackend;
}
interface NativeModule {
  loadNativeBackend():
    { backend: VerbsBackend } | { unavailable: string } | Promise<{ backend: VerbsBackend } | { unavailable: string }>;
}
let simModule: SimModule | null = null;

export interface BackendProvider {
  /** A fresh simulator (a new world: same seed, same keys and QPNs). */
  sim(seed?: number): VerbsBackend;
  /** The native backend, or why it cannot be used (and what to install). */
  native(): Promise<{ backend: VerbsBackend } | { unavailable: string }>;
}

/** Loads the simulator module; call once before using `defaultProvider.sim`. */
export async function loadSimModule(): Promise<void> {
  simModule ??= (await import(/* @vite-ignore */ SIM_MODULE)) as SimModule;
}

export const defaultProvider: BackendProvider = {
  sim: (seed) => {
    if (!simModule) throw new Error("the simulator module is not loaded (await loadSimModule() first)");
    return simModule.createSimBackend(seed === undefined ? {} : { seed });
  },
  native: async () => ((await import(/* @vite-ignore */ NATIVE_MODULE)) as NativeModule).loadNativeBackend(),
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
