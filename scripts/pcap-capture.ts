/**
 * Captures what real rxe puts on the wire for each program: inside the lab VM (run it with
 * `scripts/pcap-rxe.sh`), for each program, starts tcpdump on veth0 (rxe0's netdev; it sees
 * both directions of rxe0↔rxe1 traffic), runs the program on the native backend, then stops
 * tcpdump. Writes <out>/<name>.rxe.pcap and <out>/<name>.native.jsonl (the transcript).
 *
 * Only cross-device traffic can be captured: packets between two QPs of one device are looped
 * inside rxe and never reach the veth.
 *
 *   node --import tsx scripts/pcap-capture.ts <out-dir> <program.ts>...
 */
import { spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { main as cli } from "../app/cli/main.js";

/** Starts tcpdump and resolves once it is listening (it prints "listening on" to stderr). */
function startTcpdump(file: string) {
  // -Z root: keep root (tcpdump would drop to its own user, who cannot write the repo's folder);
  // --immediate-mode -U: hand over and write each packet as it comes (without them, packets still
  // in the kernel's capture buffer when tcpdump is stopped were lost: "3 received by filter", 0 written).
  const args = ["-i", "veth0", "--immediate-mode", "-U", "-Z", "root", "-s", "0", "-w", file, "udp", "port", "4791"];
  const p = spawn("tcpdump", args, {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  const exited = new Promise<number | null>((resolve) => p.on("exit", (code) => resolve(code)));
  const listening = new Promise<void>((resolve, reject) => {
    p.stderr.on("data", (d: Buffer) => {
      err += d.toString();
      if (err.includes("listening on")) resolve();
    });
    p.on("error", reject);
    void exited.then(() => reject(new Error(`tcpdump exited: ${err.trim()}`)));
  });
  return {
    listening,
    async stop() {
      p.kill("SIGINT");
      await exited;
      return err.trim();
    },
  };
}

const [out, ...programs] = process.argv.slice(2);
if (!out || programs.length === 0) {
  console.error("usage: node --import tsx scripts/pcap-capture.ts <out-dir> <program.ts>...");
  process.exit(2);
}
mkdirSync(out, { recursive: true });
let failed = 0;
for (const program of programs) {
  const name = basename(program).replace(/\.[jt]s$/, "");
  const pcap = join(out, `${name}.rxe.pcap`);
  const transcript = join(out, `${name}.native.jsonl`);
  rmSync(transcript, { force: true });
  const dump = startTcpdump(pcap);
  await dump.listening;
  const code = await cli(["run", program, "--backend", "native", "--transcript", transcript, "--quiet"], {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
    lines: null,
  });
  // The last ACK may still be on its way when the program's final poll returns.
  await new Promise((r) => setTimeout(r, 1500));
  const summary = await dump.stop();
  console.log(`[pcap-capture] ${name}: exit ${code}; tcpdump: ${summary.split("\n").slice(-3).join("; ")}`);
  if (code !== 0) failed++;
}
process.exit(failed ? 1 : 0);
