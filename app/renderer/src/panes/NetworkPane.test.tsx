/**
 * The Network panel as a learner reads it (rendered from plain data), and its form: what the
 * fields become as a `setLink` argument, checked against the simulator's own lab link.
 */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../../../sim/index.js";
import { CLEAN_LINK, copyLink, type LinkState } from "../../../../verbs/lab.js";
import type { LabLinkInfo } from "../../../bridge/contract.js";
import { LangContext } from "../i18n.js";
import { faultsFromForm, formOf, type LinkForm } from "../model/link-form.js";
import { NetworkView, type NetworkMessage } from "./NetworkPane.js";

const noop = () => {};
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, " ")
    .replace(/&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");

function render(
  info: LabLinkInfo | null,
  opts: { message?: NetworkMessage; running?: boolean; lang?: "en" | "zh"; form?: LinkForm } = {},
) {
  return renderToStaticMarkup(
    <LangContext.Provider value={opts.lang ?? "en"}>
      <NetworkView
        info={info}
        kind={info?.backend ?? "sim"}
        form={opts.form ?? (info?.link ? formOf(info.link) : null)}
        message={opts.message ?? null}
        disabled={opts.running ?? false}
        running={opts.running ?? false}
        onChange={noop}
        onApply={noop}
        onClear={noop}
      />
    </LangContext.Provider>,
  );
}

const blocked: LinkState = { ...copyLink(CLEAN_LINK), loss: 0.07, mtu: { rxe0: 1500, rxe1: 1200 }, blockRoceUdp: true };

describe("NetworkView", () => {
  it("on the simulator: the link now, every control labelled, where the faults apply, loopback never faulted", () => {
    const html = render({ backend: "sim", link: blocked, faults: { blockRoceUdp: true } });
    const t = text(html);
    expect(t).toContain("Now: loss 7% · UDP 4791 blocked · MTU rxe0 1500 · rxe1 1200");
    expect(t).toContain("seeded, on the simulated wire between rxe0 and rxe1");
    expect(t).toContain("(rxe0 → rxe0) is looped inside rxe and never faulted");
    for (const label of ["Loss (%)", "Delay (ms)", "Reorder (%)", "MTU rxe0", "MTU rxe1", "Block UDP 4791 (RoCE v2)"])
      expect(t).toContain(label);
    expect(html).toMatch(/data-field="loss"[^>]*value="7"/);
    expect(html).toMatch(/data-field="mtu1"[^>]*value="1200"/);
    expect(html).toMatch(/type="checkbox"[^>]*data-field="block"[^>]*checked/);
    expect(html).toContain('data-action="net-apply"');
    expect(html).toContain('data-action="net-clear"');
    expect(html).not.toContain("disabled");
  });

  it("on native: says it works only in the lab VM, and shows the backend's refusal as it came", () => {
    const refusal =
      "verbslab_set_link: EPERM (1): faults are injected only on the lab network VerbsLab creates (scripts/rxe-vm, where VERBSLAB_IN_RXE_VM=1)";
    const t = text(
      render(
        { backend: "native", link: copyLink(CLEAN_LINK), faults: null },
        { message: { kind: "refused", text: refusal } },
      ),
    );
    expect(t).toContain("on the lab VM's veth pair only");
    expect(t).toContain(`The backend refused: ${refusal}`);
    expect(t).toContain("Now: no faults · MTU rxe0 1500 · rxe1 1500");
    // A fault a program set that the panel has no field for still shows in what the link is now.
    const dropped = text(render({ backend: "sim", link: { ...copyLink(CLEAN_LINK), dropPsn: 3 }, faults: null }));
    expect(dropped).toContain("Now: drop PSN 3 · MTU rxe0 1500");
  });

  it("a bad field is marked and named; while a program runs the controls are disabled and say why", () => {
    const form = { ...formOf(CLEAN_LINK), mtu0: "70000" };
    const problem = faultsFromForm(form, CLEAN_LINK);
    expect(problem).toMatchObject({ field: "mtu0", kind: "range", min: 576, max: 9000, whole: true });
    const html = render(
      { backend: "sim", link: copyLink(CLEAN_LINK), faults: null },
      { form, message: { kind: "problem", problem: problem as never } },
    );
    expect(html).toMatch(/aria-invalid="true"[^>]*data-field="mtu0"|data-field="mtu0"[^>]*aria-invalid="true"/);
    expect(text(html)).toContain("MTU rxe0: enter a whole number of bytes from 576 to 9000.");
    const running = render({ backend: "sim", link: copyLink(CLEAN_LINK), faults: null }, { running: true });
    expect(running.match(/disabled=""/g)).toHaveLength(9); // 6 fields, the wire model, 2 buttons
    expect(text(running)).toContain("A program is running: change the link once it has ended.");
  });

  it("the wire model: the simulator's three, named as models, the one in use selected and in 'Now'; on native it cannot be chosen", () => {
    const html = render({ backend: "sim", link: { ...copyLink(CLEAN_LINK), wire: "25GbE" }, faults: null });
    expect(text(html)).toContain("Now: no faults · MTU rxe0 1500 · rxe1 1500 · 25GbE NIC model");
    expect(html).toMatch(/<option value="25GbE" selected="">25GbE NIC model<\/option>/);
    expect(text(html)).toContain("rxe model");
    expect(text(html)).toContain("100GbE NIC model");
    const native = render({ backend: "native", link: copyLink(CLEAN_LINK), faults: null });
    expect(native).toMatch(/<select data-field="wire" disabled=""/);
    expect(native).toContain("Real rxe runs at its host&#x27;s speed");
    expect(text(native)).not.toContain("NIC model ·");
  });

  it("a backend without a lab link says so and offers no controls", () => {
    const html = render({ backend: "sim", link: null, faults: null });
    expect(text(html)).toContain("This backend cannot inject faults on its link.");
    expect(html).not.toContain("<input");
  });

  it("中文: labels, notes and errors in Chinese", () => {
    const form = { ...formOf(CLEAN_LINK), loss: "abc" };
    const problem = faultsFromForm(form, CLEAN_LINK) as never;
    const t = text(
      render(
        { backend: "sim", link: blocked, faults: null },
        { lang: "zh", form, message: { kind: "problem", problem } },
      ),
    );
    expect(t).toContain("丢包率 (%)：请输入 0 到 100 之间的数。");
    expect(t).toContain("阻断 UDP 4791（RoCE v2）");
    expect(t).toContain("当前： 丢包 7% · UDP 4791 已阻断");
    expect(t).toContain("从不受故障影响");
    expect(t).not.toMatch(/Loss|Apply|looped/);
  });
});

describe("faultsFromForm", () => {
  it("sends only what changed, loss and reorder as fractions, and the simulator's link ends up as the form says", () => {
    const sim = createSimBackend({ seed: 1 });
    const now = sim.lab!.getLink();
    const form = { ...formOf(now), loss: "1", delay: "5", reorder: "25", mtu1: "1200", block: true };
    const r = faultsFromForm(form, now);
    expect(r).toEqual({ faults: { loss: 0.01, delay: 5, reorder: 0.25, mtu: { rxe1: 1200 }, blockRoceUdp: true } });
    const after = sim.lab!.setLink((r as { faults: object }).faults);
    expect(formOf(after)).toEqual(form);
    expect(faultsFromForm(form, after)).toEqual({ faults: {} });
  });

  it("a new wire model is sent alone, and the simulator switches to it", () => {
    const sim = createSimBackend({ seed: 1 });
    const now = sim.lab!.getLink();
    const r = faultsFromForm({ ...formOf(now), wire: "100GbE" }, now);
    expect(r).toEqual({ faults: { wire: "100GbE" } });
    expect(sim.lab!.setLink((r as { faults: object }).faults).wire).toBe("100GbE");
    expect(sim.wire.name).toBe("100GbE");
  });

  it("names the field: empty, not a number, out of range, and the contract's own rule (reorder needs a delay)", () => {
    const f = formOf(CLEAN_LINK);
    expect(faultsFromForm({ ...f, delay: "" }, CLEAN_LINK)).toMatchObject({ field: "delay", kind: "range" });
    expect(faultsFromForm({ ...f, loss: "x" }, CLEAN_LINK)).toMatchObject({ field: "loss", kind: "range", max: 100 });
    expect(faultsFromForm({ ...f, reorder: "101" }, CLEAN_LINK)).toMatchObject({ field: "reorder", kind: "range" });
    expect(faultsFromForm({ ...f, delay: "10001" }, CLEAN_LINK)).toMatchObject({ field: "delay", max: 10000 });
    expect(faultsFromForm({ ...f, mtu1: "1500.5" }, CLEAN_LINK)).toMatchObject({ field: "mtu1", whole: true });
    const r = faultsFromForm({ ...f, reorder: "10" }, CLEAN_LINK);
    expect(r).toMatchObject({ field: "reorder", kind: "reason" });
    expect((r as { text: string }).text).toMatch(/reorder needs a delay/);
    expect(r).toMatchObject({ why: { kind: "link-reorder" } });
  });

  it("中文: the contract's own rule and the native backend's refusal, worded from their data", () => {
    const form = { ...formOf(CLEAN_LINK), reorder: "10" };
    const problem = faultsFromForm(form, CLEAN_LINK) as never;
    const info = { backend: "sim" as const, link: copyLink(CLEAN_LINK), faults: null };
    const rule = text(render(info, { lang: "zh", form, message: { kind: "problem", problem } }));
    expect(rule).toContain("reorder 需要 delay：未被重排的包要等 delay 毫秒，其他包才能超过它们");
    expect(rule).not.toContain("reorder needs a delay");
    const refused = text(
      render(
        { ...info, backend: "native" },
        {
          lang: "zh",
          message: {
            kind: "refused",
            text: "verbslab_set_link: EPERM (1): …",
            why: { kind: "off-lab", check: { kind: "not-root" } },
          },
        },
      ),
    );
    expect(refused).toContain("后端拒绝：实验虚拟机以 root 运行任务，tc/ip/nft 也需要 root：这个进程不是 root");
  });
});
