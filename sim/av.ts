/**
 * Address vectors (ibv_ah_attr) checked and resolved the way the kernel does for RoCE:
 * uverbs checks the port, ib_core's rdma_fill_sgid_attr needs a GRH (is_global) and a valid
 * sgid_index (ENODATA), and ib_resolve_eth_dmac must find the destination (ENETUNREACH for an
 * unknown IPv6 GID or ::, EINVAL for an unknown IPv4-mapped one). What is stored is what
 * rxe keeps: hop_limit 64 (route resolution), sl and static_rate dropped (RXE-FACTS.md §3).
 */
import { fail } from "../verbs/errors.js";
import type { AhAttr } from "../verbs/types.js";
import { obj, optInt, typeErr } from "./check.js";
import type { SimDevice } from "./device.js";
import { isMulticastGid } from "./cm-mcast.js";
import { formatGid, isV4Mapped, isZeroGid, parseGid } from "./gid.js";
import type { SimWorld } from "./world.js";
import { because, type NoRoute } from "../verbs/verb-failure.js";

export interface ResolvedAv {
  attr: AhAttr;
  sgid: Uint8Array;
  dgid: Uint8Array;
  destDev: SimDevice;
  /**
   * A multicast dgid (an AH from a MULTICAST_JOIN event): ib_resolve_eth_dmac maps it to a
   * multicast MAC without looking for a device; the datagram goes to the group's members
   * (world.transmitMcast) and `destDev` is just the sender's own device.
   */
  mcast: boolean;
}

type AvInput = Partial<Omit<AhAttr, "grh">> & { grh?: Partial<AhAttr["grh"]> };

/** The port check uverbs does on an AV (before anything else looks at it). */
export function checkAvPort(verb: string, input: unknown, prefix: string): void {
  const a = obj(verb, prefix, input) as AvInput;
  const port = optInt(verb, `${prefix}.port_num`, a.port_num, 0);
  if (port !== 1)
    fail(
      verb,
      "EINVAL",
      because({ kind: "port-num", field: `${prefix}.port_num`, got: port }, { attribute: `${prefix}.port_num` }),
    );
}

/** ib_core's checks and route resolution. Throws a VerbsError naming the field at fault. */
export function resolveAv(
  world: SimWorld,
  dev: SimDevice,
  input: unknown,
  verb: string,
  prefix: string,
  multicastOk = false,
): ResolvedAv {
  const a = obj(verb, prefix, input) as AvInput;
  const isGlobal = optInt(verb, `${prefix}.is_global`, a.is_global, 0);
  if (isGlobal !== 1)
    fail(verb, "EINVAL", because({ kind: "needs-grh", prefix }, { attribute: `${prefix}.is_global` }));
  const g = obj(verb, `${prefix}.grh`, a.grh ?? {});
  const sgidIndex = optInt(verb, `${prefix}.grh.sgid_index`, g.sgid_index, 0);
  const slot = sgidIndex >= 0 && sgidIndex < dev.gids.length ? dev.gids[sgidIndex] : null;
  if (!slot)
    fail(
      verb,
      "ENODATA",
      because({ kind: "no-gid", device: dev.name, index: sgidIndex }, { attribute: `${prefix}.grh.sgid_index` }),
    );
  const dgidText = g.dgid ?? "::";
  if (typeof dgidText !== "string") throw typeErr(verb, `${prefix}.grh.dgid`, "ipv6-text", dgidText);
  const dgid =
    parseGid(dgidText) ??
    fail(verb, "EINVAL", because({ kind: "not-a-gid", text: dgidText }, { attribute: `${prefix}.grh.dgid` }));
  const flow_label = optInt(verb, `${prefix}.grh.flow_label`, g.flow_label, 0);
  const traffic_class = optInt(verb, `${prefix}.grh.traffic_class`, g.traffic_class, 0);
  optInt(verb, `${prefix}.grh.hop_limit`, g.hop_limit, 0);
  optInt(verb, `${prefix}.sl`, a.sl, 0);
  optInt(verb, `${prefix}.static_rate`, a.static_rate, 0);
  optInt(verb, `${prefix}.dlid`, a.dlid, 0);
  optInt(verb, `${prefix}.src_path_bits`, a.src_path_bits, 0);
  function unreachable(why: NoRoute): never {
    return fail(
      verb,
      isV4Mapped(dgid) && !isZeroGid(dgid) ? "EINVAL" : "ENETUNREACH",
      because({ kind: "no-route", gid: formatGid(dgid), why }, { attribute: `${prefix}.grh.dgid` }),
    );
  }
  if (isZeroGid(dgid)) fail(verb, "ENETUNREACH", because({ kind: "dgid-unset" }, { attribute: `${prefix}.grh.dgid` }));
  if (!dev.linkUp)
    fail(verb, "ENETUNREACH", because({ kind: "link-down", device: dev.name }, { attribute: `${prefix}.grh.dgid` }));
  // rxe resolves the route in the sgid's address family: IPv4 to IPv6 is EINVAL (measured).
  if (isV4Mapped(slot.gid) && !isV4Mapped(dgid))
    fail(verb, "EINVAL", because({ kind: "gid-family", dgid: formatGid(dgid) }, { attribute: `${prefix}.grh.dgid` }));
  const mcast = multicastOk && isMulticastGid(dgid);
  const destDev = mcast ? dev : (world.findDeviceByGid(dgid) ?? unreachable({ kind: "no-device" }));
  if (!world.reachable(dev, destDev)) unreachable({ kind: "link-down", device: destDev.name });
  return {
    attr: {
      grh: {
        dgid: formatGid(dgid),
        flow_label: flow_label & 0xfffff,
        sgid_index: sgidIndex,
        hop_limit: 64,
        traffic_class: traffic_class & 0xff,
      },
      dlid: 0,
      sl: 0,
      src_path_bits: 0,
      static_rate: 0,
      is_global: 1,
      port_num: 1,
    },
    sgid: slot.gid,
    dgid,
    destDev,
    mcast,
  };
}

/** An AV as query_qp shows it before one is set: is_global 1, everything else 0 (RXE-FACTS.md §3). */
export function emptyAv(): AhAttr {
  return {
    grh: { dgid: "::", flow_label: 0, sgid_index: 0, hop_limit: 0, traffic_class: 0 },
    dlid: 0,
    sl: 0,
    src_path_bits: 0,
    static_rate: 0,
    is_global: 1,
    port_num: 0,
  };
}
