/** struct ibv_context for a simulated device: queries, PD/CQ/channel creation, async events. */
import type { Context } from "../verbs/backend.js";
import { argError, fail } from "../verbs/errors.js";
import type { AsyncEvent, DeviceAttr, DeviceInfo, GidEntry, PortAttr, PortCounters } from "../verbs/types.js";
import { alive, int, obj, optInt, typeErr } from "./check.js";
import { checkCqe } from "../verbs/args.js";
import { checkWait, waitFor } from "./clock.js";
import { countersToRecord } from "./counters.js";
import { CompChannelImpl, SimCq } from "./cq.js";
import type { SimDevice } from "./device.js";
import { SimPd } from "./pd.js";
import type { SimWorld } from "./world.js";
import { because } from "../verbs/verb-failure.js";

export class SimContext implements Context {
  destroyed = false;
  private asyncQueue: AsyncEvent[] = [];

  constructor(
    readonly world: SimWorld,
    readonly dev: SimDevice,
  ) {
    dev.contexts.add(this);
  }

  get device(): DeviceInfo {
    return { ...this.dev.info };
  }

  private live(verb: string): void {
    alive(verb, "context", this);
  }

  private port(verb: string, port_num: unknown): void {
    const p = int(verb, "port_num", port_num);
    if (p !== 1) fail(verb, "EINVAL", because({ kind: "one-port", port: p }, { attribute: "port_num" }));
  }

  queryDevice(): DeviceAttr {
    this.live("ibv_query_device");
    return this.dev.deviceAttr();
  }

  queryPort(port_num: number): PortAttr {
    this.live("ibv_query_port");
    this.port("ibv_query_port", port_num);
    return this.dev.portAttr();
  }

  private gidIndex(verb: string, index: unknown): number {
    const i = int(verb, "index", index);
    if (i < 0 || i >= this.dev.gids.length)
      fail(
        verb,
        "EINVAL",
        because({ kind: "gid-index", index: i, count: this.dev.gids.length }, { attribute: "index" }),
      );
    return i;
  }

  queryGid(port_num: number, index: number): string {
    this.live("ibv_query_gid");
    this.port("ibv_query_gid", port_num);
    const s = this.dev.gids[this.gidIndex("ibv_query_gid", index)];
    return s ? s.text : "::";
  }

  queryGidEx(port_num: number, index: number): GidEntry {
    this.live("ibv_query_gid_ex");
    this.port("ibv_query_gid_ex", port_num);
    const i = this.gidIndex("ibv_query_gid_ex", index);
    const s = this.dev.gids[i];
    if (!s) fail("ibv_query_gid_ex", "ENODATA", because({ kind: "gid-empty", index: i }, { attribute: "index" }));
    return { gid: s.text, gid_index: i, port_num: 1, gid_type: s.type, ndev_ifindex: this.dev.ifindex };
  }

  queryGidTable(): GidEntry[] {
    this.live("ibv_query_gid_table");
    const out: GidEntry[] = [];
    this.dev.gids.forEach((s, i) => {
      if (s) out.push({ gid: s.text, gid_index: i, port_num: 1, gid_type: s.type, ndev_ifindex: this.dev.ifindex });
    });
    return out;
  }

  queryPkey(port_num: number, index: number): number {
    this.live("ibv_query_pkey");
    this.port("ibv_query_pkey", port_num);
    const i = int("ibv_query_pkey", "index", index);
    // libibverbs reads ports/1/pkeys/<index> in sysfs; rxe has only entry 0, so any other
    // index has no file (ENOENT, as measured in the lab VM).
    if (i !== 0) fail("ibv_query_pkey", "ENOENT", because({ kind: "pkey-index" }, { attribute: "index" }));
    return 0xffff;
  }

  allocPd(): SimPd {
    this.live("ibv_alloc_pd");
    return new SimPd(this);
  }

  createCq(cqe: number, options?: { channel?: CompChannelImpl; comp_vector?: number; cq_context?: unknown }): SimCq {
    const verb = "ibv_create_cq";
    this.live(verb);
    const n = int(verb, "cqe", cqe);
    const o = options === undefined ? {} : obj(verb, "options", options);
    const vec = optInt(verb, "comp_vector", o.comp_vector, 0);
    checkCqe(verb, n, 32767);
    if (vec < 0 || vec >= 2)
      fail(verb, "EINVAL", because({ kind: "comp-vector", vector: vec, count: 2 }, { attribute: "comp_vector" }));
    let channel: CompChannelImpl | null = null;
    if (o.channel !== undefined && o.channel !== null) {
      if (!(o.channel instanceof CompChannelImpl))
        throw argError(TypeError, verb, { kind: "foreign-object", field: "channel", what: "completion channel" });
      alive(verb, "completion channel", o.channel);
      if (o.channel.context.dev !== this.dev)
        fail(verb, "EINVAL", because({ kind: "channel-other-device" }, { attribute: "channel" }));
      channel = o.channel;
    }
    return new SimCq(this, n, channel, o.cq_context);
  }

  createCompChannel(): CompChannelImpl {
    this.live("ibv_create_comp_channel");
    return new CompChannelImpl(this);
  }

  pushAsync(ev: AsyncEvent): void {
    if (!this.destroyed) this.asyncQueue.push(ev);
  }

  /**
   * Drops the unread events of an object being destroyed, as uverbs does
   * (ib_uverbs_release_uevent): a destroyed QP's or CQ's event is never read.
   */
  dropAsync(of: (ev: AsyncEvent) => boolean): void {
    this.asyncQueue = this.asyncQueue.filter((ev) => !of(ev));
  }

  getAsyncEvent(timeoutMs?: number): Promise<AsyncEvent | null> {
    this.live("ibv_get_async_event");
    if (timeoutMs !== undefined && (typeof timeoutMs !== "number" || Number.isNaN(timeoutMs)))
      throw typeErr("ibv_get_async_event", "timeoutMs", "number", timeoutMs);
    checkWait(this.world.clock, "ibv_get_async_event", "timeoutMs", timeoutMs);
    return waitFor(
      this.world.clock,
      () => this.asyncQueue.shift(),
      timeoutMs,
      () => null,
    );
  }

  queryCounters(port_num = 1): PortCounters {
    this.live("rdma statistic");
    this.port("rdma statistic", port_num);
    return countersToRecord(this.dev.counters, this.world.profile.counterNames);
  }

  close(): void {
    this.live("ibv_close_device");
    this.destroyed = true;
    this.dev.contexts.delete(this);
  }
}
