/**
 * The kernel's own list of QPs from iproute2's `rdma res show qp -j`: a second opinion on a
 * QP's state and PSNs, next to what ibv_query_qp says. (Port counters come from the addon:
 * Context.queryCounters asks the driver over RDMA netlink.)
 */
import { execFile } from "node:child_process";

/** One QP as `rdma res show qp -j` reports it. */
export interface RdmaResQp {
  /** "rxe0" */
  dev: string;
  port?: number;
  lqpn: number;
  rqpn?: number;
  /** "RC", "UC", "UD", "GSI", … */
  type: string;
  /** "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" */
  state: string;
  sq_psn?: number;
  rq_psn?: number;
  pid?: number;
  comm?: string;
  /** Everything the tool printed for this QP. */
  raw: Record<string, unknown>;
}

/** Parses the JSON `rdma res show qp -j` prints (an array of QP objects). */
export function parseRdmaResQp(json: string): RdmaResQp[] {
  const parsed: unknown = JSON.parse(json);
  if (!Array.isArray(parsed)) return [];
  const num = (v: unknown) => (typeof v === "number" ? v : undefined);
  return parsed
    .filter((q): q is Record<string, unknown> => typeof q === "object" && q !== null)
    .map((q) => {
      const ifname = String(q.ifname ?? "");
      const [dev, port] = ifname.split("/");
      return {
        dev,
        port: num(q.port) ?? (port === undefined ? undefined : Number(port)),
        lqpn: Number(q.lqpn),
        rqpn: num(q.rqpn),
        type: String(q.type ?? ""),
        state: String(q.state ?? ""),
        sq_psn: num(q["sq-psn"]),
        rq_psn: num(q["rq-psn"]),
        pid: num(q.pid),
        comm: typeof q.comm === "string" ? q.comm : undefined,
        raw: q,
      };
    });
}

/**
 * The kernel's list of QPs (`rdma res show qp -j`), or null when the `rdma` tool is not
 * installed (package iproute2) or fails.
 */
export function rdmaResShowQp(): Promise<RdmaResQp[] | null> {
  return new Promise((resolve) => {
    execFile("rdma", ["res", "show", "qp", "-j"], { timeout: 10_000 }, (err, stdout) => {
      if (err) return resolve(null);
      try {
        resolve(parseRdmaResQp(stdout.trim() === "" ? "[]" : stdout));
      } catch {
        resolve(null);
      }
    });
  });
}
