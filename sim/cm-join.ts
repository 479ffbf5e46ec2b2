/**
 * rdma_join_multicast and rdma_leave_multicast on the simulator (verbs/cm.ts), as librdmacm 44
 * and Linux 6.1's rdma_cm do them for RoCEv2 over rxe (sim/RXE-FACTS.md §10.5): the kernel
 * joins the id's netdev to the group at once, MULTICAST_JOIN follows, and librdmacm attaches
 * the id's QP while handing the event out. The tables are sim/cm-mcast.ts.
 */
import {
  IB_MULTICAST_QPN,
  RDMA_CM_EVENT_MULTICAST_ERROR,
  RDMA_CM_EVENT_MULTICAST_JOIN,
  RDMA_PS_UDP,
  RDMA_UDP_QKEY,
  unackedCmEventsError,
  type SockAddr,
  type UdParamEvent,
} from "../verbs/cm.js";
import { fail } from "../verbs/errors.js";
import { DEFAULT_HOP_LIMIT, ipGid, ipText, isAny, sameIp, sockAddr, type Ip4 } from "./cm-addr.js";
import { isMulticastGid, isMulticastIp } from "./cm-mcast.js";
import { schedule } from "./cm-protocol.js";
import type { SimCmId } from "./cm.js";
import type { SimDevice } from "./device.js";
import { formatGid } from "./gid.js";
import type { SimQp } from "./qp.js";
import { because } from "../verbs/verb-failure.js";

/** One rdma_join_multicast of an id (librdmacm's cma_multicast, the kernel's mc_list entry). */
export interface McJoin {
  /** The address as joined: rdma_leave_multicast must name the same address and port. */
  addr: Ip4;
  mgid: Uint8Array;
  /** The device whose netdev the join made a member (a unicast address makes none). */
  dev: SimDevice;
  member: boolean;
}

/** rdma_join_multicast(id, addr, NULL) (sim/RXE-FACTS.md §10.5). */
export function joinMulticast(id: SimCmId, addr: SockAddr): void {
  const verb = "rdma_join_multicast";
  const a = sockAddr(verb, "addr", addr);
  if (id.ps !== RDMA_PS_UDP) fail(verb, "EINVAL", because({ kind: "join-needs-udp" }, { attribute: "id" }));
  if (!id.device || !id.src || isAny(id.src.bytes))
    fail(verb, "EINVAL", because({ kind: "id-unbound", join: true }, { attribute: "id" }));
  if (id.state !== "addr_bound" && id.state !== "addr_resolved")
    fail(verb, "EINVAL", because({ kind: "id-state", step: "join", state: id.state }, { attribute: "id" }));
  if (isAny(a.bytes)) fail(verb, "EINVAL", because({ kind: "addr-any" }, { attribute: "addr" }));
  const dev = id.device;
  const world = id.cm.world;
  // cma_iboe_set_mgid (RoCEv2, IPv4): the group's IPv4-mapped address; cma_igmp_send joins the
  // netdev to it at once, the event follows from a work queue.
  const mgid = ipGid(a.bytes);
  const member = isMulticastIp(a.bytes);
  if (member) world.mcast.join(dev, mgid);
  const join: McJoin = { addr: a, mgid, dev, member };
  id.mcJoins.push(join);
  const ud: UdParamEvent = {
    private_data: new Uint8Array(0),
    private_data_len: 0,
    ah_attr: {
      grh: {
        dgid: formatGid(mgid),
        flow_label: 0,
        sgid_index: Math.max(0, dev.findGid(ipGid(id.src.bytes))),
        hop_limit: DEFAULT_HOP_LIMIT,
        traffic_class: 0,
      },
      dlid: 0,
      sl: 0,
      src_path_bits: 0,
      static_rate: 0,
      is_global: 1,
      port_num: 1,
    },
    qp_num: IB_MULTICAST_QPN,
    qkey: RDMA_UDP_QKEY,
  };
  schedule(world.clock, 0, () => {
    if (id.destroyed || !id.mcJoins.includes(join)) return;
    id.channel.push({
      event: RDMA_CM_EVENT_MULTICAST_JOIN,
      status: 0,
      id,
      ud,
      mc: join,
      // ucma_process_join, inside rdma_get_cm_event: ibv_attach_mcast of id.qp, if any. The
      // kernel's ib_attach_mcast refuses a GID that is not multicast: MULTICAST_ERROR, -1.
      process: (e) => {
        const qp = id.qp as SimQp | undefined;
        if (!qp) return;
        if (!isMulticastGid(mgid)) {
          e.event = RDMA_CM_EVENT_MULTICAST_ERROR;
          e.status = -1;
          return;
        }
        world.mcast.attach(qp, mgid);
      },
    });
  });
}

/** rdma_leave_multicast(id, addr). */
export function leaveMulticast(id: SimCmId, addr: SockAddr): void {
  const verb = "rdma_leave_multicast";
  const a = sockAddr(verb, "addr", addr);
  // VerbsLab's refusal first (librdmacm would block before anything else could be told).
  if (id.unacked > 0) throw unackedCmEventsError(id.unacked, verb);
  const i = id.mcJoins.findIndex((j) => sameIp(j.addr.bytes, a.bytes) && j.addr.port === a.port);
  if (i < 0)
    fail(
      verb,
      "EADDRNOTAVAIL",
      because({ kind: "not-joined", ip: ipText(a.bytes), port: a.port }, { attribute: "addr" }),
    );
  const [join] = id.mcJoins.splice(i, 1);
  const world = id.cm.world;
  const qp = id.qp as SimQp | undefined;
  if (qp) world.mcast.detach(qp, join!.mgid);
  id.channel.dropWhere((e) => e.mc === join);
  if (join!.member) world.mcast.leave(join!.dev, join!.mgid);
}

/** rdma_destroy_id's kernel half leaves every group (cma_leave_mc_groups); librdmacm detaches no QP. */
export function leaveAllOnDestroy(id: SimCmId): void {
  for (const j of id.mcJoins.splice(0)) if (j.member) id.cm.world.mcast.leave(j.dev, j.mgid);
}
