/**
 * Why a verb failed (verbs/verb-failure.ts), in Chinese: one case per kind, naming the same
 * values as the English `verbFailureText`. verbs.h names (IBV_QP_PORT, ibv_reg_mr), attribute
 * names and errno names stay as they are: they are what the learner types and searches for.
 */
import type {
  ArgExpected,
  BackendExit,
  CmStep,
  ForeignObject,
  Got,
  OffLab,
  PrivateDataCarrier,
  VerbFailure,
} from "../../../../verbs/verb-failure.js";
import { stateName } from "../model/format.js";

const hex = (n: number) => `0x${n.toString(16)}`;
const arrow = (from: number, to: number) => `${stateName(from)} → ${stateName(to)}`;
const QUEUE = { send: "发送队列", recv: "接收队列" } as const;
const STEP: Record<CmStep, string> = {
  listen: "rdma_listen 需要一个已绑定（bind）的 id",
  "resolve-addr": "rdma_resolve_addr 需要一个新的或已绑定的 id",
  "resolve-route": "rdma_resolve_route 需要先到 ADDR_RESOLVED",
  connect: "rdma_connect 需要先到 ROUTE_RESOLVED",
  join: "id 只能在已绑定或地址已解析时加入组播",
};

const CARRIER: Record<PrivateDataCarrier, string> = {
  "tcp-req": "RDMA_PS_TCP 的 REQ（92 字节减去 rdma_cm 36 字节的头部）",
  rep: "REP",
  rej: "REJ",
  "udp-req": "RDMA_PS_UDP 的 SIDR_REQ",
  "udp-rep": "RDMA_PS_UDP 的 SIDR_REP",
};

const EXPECTED: Record<ArgExpected, string> = {
  integer: "整数",
  "non-negative-integer": "非负整数",
  number: "数字",
  object: "对象",
  bigint: "bigint",
  string: "字符串",
  boolean: "布尔值",
  array: "数组",
  uint8array: "Uint8Array",
  "device-name": "设备名",
  ipv4: "IPv4 地址",
  "ipv6-text": "IPv6 文本",
  "addr-port": "{ addr, port }",
  "ip-string": "IP 地址字符串",
  memory: "ArrayBuffer、类型化数组/DataView 或长度",
  "mr-data": "字节、数字数组或字符串",
};
const FOREIGN: Record<ForeignObject, string> = { CQ: "CQ", "completion channel": "完成通道", object: "对象" };
/** A space between a Chinese word and a Latin one. */
const latin = (s: string) => (/^[\x20-\x7e]/.test(s) ? ` ${s}` : s);

/** A JavaScript value as an argument error names it, in Chinese (the English is `gotText`). */
export function gotZh(g: Got): string {
  switch (g.t) {
    case "string":
      return `字符串 ${JSON.stringify(g.text)}`;
    case "number":
      return g.text;
    case "array":
      return "数组";
    case "object":
      return "对象";
    case "boolean":
      return "布尔值";
    case "function":
      return "函数";
    default:
      return g.t;
  }
}

/** The failure in Chinese. */
export function verbFailureZh(w: VerbFailure): string {
  switch (w.kind) {
    case "no-device":
      return `没有名为 ${JSON.stringify(w.name)} 的设备`;
    case "one-port":
      return `rxe 只有端口 1，没有端口 ${w.port}`;
    case "port-num":
      return `${w.field} 必须是 1（rxe 只有一个端口），传入的是 ${w.got}`;
    case "gid-index":
      return `GID 索引 ${w.index} 超出了 GID 表的范围（0..${w.count - 1}）`;
    case "gid-empty":
      return `GID 索引 ${w.index} 处是空的`;
    case "pkey-index":
      return "rxe 的 P_Key 表只有一项（索引 0）";
    case "pd-busy": {
      const busy = [
        ...(w.mrs ? [`${w.mrs} 个 MR`] : []),
        ...(w.qps ? [`${w.qps} 个 QP`] : []),
        ...(w.ahs ? [`${w.ahs} 个 AH`] : []),
      ];
      return `这个 PD 上还有 ${busy.join("、")}；请先销毁它们`;
    }
    case "access-unknown":
      return `未知的访问标志位 ${hex(w.bits)}`;
    case "remote-needs-local-write":
      return "REMOTE_WRITE 和 REMOTE_ATOMIC 还需要同时设置 IBV_ACCESS_LOCAL_WRITE";
    case "no-odp":
      return "rxe 不支持按需分页（ODP）";
    case "length-not-positive":
      return `length 必须为正数，传入的是 ${w.length}`;
    case "length-zero":
      return "长度为 0 的内存无法注册";
    case "cannot-pin":
      return w.allocate ? `无法分配 ${w.length} 字节` : `无法锁定（pin）${w.length} 字节`;
    case "mr-pool-exhausted":
      return "设备的 MR 池已用完";
    case "destroyed":
      return `这个 ${w.object} 已经被销毁了`;
    case "cqe-range":
      return `cqe 必须在 1..${w.max}（max_cqe）之间，传入的是 ${w.cqe}`;
    case "comp-vector":
      return `comp_vector 必须小于 num_comp_vectors（${w.count}），传入的是 ${w.vector}`;
    case "channel-other-device":
      return "这个完成通道属于另一个设备";
    case "negative-num-entries":
      return `num_entries 不能为负数，传入的是 ${w.n}`;
    case "cq-busy":
      return `还有 ${w.qps} 个 QP 在使用这个 CQ；请先销毁它们`;
    case "channel-busy":
      return `还有 ${w.cqs} 个 CQ 挂在这个通道上；请先销毁它们`;
    case "unacked-events":
      return (
        `libibverbs 会永远等下去：有 ${w.n} 个完成事件还没有确认` +
        `（它们是 ibv_get_cq_event 取回的；请先调用 cq.ackEvents(${w.n})）`
      );
    case "qp-type":
      return w.known ? `rxe 不支持 QP 类型 ${w.type}` : `${w.type} 不是一种 QP 类型`;
    case "cq-required":
      return `必须提供 ${w.cq}（libibverbs 44 遇到 NULL 的 ${w.cq} 会崩溃）`;
    case "cq-other-context":
      return `${w.cq} 属于另一个设备上下文`;
    case "cap-limit":
      return `cap.${w.field} 为 ${w.value}，超出了 0..${w.max}（rxe 的上限）`;
    case "qp-in-mcast":
      return "这个 QP 还挂在一个组播组上：请先 rdma_leave_multicast";
    case "wr-list-empty":
      return "工作请求列表是空的（NULL）";
    case "sq-not-ready":
      return `QP 的发送队列尚未就绪（QP 状态为 ${stateName(w.state)}；发送需要 RTS）。和 rxe 一样，这些 WR 会留在队列环里`;
    case "send-needs-rts":
      return `ibv_post_send 需要 QP 处于 RTS，而它处于 ${stateName(w.state)}`;
    case "recv-needs-init":
      return "ibv_post_recv 需要 QP 已离开 RESET（请先把它转到 INIT）";
    case "predict-no-grh":
      return `${arrow(w.from, w.to)}：ah_attr.is_global 为 0，而 RoCE 需要 GRH：请设置 ah_attr.is_global = 1，并把 ah_attr.grh.dgid 设为对端的 GID`;
    case "predict-sgid-index":
      return `${arrow(w.from, w.to)}：ah_attr.grh.sgid_index ${w.index} 不在端口的 GID 表里（可用：${w.valid.join(", ") || "无"}）；请从 ibv_query_gid_table 里挑一个索引`;
    case "predict-path-mtu":
      return `${arrow(w.from, w.to)}：path_mtu ${w.mtu} 超过了端口的 max_mtu（${w.maxMtu}）`;
    case "recv-in-reset":
      return "RESET 状态下不能提交接收请求（请先把 QP 转到 INIT）";
    case "too-many-sge":
      return `wr[${w.i}] 有 ${w.n} 个 SGE，但这个 QP 的 max_${w.queue}_sge 只有 ${w.max}`;
    case "atomic-buffer":
      return `wr[${w.i}]：原子操作需要一个 8 字节的本地缓冲区`;
    case "atomic-unaligned":
      return `wr[${w.i}]：原子操作的 remote_addr ${hex(w.addr)} 没有按 8 字节对齐`;
    case "inline-too-long":
      return `wr[${w.i}]：${w.bytes} 个内联字节超过了 max_inline_data ${w.max}`;
    case "inline-unregistered":
      return `wr[${w.i}].sg_list[${w.k}]：内联地址 ${hex(w.addr)} 不在任何已注册的缓冲区里`;
    case "no-mw":
      return "模拟器没有实现内存窗口（memory window）";
    case "ud-ah":
      return w.gone
        ? `wr[${w.i}]：这个 AH 已被销毁，或者属于另一个设备`
        : `wr[${w.i}]：UD 发送需要 wr.ud.ah（本后端的一个 AH）`;
    case "queue-full":
      return `${QUEUE[w.queue]}已满（${w.capacity} 个 WQE${w.queue === "send" ? "；完成之后才会空出位置" : ""}）`;
    case "mask": {
      const parts = [];
      if (w.missing.length === w.needs.length)
        parts.push(`${arrow(w.from, w.to)} 需要 ${w.needs.join(", ")}：掩码里一个也没有`);
      else if (w.missing.length)
        parts.push(`${arrow(w.from, w.to)} 需要 ${w.needs.join(", ")}；缺少：${w.missing.join(", ")}`);
      if (w.notAllowed.length) parts.push(`${arrow(w.from, w.to)} 不接受 ${w.notAllowed.join(", ")}`);
      return parts.join("；");
    }
    case "illegal":
      return `${arrow(w.from, w.to)} 不是合法的状态转换${w.withoutState ? "（掩码里没有 IBV_QP_STATE，目标状态就是当前状态）" : ""}`;
    case "cur-state":
      return `cur_qp_state 写的是 ${stateName(w.claimed)}，但 QP 处于 ${stateName(w.actual)}`;
    case "rate-limit":
      return `libibverbs 拒绝 IBV_QP_RATE_LIMIT 及更高的掩码位：${w.notAllowed.join(", ")}`;
    case "not-a-state":
      return `${w.field} 为 ${w.value}，不是一个 QP 状态`;
    case "no-modify-table":
      return `QP 类型 ${w.qpType} 在这里没有状态转换表`;
    case "qkey-privileged":
      return "第 31 位置 1 的 Q_Key 是特权值（需要 CAP_NET_RAW）";
    case "no-alt-path":
      return "RoCE 没有备用路径（ib_core 拒绝 IBV_QP_ALT_PATH）";
    case "sq-draining":
      return "发送队列仍在排空；请等待 IBV_EVENT_SQ_DRAINED";
    case "path-mtu":
      return `path_mtu ${w.mtu} 超过了端口的 max_mtu（5 = IBV_MTU_4096）`;
    case "max-rd-atomic":
      return `max_rd_atomic ${w.value} 超过了 max_qp_init_rd_atom（${w.max}）`;
    case "qp-timeout":
      return `timeout ${w.value} 超过了 31`;
    case "needs-grh":
      return `RoCE 需要 GRH：请设置 ${w.prefix}.is_global = 1（以及 grh.dgid、grh.sgid_index）`;
    case "no-gid":
      return `${w.device} 在索引 ${w.index} 处没有 GID`;
    case "not-a-gid":
      return `${JSON.stringify(w.text)} 不是 GID（IPv6 文本）`;
    case "dgid-unset":
      return "dgid 是 ::（没有设置）";
    case "link-down":
      return `${w.device} 的链路已断开`;
    case "no-route":
      return `没有到 ${w.gid} 的路由：${w.why.kind === "no-device" ? "没有设备拥有这个 GID" : `${w.why.device} 的链路已断开`}`;
    case "gid-family":
      return `sgid 是 IPv4，而 dgid ${w.dgid} 是 IPv6（地址族不同）`;
    case "wait-too-long":
      return `${w.arg} 为 ${w.ms}，超过了最长等待时间 ${w.max} 毫秒（2^31 - 1）`;
    case "clock-limit":
      return `等待 ${w.ms} 毫秒（${w.arg}）会让模拟器的时钟超过 ${w.max} 毫秒（2^40），那时它的定时器会失去精度`;
    case "port-space":
      return `端口空间 ${hex(w.ps)} 既不是 RDMA_PS_TCP${w.numbers ? "（0x106）" : ""}，也不是 RDMA_PS_UDP${w.numbers ? "（0x111）" : ""}`;
    case "service":
      return `service ${JSON.stringify(w.service)} 不是${w.decimal ? "十进制端口号（0-65535）" : "端口号"}`;
    case "node-not-numeric":
      return `node ${JSON.stringify(w.node)} 不是数字形式的 IPv4 或 IPv6 地址`;
    case "node-required":
      return "除非 hints.ai_flags 含 RAI_PASSIVE，否则必须提供 node";
    case "ephemeral-ports":
      return "所有临时端口都已被占用";
    case "cm-channel-busy":
      return `还有 ${w.ids} 个 rdma_cm_id 在使用这个通道；请先销毁它们（否则 librdmacm 会在它们还在用时关闭通道）`;
    case "event-acked":
      return w.event ? `这个 ${w.event} 事件已经确认过了（librdmacm 会把它释放两次）` : "这个事件已经确认过了";
    case "unacked-cm-events":
      return `librdmacm 会永远等下去：这个 id 上有 ${w.n} 个事件还没有确认（请先对${w.n === 1 ? "它" : "每一个"}调用 event.ack()）`;
    case "conn-param-u8":
      return `conn_param.${w.field} 为 ${w.value}，放不进它的 uint8_t`;
    case "private-data-u8":
      return w.param
        ? `conn_param.private_data 有 ${w.bytes} 字节；private_data_len 是 uint8_t（最多 255）`
        : `private_data_len 是 uint8_t（最多 255），不能是 ${w.bytes}`;
    case "private-data-long":
      return `私有数据有 ${w.bytes} 字节；${CARRIER[w.what]} 最多携带 ${w.max} 字节`;
    case "id-bound":
      return `这个 id 已经绑定过了（${w.state}）`;
    case "bind-stale-netdev":
      return `之前一次失败的 rdma_bind_addr 把 id 留在了 ${w.netdev} 的网络设备上，而它没有 ${w.ip}：请用一个新的 id`;
    case "no-device-ip":
      return `没有 RDMA 设备拥有地址 ${w.ip}（rxe0 是 10.77.0.1，rxe1 是 10.77.0.2）`;
    case "port-privileged":
      return `端口 ${w.port} 小于 1024，而程序不是 root`;
    case "port-any-conflict":
      return `端口 ${w.port} 已被另一个 id 绑定，并且两者之一绑定的是任意地址`;
    case "addr-in-use":
      return `${w.ip}:${w.port} 已被另一个 id 绑定`;
    case "id-state":
      return `${STEP[w.step]}，而这个 id 处于 ${w.state} 状态`;
    case "cm-no-route":
      return w.mcast
        ? `没有到组播组 ${w.ip} 的路由：请给出 src_addr（某个设备的地址），经它的网络设备发送`
        : `没有到 ${w.ip} 的路由：实验网络是 10.77.0.0/24`;
    case "id-has-qp":
      return "这个 id 已经有一个 QP 了（请先 rdma_destroy_qp）";
    case "id-no-qp":
      return "这个 id 没有 QP";
    case "id-unbound":
      return w.join
        ? "这个 id 还没有绑定到设备：请先 rdma_bind_addr 到某个设备的地址，或者 rdma_resolve_addr"
        : "这个 id 还没有绑定到设备：请在 ADDR_RESOLVED 之后（客户端）或在 CONNECT_REQUEST 事件的 id 上（服务端）创建 QP";
    case "id-no-device":
      return "这个 id 没有绑定到设备";
    case "pd-other-context":
      return "这个 PD 属于另一个 ibv_context：请在 id.verbs（librdmacm 为该设备打开的上下文）上分配它";
    case "cm-modify":
      return `ibv_modify_qp 失败：${w.cause ? verbFailureZh(w.cause) : w.text}`;
    case "connection-state":
      return (
        `连接处于 ${w.state}` +
        (w.need === "rtr-path" ? "：还没有可用于 RTR 的路径" : w.need === "rts-psn" ? "：RTS 需要对端的 PSN" : "")
      );
    case "init-qp-attr-state":
      return `rdma_init_qp_attr 只给出 INIT、RTR 或 RTS，不能是状态 ${w.state}`;
    case "conn-param-required":
      return "id 上没有 QP 时必须提供 conn_param（由它给出 qp_num）";
    case "rd-atom-limit":
      return w.field === "responder_resources"
        ? `responder_resources ${w.value} 超过了设备的 max_qp_rd_atom ${w.max}`
        : `initiator_depth ${w.value} 超过了设备的 max_qp_init_rd_atom ${w.max}`;
    case "accept-needs-request":
      return "rdma_accept 要用 CONNECT_REQUEST 事件的 id（event.id），而不是监听 id 或客户端 id";
    case "no-request":
      return "这个 id 没有可拒绝的连接请求";
    case "request-answered":
      return "这个连接请求已经答复过了";
    case "not-rejectable":
      return `连接处于 ${w.state}：只有正在建立的连接才能被拒绝`;
    case "not-connected":
      return "这个 id 没有连接（没有 rdma_connect 或 rdma_accept）";
    case "join-needs-udp":
      return "只有 RDMA_PS_UDP 的 id 才能加入组播组";
    case "addr-any":
      return "addr 是任意地址";
    case "not-joined":
      return `这个 id 没有加入 ${w.ip}（端口 ${w.port}）：请离开它加入时用的地址和端口`;
    case "port-16":
      return `${w.field}.port ${w.port} 不是 16 位端口号`;
    case "not-ipv4":
      return w.ipv6
        ? `${w.field}.addr ${JSON.stringify(w.addr)} 是 IPv6；模拟器的 rdma_cm 只模拟 IPv4 地址（实验虚拟机的 10.77.0.x）`
        : `${w.field}.addr ${JSON.stringify(w.addr)} 不是数字形式的 IPv4 地址（例如 "10.77.0.1"）`;
    case "link-fraction":
      return `${w.field} 必须是 0 到 1 之间的比例（0.01 即 1%），传入的是 ${w.got}`;
    case "link-mtu":
      return `mtu.${w.side} 必须是 ${w.min} 到 ${w.max} 之间的整数字节数，传入的是 ${w.got}`;
    case "link-not-object":
      return `setLink 需要一个对象，例如 { loss: 0.01 }，传入的是 ${w.got}`;
    case "link-unknown":
      return `setLink 没有名为 ${JSON.stringify(w.name)} 的故障（可用的有 ${w.known.join(", ")}）`;
    case "link-delay":
      return `delay 必须是 0 到 ${w.max} 之间的毫秒数，传入的是 ${w.got}`;
    case "link-mtu-object":
      return `mtu 必须是一个对象，例如 { rxe1: 1200 }，传入的是 ${w.got}`;
    case "link-mtu-device":
      return `mtu 按设备设置：rxe0 或 rxe1，不能是 ${w.got}`;
    case "link-bool":
      return `${w.field} 必须是 true 或 false，传入的是 ${w.got}`;
    case "link-psn":
      return `dropPsn 必须是 0 到 ${w.max}（0xffffff）之间的 PSN 或 null，传入的是 ${w.got}`;
    case "link-wire":
      return `wire 必须是 ${w.models.join(", ")} 之一（模拟器的模型），传入的是 ${w.got}`;
    case "link-reorder":
      return "reorder 需要 delay：未被重排的包要等 delay 毫秒，其他包才能超过它们";
    case "link-wire-native":
      return '线路模型只属于模拟器：真实 rxe 的链路以主机的速度运行（只能用 wire "rxe"）';
    case "off-lab":
      return offLabZh(w.check);
    case "backend-died":
      return w.during === "run"
        ? `后端进程在这次运行中途退出了（${backendExitZh(w.exit)}）；VerbsLab 已重启它，这次运行创建的对象都已不在`
        : `后端进程在答复之前退出了（${backendExitZh(w.exit)}）；正在重启它`;
    case "link-unsupported":
      return "这个后端不能在它的链路上注入故障";
    case "arg-type":
      return `${w.field} 必须是${latin(EXPECTED[w.expected])}${w.got ? `，传入的是${latin(gotZh(w.got))}` : ""}`;
    case "foreign-object":
      return `${w.field} 不是这个${w.native ? "（原生）" : ""}后端的${latin(FOREIGN[w.what])}`;
    case "arg-negative":
      return `${w.field} 不能为负数，传入的是 ${w.value}`;
    case "no-sim-device":
      return `没有名为 ${JSON.stringify(w.name)} 的模拟设备（只有 ${w.devices.join(" 和 ")}）`;
    case "mr-range":
      return `[${w.offset}, ${w.offset + w.length}) 超出了这个 MR 的范围（长度 ${w.mrLength}）`;
    case "mr-offset":
      return `偏移 ${w.offset} 超出了 MR 的范围（长度 ${w.mrLength}）`;
    case "mr-past-end":
      return w.op === "sge"
        ? `从偏移 ${w.offset} 起的 ${w.length} 字节超出了这个 MR 的末尾（长度 ${w.mrLength}）`
        : `在偏移 ${w.offset} 处${w.op === "read" ? "读取" : "写入"} ${w.length} 字节会超出 MR 的末尾（长度 ${w.mrLength}）`;
    case "mr-deregistered":
      return `${w.mr} 已被注销（ibv_dereg_mr）：它的内存已不再注册`;
    case "no-object-type":
      return `${JSON.stringify(w.type)} 不是一种对象类型`;
    case "not-a-handle":
      return `${w.handle} 不是对象句柄（句柄是数字）`;
    case "no-handle":
      return `这个会话中没有句柄为 ${w.handle} 的对象`;
    case "no-method":
      return `${w.type} 没有名为 ${JSON.stringify(w.method)} 的方法`;
    case "too-deep":
      return w.path
        ? `${w.path}：嵌套太深（超过 ${w.max} 层，或有循环引用），无法编码`
        : `嵌套超过 ${w.max} 层（或有循环引用）的值无法传递`;
    case "cannot-encode":
      return `${w.path}：${w.what} 类型的值无法编码`;
    case "not-hex":
      return `不是十六进制字节串：${JSON.stringify(w.text)}`;
    case "runner":
      return w.runner.kind === "no-default-export"
        ? "程序必须 `export default async function main(verbs) { … }`"
        : `${w.runner.method}(…) 没有被 await：main 返回时它还在运行（请写成 \`await …${w.runner.method}(…)\`）`;
    default: {
      // A kind this build does not know (a transcript from a newer one): its data, as JSON.
      const unknown: never = w;
      return JSON.stringify(unknown);
    }
  }
}

/** How the backend process ended, in Chinese. */
export function backendExitZh(e: BackendExit): string {
  const exit = e.signal ? `被 ${e.signal} 终止` : `退出码 ${e.code ?? "未知"}`;
  if (!e.hung) return exit;
  const what = e.hung.method ? `${e.hung.ms} 毫秒内没有答复 ${e.hung.method}` : `${e.hung.ms} 毫秒内没有答复存活检查`;
  return `它不再响应（${what}），VerbsLab 结束了它；${exit}`;
}

function offLabZh(c: OffLab): string {
  const notLab = "：这不是实验网络";
  switch (c.kind) {
    case "not-vm":
      return "只能在 VerbsLab 创建的实验网络上注入故障（scripts/rxe-vm，其中 VERBSLAB_IN_RXE_VM=1），绝不会在本机自己的网络上注入；请使用模拟器（--backend sim）或实验虚拟机";
    case "not-root":
      return "实验虚拟机以 root 运行任务，tc/ip/nft 也需要 root：这个进程不是 root";
    case "no-netdev":
      return `${c.netdev} 不存在${notLab}`;
    case "not-bound":
      return `${c.device} 没有绑定到 ${c.netdev}${notLab}`;
    case "ip-failed":
      return `无法用 ip 读取 ${c.netdev}：${c.error}`;
    case "not-veth":
      return `${c.netdev} 不是 veth${notLab}`;
    case "wrong-peer":
      return `${c.netdev} 的对端是 ${c.peer}，不是 ${c.expected}`;
    case "no-address":
      return `${c.netdev} 没有地址 ${c.address}`;
  }
}
