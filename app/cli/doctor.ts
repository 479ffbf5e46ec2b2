/**
 * `verbslab doctor`: what a learner needs to know before starting, each finding with what
 * to do about it. Everything it looks at goes through a SystemProbe so tests can show it
 * a machine without RDMA, one with rxe, and so on.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { networkInterfaces, release, userInfo } from "node:os";
import { ADDON_PATH, loadAddon } from "../../native/addon.js";
import { driverOf, loadNativeBackend } from "../../native/index.js";
import { loadCourse } from "../../lessons/load.js";
import { lessonsWithRxeFacts } from "../../lessons/rxe-only.js";
import type { Lesson } from "../../lessons/schema.js";

export interface SystemProbe {
  kernel: string;
  uid: number;
  /** The user's name and supplementary groups (who would open /dev/infiniband as non-root). */
  user: string;
  groups: number[];
  /** stat(2) of a path: mode bits, owner and group (null: missing). */
  stat(path: string): { mode: number; uid: number; gid: number } | null;
  readFile(path: string): string | null;
  listDir(path: string): string[] | null;
  /** Where a symbolic link points (null: not a link, or missing). */
  readLink(path: string): string | null;
  exists(path: string): boolean;
  /** Runs a command; null if it does not exist. */
  run(cmd: string, args: string[]): { status: number | null; stdout: string; stderr: string } | null;
  /** Interface name → IPv4 addresses. */
  ipv4(): Record<string, string[]>;
  /** The native addon: built, loaded, and what loadNativeBackend() made of this machine. */
  native(): NativeProbe;
}

export interface NativeProbe {
  /** Where the addon is built (native/build/Release/verbslab_native.node). */
  addonPath: string;
  built: boolean;
  /** Why the built addon does not load (null: it loads, with libibverbs). */
  loadError: string | null;
  /** loadNativeBackend(): the devices it sees, or why the backend is unavailable. */
  backend: { devices: string[] } | { unavailable: string };
}

export type Status = "ok" | "warn" | "fail" | "info";

export interface Finding {
  status: Status;
  title: string;
  detail?: string[];
  /** What to do about it. */
  fix?: string;
  /** The facts behind the finding, for --json (e.g. the native addon's). */
  facts?: Record<string, unknown>;
}

export function systemProbe(): SystemProbe {
  return {
    kernel: release(),
    uid: process.getuid?.() ?? -1,
    user: (() => {
      try {
        return userInfo().username;
      } catch {
        return process.env.USER ?? "<user>";
      }
    })(),
    groups: process.getgroups?.() ?? [],
    stat: (p) => {
      try {
        const st = statSync(p);
        return { mode: st.mode, uid: st.uid, gid: st.gid };
      } catch {
        return null;
      }
    },
    readFile: (p) => {
      try {
        return readFileSync(p, "utf8");
      } catch {
        return null;
      }
    },
    listDir: (p) => {
      try {
        return readdirSync(p);
      } catch {
        return null;
      }
    },
    exists: (p) => existsSync(p),
    readLink: (p) => {
      try {
        return readlinkSync(p);
      } catch {
        return null;
      }
    },
    run: (cmd, args) => {
      try {
        const stdout = execFileSync(cmd, args, {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe"],
          timeout: 10_000,
        });
        return { status: 0, stdout, stderr: "" };
      } catch (e) {
        const err = e as { code?: string; status?: number | null; stdout?: string; stderr?: string };
        if (err.code === "ENOENT") return null;
        return { status: err.status ?? null, stdout: String(err.stdout ?? ""), stderr: String(err.stderr ?? "") };
      }
    },
    ipv4: () => {
      const out: Record<string, string[]> = {};
      for (const [name, addrs] of Object.entries(networkInterfaces()))
        out[name] = (addrs ?? []).filter((a) => a.family === "IPv4").map((a) => a.address);
      return out;
    },
    native: () => {
      const built = existsSync(ADDON_PATH);
      const addon = built ? loadAddon() : null;
      const loadError = addon && "missing" in addon ? addon.missing : null;
      const r = loadNativeBackend();
      return {
        addonPath: ADDON_PATH,
        built,
        loadError,
        backend: "unavailable" in r ? r : { devices: r.backend.getDeviceList().map((d) => d.name) },
      };
    },
  };
}

const IB = "/sys/class/infiniband";
const MTU_NAMES: Record<string, string> = { "1": "256", "2": "512", "3": "1024", "4": "2048", "5": "4096" };

interface PortInfo {
  port: number;
  state?: string;
  activeMtu?: string;
  linkLayer?: string;
}

/** Ports of each device from `ibv_devinfo` (state, active MTU, link layer). */
function parseDevinfo(text: string): Map<string, PortInfo[]> {
  const out = new Map<string, PortInfo[]>();
  let dev = "";
  let port: PortInfo | null = null;
  for (const line of text.split("\n")) {
    let m = /^hca_id:\s*(\S+)/.exec(line);
    if (m) {
      dev = m[1]!;
      out.set(dev, []);
      continue;
    }
    m = /^\s*port:\s*(\d+)/.exec(line);
    if (m && dev) {
      port = { port: Number(m[1]) };
      out.get(dev)!.push(port);
      continue;
    }
    if (!port) continue;
    m = /^\s*state:\s*(\S+)/.exec(line);
    if (m) port.state = m[1]!;
    m = /^\s*active_mtu:\s*(\d+)/.exec(line);
    if (m) port.activeMtu = m[1]!;
    m = /^\s*link_layer:\s*(\S+)/.exec(line);
    if (m) port.linkLayer = m[1]!;
  }
  return out;
}

function gidTable(
  p: SystemProbe,
  dev: string,
  port: number,
): { index: number; gid: string; type: string; ndev: string }[] {
  const base = `${IB}/${dev}/ports/${port}`;
  const out: { index: number; gid: string; type: string; ndev: string }[] = [];
  const names = p.listDir(`${base}/gids`) ?? [];
  for (const n of names.map(Number).sort((a, b) => a - b)) {
    const gid = p.readFile(`${base}/gids/${n}`)?.trim();
    if (!gid || /^[0:]+$/.test(gid)) continue;
    out.push({
      index: n,
      gid,
      type: p.readFile(`${base}/gid_attrs/types/${n}`)?.trim() ?? "?",
      ndev: p.readFile(`${base}/gid_attrs/ndevs/${n}`)?.trim() ?? "?",
    });
  }
  return out;
}

/** "fe80:0000:…:0a00:0001" style or "::ffff:10.0.0.1": is it an IPv4-mapped GID? */
function ipv4Mapped(gid: string): string | null {
  const g = gid.toLowerCase();
  let m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(g);
  if (m) return m[1]!;
  m = /^0000:0000:0000:0000:0000:ffff:([0-9a-f]{4}):([0-9a-f]{4})$/.exec(g);
  if (m) {
    const a = parseInt(m[1]!, 16);
    const b = parseInt(m[2]!, 16);
    return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
  }
  return null;
}

/**
 * For each device whose driver is not rxe: which lessons state facts about rxe (rounding,
 * flags, error-completion opcodes, timers) that its driver may not share. Their goals are
 * explained there, not judged; the lesson text says what a real NIC may do instead.
 */
export function rxeFactsFindings(p: SystemProbe, devs: string[], lessons: Lesson[]): Finding[] {
  const facts = lessonsWithRxeFacts(lessons);
  const out: Finding[] = [];
  for (const dev of devs) {
    const driver = driverOf(dev, p.readLink);
    if (driver === "rxe") continue;
    if (driver === undefined) {
      out.push({
        status: "info",
        title: `${dev}: its driver could not be told (no ${IB}/${dev}/device/driver link), so lessons judge it as rxe`,
      });
      continue;
    }
    out.push({
      status: "info",
      title: `${dev} (${driver}): ${facts.length} lesson(s) state facts about rxe that ${driver} may not share; there they are explained, not judged`,
      detail: facts.map((l) => `${l.folder} (step${l.steps.length > 1 ? "s" : ""} ${l.steps.join(", ")}): ${l.title}`),
    });
  }
  return out;
}

export function doctor(p: SystemProbe, lessons: Lesson[] = loadCourse().lessons): Finding[] {
  const f: Finding[] = [];

  // libibverbs: the native backend and the C export need it.
  const ld = p.run("ldconfig", ["-p"]);
  const hasLib =
    (ld?.stdout.includes("libibverbs.so.1") ?? false) ||
    p.exists("/usr/lib/x86_64-linux-gnu/libibverbs.so.1") ||
    p.exists("/lib/x86_64-linux-gnu/libibverbs.so.1");
  const hasHeaders = p.exists("/usr/include/infiniband/verbs.h");
  f.push(
    hasLib
      ? {
          status: hasHeaders ? "ok" : "warn",
          title: `libibverbs found${hasHeaders ? " (with headers)" : ", but not its headers"}`,
          ...(!hasHeaders && {
            fix: "sudo apt-get install libibverbs-dev   (needed to build the native backend and compile exported C)",
          }),
        }
      : {
          status: "fail",
          title: "libibverbs not found: only the simulator is available",
          fix: "sudo apt-get install libibverbs-dev ibverbs-utils rdma-core",
        },
  );

  f.push(nativeFinding(p.native()));

  // Devices.
  const devs = p.listDir(IB) ?? [];
  const usedNetdevs = new Set<string>();
  const devinfo = p.run("ibv_devinfo", ["-v"]);
  const ports = devinfo && devinfo.status === 0 ? parseDevinfo(devinfo.stdout) : new Map<string, PortInfo[]>();
  if (!p.exists(IB)) {
    f.push({
      status: "fail",
      title: "this kernel has no RDMA support (/sys/class/infiniband is missing)",
      detail: [
        devinfo
          ? `ibv_devinfo: ${(devinfo.stderr || devinfo.stdout).trim() || "no devices"}`
          : "ibv_devinfo not installed",
      ],
      fix: `use the simulator (verbslab run --backend sim), or real rxe in the lab VM: scripts/rxe-vm/run.sh`,
    });
  } else if (devs.length === 0) {
    f.push({
      status: "warn",
      title: "RDMA is supported but no device exists yet",
      fix: "add a soft-RoCE device (see the rdma_rxe finding below)",
    });
  }
  for (const dev of devs) {
    const portNames = (p.listDir(`${IB}/${dev}/ports`) ?? []).map(Number).sort((a, b) => a - b);
    for (const port of portNames) {
      const base = `${IB}/${dev}/ports/${port}`;
      const state = p.readFile(`${base}/state`)?.trim() ?? "?";
      const link = p.readFile(`${base}/link_layer`)?.trim() ?? "?";
      const info = ports.get(dev)?.find((x) => x.port === port);
      const mtu = info?.activeMtu ? (MTU_NAMES[info.activeMtu] ?? info.activeMtu) : undefined;
      const active = /ACTIVE/.test(state);
      const gids = gidTable(p, dev, port);
      for (const g of gids) usedNetdevs.add(g.ndev);
      const v2ipv4 = gids.filter((g) => /v2/i.test(g.type) && ipv4Mapped(g.gid));
      f.push({
        status: active ? "ok" : "warn",
        title: `${dev} port ${port}: ${state}, link layer ${link}${mtu ? `, active MTU ${mtu}` : ""}`,
        detail: gids.length
          ? gids.map(
              (g) =>
                `GID[${g.index}] ${g.gid}  ${g.type}  ${g.ndev}${/v2/i.test(g.type) && ipv4Mapped(g.gid) ? "  ← RoCEv2 IPv4" : ""}`,
            )
          : ["no GIDs"],
        ...(!active && {
          fix: `bring its netdev up: sudo ip link set ${gids[0]?.ndev ?? "<netdev>"} up`,
        }),
      });
      if (active && link === "Ethernet")
        f.push(
          v2ipv4.length
            ? {
                status: "info",
                title: `${dev}: use sgid_index ${v2ipv4[0]!.index} for RoCEv2 over IPv4 (${ipv4Mapped(v2ipv4[0]!.gid)})`,
              }
            : {
                status: "warn",
                title: `${dev}: no RoCEv2 IPv4 GID (only link-local IPv6): use sgid_index 0, or give its netdev an IPv4 address`,
                fix: `sudo ip addr add 10.0.0.1/24 dev ${gids[0]?.ndev ?? "<netdev>"}`,
              },
        );
    }
  }

  f.push(...rxeFactsFindings(p, devs, lessons));

  // rdma_rxe: loaded, loadable, or not here.
  const loaded = p.exists("/sys/module/rdma_rxe");
  const modDir = `/lib/modules/${p.kernel}`;
  const moduleFile =
    p.exists(`${modDir}/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko`) ||
    p.exists(`${modDir}/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko.xz`) ||
    p.exists(`${modDir}/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko.zst`);
  const candidates = Object.entries(p.ipv4())
    .filter(([name]) => name !== "lo" && !/^(ifb|docker|virbr|br-|tun|tap)/.test(name))
    // An interface that already carries an RDMA device needs no other.
    .filter(([name]) => !usedNetdevs.has(name))
    .filter(([name]) => (p.readFile(`/sys/class/net/${name}/type`)?.trim() ?? "1") === "1");
  const haveRdmaTool = p.run("rdma", ["-V"]) !== null;
  const existingRxe = devs.filter((d) => d.startsWith("rxe"));
  const addCommands = candidates.map(
    ([name], i) => `sudo rdma link add rxe${existingRxe.length + i} type rxe netdev ${name}`,
  );
  if (loaded) {
    f.push({
      status: "ok",
      title: `rdma_rxe is loaded${existingRxe.length ? ` (${existingRxe.join(", ")})` : ""}`,
      ...(!existingRxe.length &&
        addCommands.length && { fix: `add a device on an Ethernet interface: ${addCommands[0]}` }),
      ...(existingRxe.length && addCommands.length
        ? { detail: addCommands.map((c) => `another device, if you want one: ${c}`) }
        : addCommands.length > 1 && { detail: addCommands }),
    });
  } else if (moduleFile) {
    f.push({
      status: "warn",
      title: "rdma_rxe can be loaded but is not",
      fix: `sudo modprobe rdma_rxe && ${addCommands[0] ?? "sudo rdma link add rxe0 type rxe netdev <interface>"}`,
      ...(addCommands.length > 1 && { detail: addCommands }),
    });
  } else {
    f.push({
      status: "fail",
      title: `rdma_rxe cannot be loaded here (no module for kernel ${p.kernel})`,
      detail: addCommands.length ? [`on a kernel with rdma_rxe you would run: ${addCommands.join("; ")}`] : [],
      fix: "sudo apt-get install linux-image-amd64 (Debian's kernel has rdma_rxe), or use the lab VM: scripts/rxe-vm/run.sh",
    });
  }
  if (!haveRdmaTool)
    f.push({ status: "warn", title: "the `rdma` tool is missing", fix: "sudo apt-get install iproute2" });

  // Device files.
  const uverbs = (p.listDir("/dev/infiniband") ?? []).filter((n) => n.startsWith("uverbs"));
  if (devs.length && !uverbs.length)
    f.push({
      status: "fail",
      title: "no /dev/infiniband/uverbs* device files",
      fix: "sudo modprobe ib_uverbs",
    });

  f.push(...uverbsPermissions(p, uverbs));
  f.push(...roceFirewall(p));
  f.push(...gidTypeFindings(p, devs));
  f.push(...mtuFindings(p, devs, ports));

  // memlock.
  const limits = p.readFile("/proc/self/limits") ?? "";
  const m = /Max locked memory\s+(\S+)\s+(\S+)/.exec(limits);
  const soft = m?.[1];
  const bytes = soft === "unlimited" ? Infinity : Number(soft ?? NaN);
  if (p.uid === 0) {
    f.push({
      status: "ok",
      title: `memlock limit ${fmtBytes(bytes)} (root: the limit does not apply to ibv_reg_mr)`,
      detail: [
        `a non-root user is held to their own limit (ENOMEM past it, EPERM at 0): give them the line '${memlockLine("<user>")}' in /etc/security/limits.conf`,
      ],
    });
  } else if (Number.isFinite(bytes) && bytes < 64 * 1024 * 1024) {
    f.push({
      status: "warn",
      title: `memlock limit ${fmtBytes(bytes)}: ibv_reg_mr fails with ENOMEM past it (EPERM if 0)`,
      fix: `raise it: add the line '${memlockLine(p.user)}' to /etc/security/limits.conf (or a file in /etc/security/limits.d/), then log in again`,
    });
  } else {
    f.push({ status: "ok", title: `memlock limit ${fmtBytes(bytes)}` });
  }
  return f;
}

/** The limits.conf line that lifts the memlock limit for `user` (both soft and hard: "-"). */
export function memlockLine(user: string): string {
  return `${user}  -  memlock  unlimited`;
}

/**
 * Can a non-root user open the uverbs device files? libibverbs opens /dev/infiniband/uverbsN
 * read-write; Debian's rdma-core udev rule makes them 0666, other setups 0660 group rdma.
 */
export function uverbsPermissions(p: SystemProbe, uverbs: string[]): Finding[] {
  const out: Finding[] = [];
  for (const n of uverbs) {
    const path = `/dev/infiniband/${n}`;
    const st = p.stat(path);
    if (!st) continue;
    const mode = (st.mode & 0o777).toString(8).padStart(4, "0");
    const others = (st.mode & 0o006) === 0o006;
    const group = (st.mode & 0o060) === 0o060;
    const owner = (st.mode & 0o600) === 0o600;
    const forUser = p.uid === 0 || others || (group && p.groups.includes(st.gid)) || (owner && st.uid === p.uid);
    if (others) out.push({ status: "ok", title: `${path} is mode ${mode}: any user can open it` });
    else if (group)
      out.push({
        status: forUser ? "ok" : "warn",
        title: `${path} is mode ${mode}, group ${st.gid}: only members of that group (and root) can open it${p.uid === 0 ? "" : forUser ? ", you are one" : "; you are not"}`,
        ...(!forUser && {
          fix: `sudo usermod -aG $(getent group ${st.gid} | cut -d: -f1) ${p.user}, then log in again`,
        }),
      });
    else
      out.push({
        status: p.uid === 0 ? "warn" : "fail",
        title: `${path} is mode ${mode}: only root can open it (ibv_open_device fails with EACCES for anyone else)`,
        fix: `sudo chmod 0666 ${path}, or for good: a udev rule KERNEL=="uverbs*", MODE="0666" in /etc/udev/rules.d/90-rdma.rules`,
      });
  }
  return out;
}

/** Firewall rules that mention UDP 4791 (RoCE v2): a DROP there is "Connection timed out" (RETRY_EXC_ERR). */
export function roceFirewall(p: SystemProbe): Finding[] {
  const sources: [string, string[]][] = [
    ["nft", ["list", "ruleset"]],
    ["iptables-save", []],
    ["ip6tables-save", []],
  ];
  const hits: string[] = [];
  const unread: string[] = [];
  let read = 0;
  for (const [cmd, args] of sources) {
    const r = p.run(cmd, args);
    if (r === null) continue;
    if (r.status !== 0) {
      unread.push(
        `${cmd}${args.length ? " " + args.join(" ") : ""}: ${(r.stderr || r.stdout).trim().split("\n")[0] || `exit ${r.status}`}`,
      );
      continue;
    }
    read++;
    for (const line of r.stdout.split("\n")) if (/\b4791\b/.test(line)) hits.push(`${cmd}: ${line.trim()}`);
  }
  if (hits.length)
    return [
      {
        status: "warn",
        title: `a firewall rule mentions UDP 4791 (RoCE v2): if it drops, RC work fails with IBV_WC_RETRY_EXC_ERR after timeout × (retry_cnt + 1)`,
        detail: hits,
        fix: "let RoCE v2 in: e.g. sudo nft insert rule inet filter input udp dport 4791 accept (or remove the rule)",
      },
    ];
  if (read === 0 && unread.length)
    return [
      {
        status: "info",
        title:
          "could not read the firewall rules (reading them needs root): a rule dropping UDP 4791 would not show here",
        detail: unread,
        fix: "sudo nft list ruleset | grep 4791; sudo iptables-save | grep 4791",
      },
    ];
  if (read === 0) return [];
  return [
    { status: "ok", title: "no firewall rule mentions UDP 4791 (RoCE v2)", ...(unread.length && { detail: unread }) },
  ];
}

/** Which GID indexes are RoCE v1 and which v2, per port: both ends must use the same type (and a v2 index for IPv4/UDP). */
export function gidTypeFindings(p: SystemProbe, devs: string[]): Finding[] {
  const out: Finding[] = [];
  for (const dev of devs) {
    for (const port of (p.listDir(`${IB}/${dev}/ports`) ?? []).map(Number).sort((a, b) => a - b)) {
      const gids = gidTable(p, dev, port);
      if (!gids.length) continue;
      const v2 = gids.filter((g) => /v2/i.test(g.type)).map((g) => g.index);
      const v1 = gids.filter((g) => /v1|^IB\/RoCE$/i.test(g.type) && !/v2/i.test(g.type)).map((g) => g.index);
      out.push({
        status: v2.length ? "info" : "warn",
        title: `${dev} port ${port} GID types: RoCE v2 at index ${v2.join(", ") || "none"}; RoCE v1 at index ${v1.join(", ") || "none"}`,
        detail: [
          "both ends of a connection must use GIDs of one type; v2 travels as UDP port 4791, v1 as raw Ethernet (ethertype 0x8915) that no IP router passes",
        ],
        ...(!v2.length && { fix: "use a RoCE v2 GID index (rxe makes only v2 GIDs; check the netdev's addresses)" }),
      });
    }
  }
  return out;
}

const IB_MTUS = [256, 512, 1024, 2048, 4096];

/**
 * Each port's active_mtu next to its netdev's MTU (rxe: the largest IB MTU that fits the
 * netdev MTU less its headers), and devices on one machine whose netdev MTUs differ: a path_mtu
 * above the smaller side's loses every full-size packet at that side (sim/RXE-FACTS.md §11).
 */
export function mtuFindings(p: SystemProbe, devs: string[], ports: Map<string, PortInfo[]>): Finding[] {
  const out: Finding[] = [];
  const seen: { dev: string; ndev: string; mtu: number; active: number }[] = [];
  for (const dev of devs) {
    for (const info of ports.get(dev) ?? []) {
      const ndev = gidTable(p, dev, info.port)[0]?.ndev;
      const mtu = Number(p.readFile(`/sys/class/net/${ndev}/mtu`)?.trim() ?? NaN);
      const active = Number(info.activeMtu ? (MTU_NAMES[info.activeMtu] ?? info.activeMtu) : NaN);
      if (!ndev || !Number.isFinite(mtu) || !Number.isFinite(active)) continue;
      seen.push({ dev, ndev, mtu, active });
      const fits = IB_MTUS.filter((m) => m + 80 <= mtu).at(-1) ?? 256;
      out.push({
        status: active > fits ? "warn" : "info",
        title: `${dev} port ${info.port}: active_mtu ${active} on ${ndev} with MTU ${mtu}${active > fits ? ` (bigger than ${mtu} bytes less RoCE's headers take: packets will not fit)` : fits === active && fits < 4096 ? `; MTU ${IB_MTUS.filter((m) => m > active).map((m) => m + 80)[0]} or more on ${ndev} would give ${IB_MTUS[IB_MTUS.indexOf(active) + 1]}` : ""}`,
        detail: ["a QP's path_mtu should not exceed the active_mtu of either end (ibv_query_port on both)"],
      });
    }
  }
  const mtus = new Set(seen.map((s) => s.mtu));
  if (mtus.size > 1) {
    const low = seen.reduce((a, b) => (b.mtu < a.mtu ? b : a));
    out.push({
      status: "warn",
      title: `netdev MTUs differ: ${seen.map((s) => `${s.ndev} ${s.mtu}`).join(", ")}`,
      detail: [
        `a QP whose path_mtu exceeds ${low.dev}'s active_mtu (${low.active}) loses its full-size packets at ${low.ndev}: the sender retries, then IBV_WC_RETRY_EXC_ERR`,
      ],
      fix: `set one MTU on both sides (sudo ip link set ${low.ndev} mtu ${Math.max(...mtus)}), or use path_mtu ≤ ${low.active}`,
    });
  }
  return out;
}

/** Whether the native addon is built, loads, and finds a device; if not, why and what to do. */
function nativeFinding(n: NativeProbe): Finding {
  const facts = {
    native: {
      addon: n.addonPath,
      built: n.built,
      loads: n.built && n.loadError === null,
      ...("devices" in n.backend ? { devices: n.backend.devices } : { unavailable: n.backend.unavailable }),
    },
  };
  if (!n.built)
    return {
      status: "fail",
      title: `native addon not built (${n.addonPath} is missing): only the simulator is available`,
      fix: "sudo apt-get install libibverbs-dev cmake g++ && npm run build:native",
      facts,
    };
  if (n.loadError !== null)
    return {
      status: "fail",
      title: "native addon built, but it does not load",
      detail: [n.loadError],
      fix: "sudo apt-get install libibverbs1, then npm run build:native",
      facts,
    };
  if ("unavailable" in n.backend) {
    // The reason's first sentence says what failed; the rest, how to get real verbs.
    const [what, ...how] = n.backend.unavailable.split(/(?<=\.)\s+(?=[A-Z])/);
    return {
      status: "fail",
      title: `native addon built and loads, but the native backend is unavailable: ${what}`,
      detail: how,
      fix: "here, use the simulator (--backend sim; it behaves like rdma_rxe)",
      facts,
    };
  }
  return {
    status: "ok",
    title: `native addon built and loads; the native backend sees ${n.backend.devices.join(", ")}`,
    facts,
  };
}

function fmtBytes(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? "unknown" : "unlimited";
  if (n >= 1 << 30) return `${n / (1 << 30)} GiB`;
  if (n >= 1 << 20) return `${n / (1 << 20)} MiB`;
  if (n >= 1 << 10) return `${n / (1 << 10)} KiB`;
  return `${n} bytes`;
}

const MARK: Record<Status, string> = { ok: "✓", warn: "!", fail: "✗", info: "·" };

export function formatFindings(findings: Finding[]): string {
  const out: string[] = [];
  for (const x of findings) {
    out.push(`${MARK[x.status]} ${x.title}`);
    for (const d of x.detail ?? []) out.push(`    ${d}`);
    if (x.fix) out.push(`    → ${x.fix}`);
  }
  return out.join("\n") + "\n";
}
