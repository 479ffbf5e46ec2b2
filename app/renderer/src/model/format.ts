/** Values as a learner reads them: constants by their verbs.h names, flags as names, keys in hex. */
import {
  flagNames,
  ibv_access_flags,
  ibv_mig_state,
  ibv_mtu,
  ibv_qp_state,
  ibv_qp_type,
  ibv_wc_opcode,
  ibv_wc_status,
  mtuBytes,
  nameOf,
} from "../../../../verbs/constants.js";

export const stateName = (s: number): string => nameOf(ibv_qp_state, s).replace("IBV_QPS_", "");
export const qpTypeName = (t: number): string => nameOf(ibv_qp_type, t).replace("IBV_QPT_", "");
export const wcStatusName = (s: number): string => nameOf(ibv_wc_status, s);
export const wcOpcodeName = (o: number): string => nameOf(ibv_wc_opcode, o);
export const hex = (n: number): string => `0x${(n >>> 0).toString(16)}`;
export const accessNames = (flags: number): string =>
  flags === 0
    ? "0"
    : flagNames(ibv_access_flags, flags)
        .map((n) => n.replace("IBV_ACCESS_", ""))
        .join(" | ");

/** A PSN as decimal and hex: "292 (0x124)" ("0" alone). */
export const psn = (n: number): string => (n === 0 ? "0" : `${n} (${hex(n)})`);

/** One `ibv_query_qp` field (dotted path below `attr.` or `init_attr.`) as text. */
export function formatField(path: string, value: unknown): string {
  if (value === undefined) return "—";
  if (typeof value !== "number") return String(value);
  const leaf = path.slice(path.lastIndexOf(".") + 1);
  switch (leaf) {
    case "qp_state":
    case "cur_qp_state":
      return nameOf(ibv_qp_state, value);
    case "path_mtu":
      return value >= 1 && value <= 5 ? `${nameOf(ibv_mtu, value)} (${mtuBytes(value)})` : String(value);
    case "path_mig_state":
      return nameOf(ibv_mig_state, value);
    case "qp_type":
      return nameOf(ibv_qp_type, value);
    case "qp_access_flags":
      return accessNames(value);
    case "qkey":
      return hex(value);
    case "sq_psn":
    case "rq_psn":
      // Lessons and rxe's logs give PSNs in hex (0x124); the decimal stays for the arithmetic.
      return psn(value);
    default:
      return String(value);
  }
}
