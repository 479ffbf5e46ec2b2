/**
 * struct ibv_cq and struct ibv_comp_channel. Capacity is the profile's rounding (rxe: 2^k - 1); an
 * overflow drops the CQE and raises IBV_EVENT_CQ_ERR (rxe_cq_post). Arming follows
 * rxe_cq_post too: one event for the next CQE (or the next solicited one), then disarmed.
 */
import { IBV_EVENT_CQ_ERR, IBV_QPT_UD, IBV_WC_GRH, IBV_WC_SUCCESS } from "../verbs/constants.js";
import type { CompChannel, Cq } from "../verbs/backend.js";
import { unackedEventsError } from "../verbs/cq-events.js";
import { argError, fail } from "../verbs/errors.js";
import type { Wc } from "../verbs/types.js";
import { alive, int, typeErr } from "./check.js";
import { ackCount, negativeNumEntries } from "../verbs/args.js";
import { checkWait, waitFor } from "./clock.js";
import type { SimContext } from "./context.js";
import type { SimProfile } from "./profile.js";
import { because } from "../verbs/verb-failure.js";

const NOTIFY_NONE = 0;
const NOTIFY_NEXT = 1;
const NOTIFY_SOLICITED = 2;

export class SimCq implements Cq {
  destroyed = false;
  readonly cqe: number;
  /** QPs using this CQ (destroy is EBUSY while any). */
  qpRefs = 0;
  private ring: (Wc | undefined)[];
  private head = 0;
  private n = 0;
  private notify = NOTIFY_NONE;
  eventsRaised = 0;
  /** Events ibv_get_cq_event returned (what libibverbs' destroy waits to see acknowledged), and those acknowledged. */
  eventsGot = 0;
  eventsAcked = 0;

  constructor(
    readonly context: SimContext,
    requested: number,
    readonly channel: CompChannelImpl | null,
    readonly cq_context: unknown,
  ) {
    this.cqe = context.world.profile.cqDepth(requested);
    this.ring = new Array(this.cqe);
    if (channel) channel.cqs++;
  }

  /** Entries waiting to be polled. */
  get count(): number {
    return this.n;
  }

  /** rxe_cq_post: false (and CQ_ERR raised) when the CQ is full. */
  push(wc: Wc, solicited: boolean): boolean {
    if (this.destroyed) return false;
    const profile = this.context.world.profile;
    if (profile.name !== "rxe") this.asProfileWrites(wc, profile);
    if (this.n === this.cqe) {
      const world = this.context.world;
      this.context.pushAsync({ event_type: IBV_EVENT_CQ_ERR, cq: this });
      if (world.clock.pendingWaiters) world.clock.poke();
      return false;
    }
    let i = this.head + this.n;
    if (i >= this.cqe) i -= this.cqe;
    this.ring[i] = wc;
    this.n++;
    if (this.notify === NOTIFY_NEXT || (this.notify === NOTIFY_SOLICITED && solicited)) {
      this.notify = NOTIFY_NONE;
      if (this.channel && !this.channel.destroyed) {
        this.eventsRaised++;
        this.channel.fire(this);
      }
    }
    return true;
  }

  /**
   * What a device other than rxe writes where the specification lets it choose: the opcode of
   * an error completion, and no IBV_WC_GRH on a connected (RC/UC) receive. In place: the
   * completion's reason (explain.ts) is keyed by this very object.
   */
  private asProfileWrites(wc: Wc, profile: SimProfile): void {
    if (wc.status !== IBV_WC_SUCCESS) wc.opcode = profile.errorOpcode;
    else if (!profile.grhOnConnectedRecv && wc.wc_flags & IBV_WC_GRH) {
      const qp = this.context.dev.qps.get(wc.qp_num);
      if (qp && qp.qp_type !== IBV_QPT_UD) wc.wc_flags &= ~IBV_WC_GRH;
    }
  }

  poll(num_entries = 1): Wc[] {
    alive("ibv_poll_cq", "CQ", this);
    const want = int("ibv_poll_cq", "num_entries", num_entries);
    if (want < 0) throw negativeNumEntries(want);
    // Fewer here than asked for: virtual time runs while the wire delivers, as for a program
    // polling in a loop (world.ts spinFor).
    if (this.n < want) this.context.world.spinFor(this, want);
    return this.take(want);
  }

  /** Takes up to `want` completions, oldest first (poll without letting time run). */
  private take(want: number): Wc[] {
    const k = want < this.n ? want : this.n;
    const out: Wc[] = new Array(k);
    const ring = this.ring;
    let h = this.head;
    for (let j = 0; j < k; j++) {
      out[j] = ring[h]!;
      ring[h] = undefined;
      if (++h === this.cqe) h = 0;
    }
    this.head = h;
    this.n -= k;
    return out;
  }

  pollWait(count: number, timeoutMs: number): Promise<Wc[]> {
    alive("ibv_poll_cq", "CQ", this);
    const c = int("pollWait", "count", count);
    if (typeof timeoutMs !== "number" || Number.isNaN(timeoutMs))
      throw typeErr("pollWait", "timeoutMs", "number", timeoutMs);
    checkWait(this.context.world.clock, "verbslab_poll_wait", "timeoutMs", timeoutMs);
    const got: Wc[] = [];
    const take = () => {
      if (!this.destroyed && got.length < c) for (const wc of this.take(c - got.length)) got.push(wc);
    };
    return waitFor(
      this.context.world.clock,
      () => {
        take();
        return got.length >= c ? got : undefined;
      },
      Math.max(0, timeoutMs),
      () => {
        take();
        return got;
      },
    );
  }

  reqNotify(solicited_only = false): void {
    alive("ibv_req_notify_cq", "CQ", this);
    if (typeof solicited_only !== "boolean" && typeof solicited_only !== "number")
      throw typeErr("ibv_req_notify_cq", "solicited_only", "boolean", solicited_only);
    // rxe keeps the stronger request: NEXT_COMP wins over SOLICITED.
    if (this.notify !== NOTIFY_NEXT) this.notify = solicited_only ? NOTIFY_SOLICITED : NOTIFY_NEXT;
  }

  ackEvents(n: number): void {
    alive("ibv_ack_cq_events", "CQ", this);
    const k = ackCount(n);
    this.eventsAcked += k;
  }

  destroy(): void {
    alive("ibv_destroy_cq", "CQ", this);
    if (this.qpRefs > 0)
      fail("ibv_destroy_cq", "EBUSY", because({ kind: "cq-busy", qps: this.qpRefs }, { attribute: "cq" }));
    // The kernel's EBUSY first (as rxe: the QPs are checked before libibverbs waits on events).
    if (this.eventsGot > this.eventsAcked) throw unackedEventsError(this.eventsGot - this.eventsAcked);
    this.destroyed = true;
    // uverbs drops the CQ's unread events, async and completion (ib_uverbs_release_ucq).
    this.context.dropAsync((ev) => ev.cq === this);
    if (this.channel) {
      this.channel.cqs--;
      this.channel.drop(this);
    }
  }
}

export class CompChannelImpl implements CompChannel {
  destroyed = false;
  /** CQs attached (destroy is EBUSY while any). */
  cqs = 0;
  private events: SimCq[] = [];

  constructor(readonly context: SimContext) {}

  /** Forgets `cq`'s completion events not yet got (the CQ is being destroyed). */
  drop(cq: SimCq): void {
    this.events = this.events.filter((c) => c !== cq);
  }

  fire(cq: SimCq): void {
    this.events.push(cq);
    const clock = this.context.world.clock;
    if (clock.pendingWaiters) clock.poke();
  }

  getCqEvent(timeoutMs?: number): Promise<Cq | null> {
    alive("ibv_get_cq_event", "completion channel", this);
    if (timeoutMs !== undefined && (typeof timeoutMs !== "number" || Number.isNaN(timeoutMs)))
      throw typeErr("ibv_get_cq_event", "timeoutMs", "number", timeoutMs);
    checkWait(this.context.world.clock, "ibv_get_cq_event", "timeoutMs", timeoutMs);
    return waitFor<Cq | null>(
      this.context.world.clock,
      () => {
        const cq = this.events.shift();
        if (cq) cq.eventsGot++;
        return cq;
      },
      timeoutMs,
      () => null,
    );
  }

  destroy(): void {
    alive("ibv_destroy_comp_channel", "completion channel", this);
    if (this.cqs > 0)
      fail(
        "ibv_destroy_comp_channel",
        "EBUSY",
        because({ kind: "channel-busy", cqs: this.cqs }, { attribute: "channel" }),
      );
    this.destroyed = true;
  }
}
