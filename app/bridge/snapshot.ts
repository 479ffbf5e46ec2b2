/**
 * Folds the "snapshot" events the backend sends after each verb into complete snapshots.
 * On the wire a snapshot after a verb is a delta (`delta: true`): only the MRs whose bytes
 * changed, the devices whose counters moved and the packets new since the previous one, so
 * a long run does not resend everything on every step. Listeners get the whole picture: MR
 * bytes and counters by handle, and the last PACKET_WINDOW packets.
 */
import { PACKET_WINDOW, stateSnapshotSchema, type PacketRecord, type StateSnapshot } from "./contract.js";

export interface SnapshotFolder {
  /** Checks a snapshot from the host and returns it complete (a full one replaces what was folded). */
  fold(incoming: unknown): StateSnapshot;
  /** Forgets what was folded (a new session began). */
  reset(): void;
}

/** Replaces entries of `base` by handle with those in `changed`, keeping `base`'s order for the rest. */
function byHandle<T extends { handle: number }>(base: T[] | undefined, changed: T[] | undefined): T[] | undefined {
  if (!changed?.length) return base;
  if (!base?.length) return changed;
  const fresh = new Map(changed.map((x) => [x.handle, x]));
  const out = base.map((x) => fresh.get(x.handle) ?? x);
  for (const x of changed) if (!base.some((b) => b.handle === x.handle)) out.push(x);
  return out;
}

/** `base` then the records of `more` not already in it (by seq), at most `window` of them. */
export function appendPackets(base: PacketRecord[], more: PacketRecord[], window = PACKET_WINDOW): PacketRecord[] {
  const last = base.length ? base[base.length - 1]!.seq : -1;
  const fresh = more[0] && more[0].seq > last ? more : more.filter((p) => p.seq > last);
  if (fresh.length === 0) return base;
  const all = base.length ? base.concat(fresh) : fresh;
  return all.length > window ? all.slice(all.length - window) : all;
}

export function createSnapshotFolder(window = PACKET_WINDOW): SnapshotFolder {
  let last: StateSnapshot | null = null;
  return {
    fold(incoming) {
      const snap = stateSnapshotSchema.parse(incoming, "snapshot");
      const { delta, ...rest } = snap;
      if (!delta || !last) {
        if (rest.packets && rest.packets.records.length > window)
          rest.packets = { ...rest.packets, records: rest.packets.records.slice(-window) };
        return (last = rest);
      }
      const packets = rest.packets
        ? {
            observable: rest.packets.observable,
            records: appendPackets(last.packets?.records ?? [], rest.packets.records, window),
          }
        : last.packets;
      const mrBytes = byHandle(last.mrBytes, rest.mrBytes);
      const counters = byHandle(last.counters, rest.counters);
      return (last = {
        ...rest,
        ...(mrBytes && { mrBytes }),
        ...(counters && { counters }),
        ...(packets && { packets }),
      });
    },
    reset() {
      last = null;
    },
  };
}
