/**
 * native/lab-link.ts off the lab VM: where it refuses (and why), and the exact tc/ip/nft
 * commands it runs on a fake lab network (a sysfs tree and an `ip` that answer as the lab
 * VM's do). The real commands run on real rxe in verbs/conformance/faults.test.ts.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { VerbsError } from "../../verbs/errors.js";
import { CLEAN_LINK } from "../../verbs/lab.js";
import { NFT_PSN_TABLE, NFT_TABLE, NativeLabLink, labRefusal, nftDropPsn, type LabEnv, type Run } from "../lab-link.js";
import { verbFailureText } from "../../verbs/verb-failure.js";

function fakeLab(opts: { inVm?: boolean; uid?: number; veth?: boolean } = {}) {
  const root = mkdtempSync(join(tmpdir(), "verbslab-lab-"));
  const net = join(root, "net");
  const ib = join(root, "infiniband");
  for (const [i, dev] of ["rxe0", "rxe1"].entries()) {
    mkdirSync(join(net, `veth${i}`), { recursive: true });
    writeFileSync(join(net, `veth${i}`, "mtu"), "1500\n");
    mkdirSync(join(ib, dev, "ports/1/gid_attrs/ndevs"), { recursive: true });
    writeFileSync(join(ib, dev, "ports/1/gid_attrs/ndevs/0"), `veth${i}\n`);
  }
  const calls: string[] = [];
  const run: Run = (cmd, args, input) => {
    const what = (t: string) =>
      /@th,136,24 (\d+)/.exec(t)?.[0].replace("@th,136,24", "drop PSN") ??
      (t.includes("udp dport 4791") ? "drop 4791" : "?");
    calls.push([cmd, ...args].join(" ") + (input ? ` <<${what(input)}` : ""));
    if (cmd === "ip" && args[0] === "-j") {
      const dev = args.at(-1)!;
      const i = dev === "veth0" ? 0 : 1;
      return JSON.stringify([
        {
          ifname: dev,
          link: `veth${1 - i}`,
          linkinfo: { info_kind: opts.veth === false ? "bridge" : "veth" },
          addr_info: [{ local: `10.77.0.${i + 1}` }],
        },
      ]);
    }
    if (cmd === "ip" && args[0] === "link") writeFileSync(join(net, args[3]!, "mtu"), `${args[5]}\n`);
    return "";
  };
  const where = (): LabEnv => ({
    env: opts.inVm === false ? {} : { VERBSLAB_IN_RXE_VM: "1" },
    sysfsNet: net,
    sysfsInfiniband: ib,
    uid: opts.uid ?? 0,
  });
  return { run, where, calls };
}

describe("the lab link on native", () => {
  it("refuses outside the lab VM, as non-root, and on a netdev that is not the lab's veth: EPERM saying why", () => {
    for (const [opts, why] of [
      [{ inVm: false }, /only on the lab network VerbsLab creates/],
      [{ uid: 1000 }, /not root/],
      [{ veth: false }, /veth0 is not a veth/],
    ] as const) {
      const f = fakeLab(opts);
      expect(verbFailureText(labRefusal(f.run, f.where())!)).toMatch(why);
      const lab = new NativeLabLink(f.run, f.where);
      const err = (() => {
        try {
          lab.setLink({ loss: 0.01 });
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(VerbsError);
      expect((err as VerbsError).code).toBe("EPERM");
      expect((err as VerbsError).reason).toMatch(why);
      expect(f.calls.filter((c) => !c.startsWith("ip -j"))).toEqual([]);
    }
  });

  it("bad input is EINVAL naming the field, even where faults are refused", () => {
    const f = fakeLab({ inVm: false });
    const lab = new NativeLabLink(f.run, f.where);
    expect(() => lab.setLink({ mtu: { rxe0: 100 } })).toThrow(
      expect.objectContaining({ code: "EINVAL", attribute: "mtu.rxe0" }),
    );
  });

  it('a wire model is the simulator\'s: 25GbE is EOPNOTSUPP naming wire, and runs nothing; "rxe" (what the link is) is accepted', () => {
    const f = fakeLab();
    const lab = new NativeLabLink(f.run, f.where);
    expect(() => lab.setLink({ wire: "25GbE" })).toThrow(
      expect.objectContaining({ code: "EOPNOTSUPP", attribute: "wire", reason: expect.stringMatching(/host's speed/) }),
    );
    expect(f.calls).toEqual([]);
    expect(lab.setLink({ wire: "rxe" }).wire).toBe("rxe");
    expect(() => lab.setLink({ wire: "10GbE" as never })).toThrow(
      expect.objectContaining({ code: "EINVAL", attribute: "wire" }),
    );
  });

  it("on the lab network: netem on both veths, the MTU per side, the nft table; clearLink undoes each", () => {
    const f = fakeLab();
    const lab = new NativeLabLink(f.run, f.where);
    expect(lab.setLink({ loss: 0.05, delay: 5, reorder: 0.25, mtu: { rxe1: 1200 }, blockRoceUdp: true })).toEqual({
      loss: 0.05,
      delay: 5,
      reorder: 0.25,
      mtu: { rxe0: 1500, rxe1: 1200 },
      blockRoceUdp: true,
      dropPsn: null,
      wire: "rxe",
    });
    const acts = () => f.calls.filter((c) => !c.startsWith("ip -j"));
    expect(acts()).toEqual([
      "tc qdisc replace dev veth0 root netem limit 10000 delay 5ms reorder 25% loss random 5%",
      "tc qdisc replace dev veth1 root netem limit 10000 delay 5ms reorder 25% loss random 5%",
      "ip link set dev veth1 mtu 1200",
      `nft delete table inet ${NFT_TABLE}`,
      "nft -f - <<drop 4791",
    ]);
    f.calls.length = 0;
    // Only what changes is touched.
    lab.setLink({ mtu: { rxe1: 1200 } });
    expect(acts()).toEqual([]);
    expect(lab.clearLink()).toEqual(CLEAN_LINK);
    expect(acts()).toEqual([
      "tc qdisc del dev veth0 root",
      "tc qdisc del dev veth1 root",
      "ip link set dev veth1 mtu 1500",
      `nft delete table inet ${NFT_TABLE}`,
    ]);
  });

  it("dropPsn: its own nft table, rebuilt only when the PSN changes (blocking UDP 4791 leaves it); null and clearLink delete it", () => {
    const f = fakeLab();
    const lab = new NativeLabLink(f.run, f.where);
    const acts = () => f.calls.filter((c) => !c.startsWith("ip -j"));
    expect(lab.setLink({ dropPsn: 103 })).toEqual({ ...CLEAN_LINK, dropPsn: 103 });
    expect(acts()).toEqual([`nft delete table inet ${NFT_PSN_TABLE}`, "nft -f - <<drop PSN 103"]);
    f.calls.length = 0;
    lab.setLink({ blockRoceUdp: true, dropPsn: 103 });
    expect(acts()).toEqual([`nft delete table inet ${NFT_TABLE}`, "nft -f - <<drop 4791"]);
    f.calls.length = 0;
    lab.setLink({ dropPsn: null });
    expect(acts()).toEqual([`nft delete table inet ${NFT_PSN_TABLE}`]);
    lab.setLink({ dropPsn: 7 });
    f.calls.length = 0;
    expect(lab.clearLink()).toEqual(CLEAN_LINK);
    expect(acts()).toEqual([`nft delete table inet ${NFT_TABLE}`, `nft delete table inet ${NFT_PSN_TABLE}`]);
    expect(() => lab.setLink({ dropPsn: 0x1000000 })).toThrow(
      expect.objectContaining({ code: "EINVAL", attribute: "dropPsn" }),
    );
  });
});

/** Why the real nft rule cannot be tried here (it needs root, nft and a network namespace of its own), or null. */
function noNetns(): string | null {
  try {
    execFileSync("unshare", ["-n", "nft", "list", "ruleset"], { stdio: "ignore", timeout: 10_000 });
    return null;
  } catch (e) {
    return `unshare -n nft failed (${(e as Error).message.split("\n")[0]}): needs root and nftables`;
  }
}
const netnsMissing = noNetns();

describe.skipIf(netnsMissing !== null)(
  `nftDropPsn in a network namespace of its own${netnsMissing ? ` (skipped: ${netnsMissing})` : ""}`,
  () => {
    it("drops the first packet with that PSN, once: PSNs 102 103 103 104 103 on loopback arrive as 102 103 104 103", () => {
      const dir = mkdtempSync(join(tmpdir(), "verbslab-nft-"));
      writeFileSync(join(dir, "rule.nft"), nftDropPsn(103));
      // A BTH after the UDP header: opcode 0x0a (RC_RDMA_WRITE_ONLY), the PSN in bytes 9-11.
      const js = `
        const dgram = require("node:dgram");
        const tx = dgram.createSocket("udp4"), rx = dgram.createSocket("udp4"), got = [];
        rx.on("message", (m) => got.push(m.readUIntBE(9, 3)));
        rx.bind(4791, "127.0.0.1", async () => {
          for (const psn of [102, 103, 103, 104, 103]) {
            const b = Buffer.alloc(16); b[0] = 0x0a; b.writeUIntBE(psn, 9, 3);
            await new Promise((r) => tx.send(b, 4791, "127.0.0.1", r));
            await new Promise((r) => setTimeout(r, 50));
          }
          console.log(got.join(" ")); tx.close(); rx.close();
        });`;
      const out = execFileSync(
        "unshare",
        ["-n", "sh", "-c", `ip link set lo up && nft -f "$1" && node -e "$2"`, "sh", join(dir, "rule.nft"), js],
        { encoding: "utf8", timeout: 20_000 },
      );
      expect(out.trim()).toBe("102 103 104 103");
    });
  },
);
