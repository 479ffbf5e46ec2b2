/**
 * Shared by the VM-only native tests: the backend (or why there is none, printed so a skip
 * is never silent) and small helpers. These tests run for real only in the lab VM:
 * `scripts/rxe-vm/run.sh -- npx vitest run native/test`.
 */
import type { Context, Qp, VerbsBackend } from "../../verbs/backend.js";
import * as v from "../../verbs/constants.js";
import type { GidEntry } from "../../verbs/types.js";
import { loadNativeBackend } from "../index.js";
import { connectRc as connectPair } from "../tools/rc-pair.js";

const loaded = loadNativeBackend();
export const backend: VerbsBackend | undefined = "backend" in loaded ? loaded.backend : undefined;
export const unavailable = "unavailable" in loaded ? loaded.unavailable : undefined;

/** Prints why a VM-only file is skipped. */
export function announceSkip(file: string): boolean {
  if (!backend) console.warn(`[native] SKIPPED ${file}: ${unavailable}`);
  return !backend;
}

export function B(): VerbsBackend {
  if (!backend) throw new Error(`no native backend: ${unavailable}`);
  return backend;
}

/** The link-local RoCEv2 GID (index 0) of port 1. */
export function linkLocal(ctx: Context): GidEntry {
  const e = ctx.queryGidTable().find((g) => g.gid.startsWith("fe80"));
  if (!e) throw new Error(`${ctx.device.name} has no link-local GID`);
  return e;
}

export const ALL_ACCESS =
  v.IBV_ACCESS_LOCAL_WRITE | v.IBV_ACCESS_REMOTE_WRITE | v.IBV_ACCESS_REMOTE_READ | v.IBV_ACCESS_REMOTE_ATOMIC;

/** RESET → INIT → RTR → RTS against `peer` (rc_pingpong's values), one transition per call. */
export function connectRc(qp: Qp, peerQpn: number, gid: GidEntry, dgid: string): void {
  connectPair(qp, peerQpn, gid, dgid, { access: ALL_ACCESS, timeout: 14 });
}
