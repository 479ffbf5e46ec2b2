/** Device → port → PD → MRs / QPs, and the CQs, as a learner would draw them on a whiteboard. */
import { useStrings } from "../i18n.js";
import { accessNames, hex, qpTypeName, stateName } from "../model/format.js";
import { nameOf, ibv_port_state, ibv_mtu } from "../../../../verbs/constants.js";
import type { LabView } from "../model/view.js";
import { Occupancy } from "./Occupancy.js";

export type ResourcesTreeProps = Pick<LabView, "devices" | "pds" | "mrs" | "cqs" | "qps">;

export function ResourcesTree({ devices, pds, mrs, cqs, qps }: ResourcesTreeProps) {
  const t = useStrings();
  if (devices.length === 0 && pds.length === 0) return <p className="empty">{t.nothingOpened}</p>;
  const names = devices.length ? devices.map((d) => d.name) : [...new Set(pds.map((p) => p.device ?? "?"))];
  return (
    <ul className="tree root">
      {names.map((name) => {
        const dev = devices.find((d) => d.name === name);
        return (
          <li key={name}>
            <span className="kind">device</span>
            <code>{name}</code>
            <ul className="tree">
              {dev?.ports.map((p) => (
                <li key={p.port_num}>
                  <span className="kind">port {p.port_num}</span>
                  {p.state === undefined || p.active_mtu === undefined ? (
                    <span className="muted" data-testid="port-not-queried">
                      {t.portNotQueried(p.port_num)}
                    </span>
                  ) : (
                    <>
                      {nameOf(ibv_port_state, p.state).replace("IBV_PORT_", "")}, active_mtu{" "}
                      {nameOf(ibv_mtu, p.active_mtu).replace("IBV_MTU_", "")}
                    </>
                  )}
                  , {p.gids.length} GIDs
                </li>
              ))}
              {cqs
                .filter((c) => !c.device || c.device === name)
                .map((c) => (
                  <li key={c.handle}>
                    <span className="kind">CQ</span>
                    {c.name} <span className="muted">cqe {c.cqe}</span>
                  </li>
                ))}
              {pds
                .filter((p) => (p.device ?? "?") === name)
                .map((pd) => (
                  <li key={pd.handle}>
                    <span className="kind">PD</span>
                    {pd.name}
                    <ul className="tree">
                      {mrs
                        .filter((m) => m.pd === pd.handle)
                        .map((m) => (
                          <li key={m.handle}>
                            <span className="kind">MR</span>
                            {m.name}{" "}
                            <code>
                              lkey {hex(m.lkey)} rkey {hex(m.rkey)}
                            </code>{" "}
                            <span className="muted">
                              {m.length} B, {accessNames(m.access)}
                            </span>
                          </li>
                        ))}
                      {qps
                        .filter((q) => q.pd === pd.handle)
                        .map((q) => (
                          <li key={q.handle}>
                            <span className="kind">QP</span>
                            {q.name} {qpTypeName(q.qp_type)}{" "}
                            <span className={`state-pill state-${stateName(q.state)}`}>{stateName(q.state)}</span>
                            <Occupancy qp={q} />
                          </li>
                        ))}
                    </ul>
                  </li>
                ))}
            </ul>
          </li>
        );
      })}
    </ul>
  );
}
