/**
 * The Packets tab's row tooltip in Chinese: every header field of a packet, as the English
 * `packetDetail` (model/timeline.ts) lists them. Header and field names (PSN, QPN, AETH, RETH,
 * MSN, wr_id, AckReq, ImmDt) and the opcode stay as rxe and the spec name them.
 */
import type { PacketRecord } from "../../../bridge/contract.js";
import type { PacketDrop } from "../../../../verbs/wc-reason.js";
import { hex } from "../model/format.js";

// AETH syndromes (IBTA 9.7.5.1; sim/packets.ts AETH_*): the type in the top three bits, a NAK's code below.
const TYPE_MASK = 0xe0;
const ACK = 0x00;
const RNR_NAK = 0x20;
const NAK_CODE: Record<number, string> = {
  0x60: "PSN 序列错误",
  0x61: "无效请求",
  0x62: "远程访问错误",
  0x63: "远程操作错误",
};

/** An AETH's syndrome in Chinese (the English is the packet log's `aeth.text`). */
export function aethZh(syndrome: number): string {
  const type = syndrome & TYPE_MASK;
  if (type === ACK) return "ACK";
  if (type === RNR_NAK) return `RNR NAK（计时器 ${syndrome & 0x1f}）`;
  return `NAK ${NAK_CODE[syndrome] ?? hex(syndrome)}`;
}

/**
 * A packet row's label (model/timeline.ts packetLabel) in Chinese: an RNR NAK or NAK, labelled
 * by its AETH's English, by its syndrome; an opcode or "ACK" as rxe names it.
 */
export function packetLabelZh(label: string, p: Pick<PacketRecord, "aeth">): string {
  return p.aeth && label === p.aeth.text && label !== "ACK" ? aethZh(p.aeth.syndrome) : label;
}

/** The tooltip in Chinese; `drop` words a drop's data (i18n.ts zh `dropReason`), else the logged English stays. */
export function packetDetailZh(p: PacketRecord, drop: (d: PacketDrop) => string): string {
  const parts = [
    p.opcode,
    `${p.src} QP ${p.src_qpn} → ${p.dst} QP ${p.dest_qpn}`,
    `PSN ${hex(p.psn)}`,
    `载荷 ${p.len} 字节`,
  ];
  if (p.ack_req) parts.push("AckReq（请求 ACK）");
  if (p.wr_id !== undefined) parts.push(`wr_id ${p.wr_id}`);
  if (p.reth) parts.push(`RETH va ${hex(p.reth.va)} rkey ${hex(p.reth.rkey)} len ${p.reth.len}`);
  if (p.aeth) parts.push(`AETH ${aethZh(p.aeth.syndrome)}（syndrome ${hex(p.aeth.syndrome)}）MSN ${p.aeth.msn}`);
  if (p.imm_data !== undefined) parts.push(`ImmDt ${hex(p.imm_data)}`);
  if (p.dropped) parts.push(`已丢弃：${p.drop ? drop(p.drop) : p.dropped}`);
  parts.push(`t = ${p.time.toFixed(3)} 毫秒`);
  return parts.join(" · ");
}
