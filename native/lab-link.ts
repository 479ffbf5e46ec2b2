/**
 * The lab link's faults on real rxe (verbs/lab.ts), with the system's own tools: `tc qdisc …
 * netem` on each veth's egress (loss, delay, reorder), `ip link set … mtu` per side, an
 * nftables table dropping UDP 4791 on input, and another dropping the first packet with a
 * chosen BTH PSN (`dropPsn`). Only on the network VerbsLab itself built (the lab
 * VM's veth pair, scripts/rxe-vm/guest-job.sh); anywhere else every call is refused (EPERM)
 * saying why, so a learner's real NIC is never touched. Whatever was changed is undone by
 * `clearLink` and when the process exits.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { VerbsError, errnos } from "../verbs/errors.js";
import { CLEAN_LINK, SET_LINK_VERB, applyLinkFaults, copyLink, type LabLink, type LinkState } from "../verbs/lab.js";
import { because, type VerbFailure } from "../verbs/verb-failure.js";

/** The lab's two sides: device, its netdev and the address guest-job.sh gives it. */
export const LAB_SIDES = [
  { device: "rxe0", netdev: "veth0", address: "10.77.0.1", peer: "veth1" },
  { device: "rxe1", netdev: "veth1", address: "10.77.0.2", peer: "veth0" },
] as const;

/** The nftables table VerbsLab owns (deleting it removes only VerbsLab's rule). */
export const NFT_TABLE = "verbslab_lab";
/**
 * The table of `dropPsn`'s rule, apart from NFT_TABLE so that blocking UDP 4791 on or off
 * does not rebuild it (that would empty its set and so re-arm a drop that already happened).
 */
export const NFT_PSN_TABLE = "verbslab_lab_psn";

/** Runs a system command; throws with its stderr on failure. */
export type Run = (cmd: string, args: string[], input?: string) => string;

const defaultRun: Run = (cmd, args, input) =>
  execFileSync(cmd, args, { input, encoding: "utf8", stdio: ["pipe", "pipe", "pipe"], timeout: 30_000 });

/** Where the lab check looks (tests point it at a fake tree). */
export interface LabEnv {
  env: NodeJS.ProcessEnv;
  sysfsNet: string;
  sysfsInfiniband: string;
  uid: number;
}

const realEnv = (): LabEnv => ({
  env: process.env,
  sysfsNet: "/sys/class/net",
  sysfsInfiniband: "/sys/class/infiniband",
  uid: process.getuid?.() ?? -1,
});

/**
 * Why faults may not be injected here, or null on the lab network: inside the lab VM
 * (VERBSLAB_IN_RXE_VM=1), as root, with veth0/veth1 a veth pair holding 10.77.0.1 and
 * 10.77.0.2 and rxe0/rxe1 bound to them.
 */
export function labRefusal(run: Run, where: LabEnv = realEnv()): VerbFailure | null {
  if (where.env.VERBSLAB_IN_RXE_VM !== "1") return { kind: "off-lab", check: { kind: "not-vm" } };
  if (where.uid !== 0) return { kind: "off-lab", check: { kind: "not-root" } };
  for (const s of LAB_SIDES) {
    if (!existsSync(`${where.sysfsNet}/${s.netdev}`))
      return { kind: "off-lab", check: { kind: "no-netdev", netdev: s.netdev } };
    const ndevs = `${where.sysfsInfiniband}/${s.device}/ports/1/gid_attrs/ndevs`;
    let bound = false;
    try {
      bound = readdirSync(ndevs).some((f) => {
        try {
          return readFileSync(`${ndevs}/${f}`, "utf8").trim() === s.netdev;
        } catch {
          return false;
        }
      });
    } catch {
      bound = false;
    }
    if (!bound) return { kind: "off-lab", check: { kind: "not-bound", device: s.device, netdev: s.netdev } };
    let info: {
      link_type?: string;
      linkinfo?: { info_kind?: string };
      link?: string;
      addr_info?: { local?: string }[];
    }[];
    try {
      info = JSON.parse(run("ip", ["-j", "-d", "addr", "show", "dev", s.netdev]));
    } catch (e) {
      return { kind: "off-lab", check: { kind: "ip-failed", netdev: s.netdev, error: (e as Error).message } };
    }
    const i = info[0];
    if (i?.linkinfo?.info_kind !== "veth") return { kind: "off-lab", check: { kind: "not-veth", netdev: s.netdev } };
    if (i.link !== undefined && i.link !== s.peer)
      return { kind: "off-lab", check: { kind: "wrong-peer", netdev: s.netdev, peer: i.link, expected: s.peer } };
    if (!i.addr_info?.some((a) => a.local === s.address))
      return { kind: "off-lab", check: { kind: "no-address", netdev: s.netdev, address: s.address } };
  }
  return null;
}

function netemArgs(s: LinkState): string[] | null {
  if (s.loss === 0 && s.delay === 0 && s.reorder === 0) return null;
  const a = ["netem", "limit", "10000"];
  if (s.delay > 0) a.push("delay", `${s.delay}ms`);
  if (s.reorder > 0) a.push("reorder", `${s.reorder * 100}%`);
  if (s.loss > 0) a.push("loss", "random", `${s.loss * 100}%`);
  return a;
}

const NFT_BLOCK = `table inet ${NFT_TABLE} {
  chain input {
    type filter hook input priority 0; policy accept;
    udp dport 4791 counter drop comment "VerbsLab: RoCE v2 blocked"
  }
}
`;

/**
 * Drops the first RoCE v2 packet whose BTH PSN is `psn`, once. `@th,136,24` is the PSN: the
 * BTH follows the 8-byte UDP header, and its PSN is its bytes 9-11 (after opcode, flags,
 * P_Key, a reserved byte, the dest QP and the AckReq byte), so bits 136-159 from the UDP
 * header. "Once": the rule puts a key into a one-element set as it drops, and matches only
 * while that key is not in it (checked with `unshare -n` on loopback: 5 packets with PSNs
 * 102 103 103 104 103 arrive as 102 103 104 103).
 */
export function nftDropPsn(psn: number): string {
  return `table inet ${NFT_PSN_TABLE} {
  set dropped {
    type inet_service
    size 1
    flags dynamic
  }
  chain input {
    type filter hook input priority 0; policy accept;
    udp dport 4791 @th,136,24 ${psn} udp dport != @dropped add @dropped { udp dport } counter drop comment "VerbsLab: PSN ${psn} dropped once"
  }
}
`;
}

/** LabLink on the lab VM's veth pair. */
export class NativeLabLink implements LabLink {
  #state: LinkState = copyLink(CLEAN_LINK);
  #original: { rxe0: number; rxe1: number } | null = null;
  #touched = false;
  #onExit = () => this.restore();
  // A signal that would kill the process: restore, then die of that signal as before.
  #onSignal = (sig: NodeJS.Signals) => {
    this.restore();
    process.kill(process.pid, sig);
  };
  readonly #run: Run;
  readonly #where: () => LabEnv;

  constructor(run: Run = defaultRun, where: () => LabEnv = realEnv) {
    this.#run = run;
    this.#where = where;
  }

  #check(): void {
    const why = labRefusal(this.#run, this.#where());
    if (why) throw new VerbsError(SET_LINK_VERB, errnos.EPERM, because(why));
  }

  #mtuNow(netdev: string): number {
    return Number(readFileSync(`${this.#where().sysfsNet}/${netdev}/mtu`, "utf8").trim());
  }

  getLink(): LinkState {
    return copyLink(this.#state);
  }

  setLink(faults: Parameters<LabLink["setLink"]>[0]): LinkState {
    // bad input is EINVAL wherever this runs
    if (applyLinkFaults(this.#state, faults).wire !== "rxe")
      throw new VerbsError(
        SET_LINK_VERB,
        errnos.EOPNOTSUPP,
        because({ kind: "link-wire-native" }, { attribute: "wire" }),
      );
    this.#check();
    if (this.#original === null) {
      this.#original = { rxe0: this.#mtuNow("veth0"), rxe1: this.#mtuNow("veth1") };
      this.#state.mtu = { ...this.#original };
    }
    const next = applyLinkFaults(this.#state, faults);
    this.#apply(next);
    return this.getLink();
  }

  clearLink(): LinkState {
    this.#check();
    this.#apply({ ...copyLink(CLEAN_LINK), mtu: { ...(this.#original ?? this.#state.mtu) } });
    return this.getLink();
  }

  /** Makes the system match `next`, changing only what differs; the state follows each step that succeeded. */
  #apply(next: LinkState): void {
    if (!this.#touched) {
      this.#touched = true;
      process.once("exit", this.#onExit);
      for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(sig, this.#onSignal);
    }
    const cur = this.#state;
    const netem = netemArgs(next);
    if (JSON.stringify(netem) !== JSON.stringify(netemArgs(cur))) {
      for (const s of LAB_SIDES) {
        if (netem) this.#run("tc", ["qdisc", "replace", "dev", s.netdev, "root", ...netem]);
        else this.#tryRun("tc", ["qdisc", "del", "dev", s.netdev, "root"]);
      }
      cur.loss = next.loss;
      cur.delay = next.delay;
      cur.reorder = next.reorder;
    }
    for (const s of LAB_SIDES) {
      const m = next.mtu[s.device];
      if (m !== cur.mtu[s.device]) {
        this.#run("ip", ["link", "set", "dev", s.netdev, "mtu", String(m)]);
        cur.mtu[s.device] = m;
      }
    }
    if (next.blockRoceUdp !== cur.blockRoceUdp) {
      this.#tryRun("nft", ["delete", "table", "inet", NFT_TABLE]);
      if (next.blockRoceUdp) this.#run("nft", ["-f", "-"], NFT_BLOCK);
      cur.blockRoceUdp = next.blockRoceUdp;
    }
    if (next.dropPsn !== cur.dropPsn) {
      this.#tryRun("nft", ["delete", "table", "inet", NFT_PSN_TABLE]);
      if (next.dropPsn !== null) this.#run("nft", ["-f", "-"], nftDropPsn(next.dropPsn));
      cur.dropPsn = next.dropPsn;
    }
  }

  #tryRun(cmd: string, args: string[]): void {
    try {
      this.#run(cmd, args);
    } catch {
      // Nothing to remove (no qdisc, no table) or a module built in: not an error.
    }
  }

  /** Undoes every change (best effort, synchronous: it runs from the process's exit handler too). */
  restore(): void {
    if (!this.#touched) return;
    try {
      this.#apply({ ...copyLink(CLEAN_LINK), mtu: { ...(this.#original ?? this.#state.mtu) } });
    } catch (e) {
      process.stderr.write(`verbslab: could not restore the lab link: ${(e as Error).message}\n`);
    }
  }
}
