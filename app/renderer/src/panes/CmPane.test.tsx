/** The CM pane and the diagram's librdmacm edges, rendered from the transcripts of real rdma_cm runs (simulator). */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { connectAndDisconnect, eventsOf, rejectWithPrivateData } from "../../../session/cm-programs.test-util.js";
import { buildView } from "../model/reduce.js";
import { LangContext } from "../i18n.js";
import { CmPane, cmIdCount } from "./CmPane.js";
import { QpDiagram } from "./QpDiagram.js";

const text = (html: string) => html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");

describe("CmPane", () => {
  it("lists the listener with the child id of its CONNECT_REQUEST under it, and every event by name", async () => {
    const view = buildView({ events: await eventsOf(connectAndDisconnect) });
    const html = renderToStaticMarkup(<CmPane ids={view.cm} />);
    expect(cmIdCount(view.cm)).toBe(3);
    // The child's card sits inside the listener's.
    const listener = view.cm[0];
    const child = listener.children[0];
    expect(html).toMatch(
      new RegExp(
        `data-cm-id="${listener.name}" data-role="listener".*data-cm-id="${child.name}" data-role="child"`,
        "s",
      ),
    );
    const s = text(html);
    expect(s).toContain(`new id: ${child.name}`);
    expect(s).toContain(`child of ${listener.name}`);
    for (const e of ["CONNECT_REQUEST", "ADDR_RESOLVED", "ROUTE_RESOLVED", "ESTABLISHED", "DISCONNECTED"])
      expect(html).toContain(`data-event="RDMA_CM_EVENT_${e}"`);
    // What librdmacm did to the server's QP inside rdma_accept.
    expect(s).toMatch(/rdma_accept ok .*INIT → RTR → RTS by librdmacm/);
    // The client's CONNECT_REQUEST carried 56 bytes of zeros: one line, not four rows of 00.
    expect(s).toContain("private_data, 56 bytes: … 56 × 00");
    expect(s).not.toContain("not acked");
  });

  it("a rejection: status 28 named and explained, the server's bytes as hex and text, the padding counted", async () => {
    const view = buildView({ events: await eventsOf(rejectWithPrivateData) });
    const html = renderToStaticMarkup(<CmPane ids={view.cm} />);
    const s = text(html);
    expect(s).toContain("RDMA_CM_EVENT_REJECTED status 28 IB_CM_REJ_CONSUMER_DEFINED");
    expect(s).toContain("consumer reject: the peer called rdma_reject");
    expect(html).toMatch(/class="cm-row event bad"[^>]*data-event="RDMA_CM_EVENT_REJECTED"/);
    expect(s).toContain("private_data, 148 bytes:");
    expect(s).toContain("0000 62 75 73 79 2c 20 74 72 busy, tr");
    expect(s).toContain("0008 79 20 6c 61 74 65 72 y later");
    expect(s).toContain("… 133 × 00");
    expect(s).toMatch(/QP 0x11: INIT → ERR by librdmacm/);
    expect(s).toContain("rdma_reject private_data 15 B ok");
  });

  it("in Chinese", async () => {
    const view = buildView({ events: await eventsOf(rejectWithPrivateData) });
    const s = text(
      renderToStaticMarkup(
        <LangContext.Provider value="zh">
          <CmPane ids={view.cm} />
        </LangContext.Provider>,
      ),
    );
    expect(s).toContain("consumer reject：对端调用了 rdma_reject");
    expect(s).toContain("由 librdmacm 完成");
    expect(s).toContain("private_data，148 字节：");
    expect(renderToStaticMarkup(<CmPane ids={[]} />)).toContain("No rdma_cm id yet");
  });
});

describe("QpDiagram: transitions made by librdmacm", () => {
  it("draws the edges librdmacm took apart from the program's, each with who made it", async () => {
    const view = buildView({ events: await eventsOf(connectAndDisconnect) });
    const server = view.qps[1];
    const html = renderToStaticMarkup(<QpDiagram qps={view.qps} focus={server.handle} />);
    const cmEdges = [...html.matchAll(/<path class="edge[^"]* cm"[^>]*data-edge="([A-Z]+-[A-Z]+)"/g)].map((m) => m[1]);
    expect(cmEdges).toEqual(["RESET-INIT", "INIT-RTR", "RTR-RTS", "RTS-ERR"].filter((e) => cmEdges.includes(e)));
    expect(cmEdges.slice(0, 3)).toEqual(["RESET-INIT", "INIT-RTR", "RTR-RTS"]);
    expect(html).toContain("made by librdmacm, not by your program: ucma_modify_qp_rtr in rdma_accept");
    expect(html).toMatch(/<text class="cm-label"[^>]*data-cm-edge="INIT-RTR"/);
    // A QP the program moved itself has no librdmacm edge.
    const manual = { ...server, cmMoves: undefined };
    expect(renderToStaticMarkup(<QpDiagram qps={[manual]} focus={server.handle} />)).not.toContain("librdmacm");
  });
});
