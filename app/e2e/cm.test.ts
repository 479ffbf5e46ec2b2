/**
 * The CM pane in Chromium (web mode, simulator), as a learner meets it in lessons 17 and 18:
 * lesson 17's solution run through the UI lists the listening id with the child id its
 * CONNECT_REQUEST carried, every event by its rdma_cma.h name, and the diagram marks the
 * transitions librdmacm made; the same program with a teardown added shows DISCONNECTED;
 * lesson 18's rejection shows status 28 by name and the server's private data as bytes. At
 * 1280×720, 1366×768 and 1920×1080 nothing of it (nor lesson 18's table and long goal details)
 * is cut off. Screenshots: test-results/cm-*.png.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { breakItOf, solutionOf } from "./lessons.js";
import {
  closeLab,
  hasChromium,
  openLab,
  runAndWait,
  screenshot,
  selectLesson,
  setEditorCode,
  type Lab,
} from "./harness.js";

/** Lesson 17's solution with a teardown after its SEND: both sides disconnect, as rxe orders it. */
function withTeardown(solution: string): string {
  const code = solution.replace(
    "RDMA_CM_EVENT_CONNECT_REQUEST,",
    "RDMA_CM_EVENT_CONNECT_REQUEST,\n  RDMA_CM_EVENT_DISCONNECTED,",
  );
  const end = code.lastIndexOf("}");
  return (
    code.slice(0, end) +
    `
  await client.disconnect();
  await (await expectEvent(verbs, serverCh, RDMA_CM_EVENT_DISCONNECTED)).ack();
  await conn.disconnect();
  await (await expectEvent(verbs, clientCh, RDMA_CM_EVENT_DISCONNECTED)).ack();
` +
    code.slice(end)
  );
}

/** What the CM pane shows: each id's name, role, parent card and events. */
async function cmCards(page: Page) {
  return page.$$eval(".cm-id", (els) =>
    els.map((el) => ({
      name: el.getAttribute("data-cm-id"),
      role: el.getAttribute("data-role"),
      parent: el.parentElement?.closest(".cm-id")?.getAttribute("data-cm-id") ?? null,
      events: [...el.querySelectorAll(":scope > .cm-log > .cm-row.event")].map((r) => r.getAttribute("data-event")),
    })),
  );
}

/** How far an element's content overflows its box sideways (0: it fits). */
const overflowX = (page: Page, selector: string) =>
  page.$$eval(selector, (els) => Math.max(0, ...els.map((e) => e.scrollWidth - e.clientWidth)));

describe.skipIf(!hasChromium)("the CM pane (web mode, simulator)", () => {
  let lab: Lab;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ lab, browser, page, errors } = await openLab(5));
    await page.setViewportSize({ width: 1366, height: 768 });
  }, 240_000);
  afterAll(() => closeLab(lab, browser));

  it("lesson 17 through the UI: the listener, its child id, ESTABLISHED, and librdmacm's moves on the diagram", async () => {
    await selectLesson(page, "connecting-with-rdma-cm");
    await setEditorCode(page, solutionOf("connecting-with-rdma-cm", 1));
    await runAndWait(page);
    await page.waitForSelector("[data-testid=step-passed]", { timeout: 30_000 });
    await page.click("[data-tab=cm]");
    await page.waitForSelector(".cm-pane");
    const cards = await cmCards(page);
    // The learner's variables name the ids; the child has no variable of its own (req.id).
    expect(cards.map((c) => [c.name, c.role, c.parent])).toEqual([
      ["listener", "listener", null],
      [expect.stringMatching(/^cm_id\d+$/), "child", "listener"],
      ["client", "active", null],
    ]);
    expect(cards[0].events).toEqual(["RDMA_CM_EVENT_CONNECT_REQUEST"]);
    expect(cards[1].events).toEqual(["RDMA_CM_EVENT_ESTABLISHED"]);
    expect(cards[2].events).toEqual([
      "RDMA_CM_EVENT_ADDR_RESOLVED",
      "RDMA_CM_EVENT_ROUTE_RESOLVED",
      "RDMA_CM_EVENT_ESTABLISHED",
    ]);
    expect(await page.locator(".cm-id.listener .cm-row.event").first().textContent()).toContain(
      `new id: ${cards[1].name}`,
    );
    // The transcript names the child as the CM pane does.
    await page.click("[data-tab=transcript]");
    expect(await page.locator(".transcript tbody tr", { hasText: "rdma_accept" }).textContent()).toContain(
      cards[1].name!,
    );
    await page.click("[data-tab=cm]");
    expect(await page.locator(".cm-row.call", { hasText: "rdma_accept" }).textContent()).toMatch(
      // Both ends are QP 0x11 (one on each device): the name says which.
      /sqp \(QP 0x11, rxe1\): INIT → RTR → RTS by librdmacm/,
    );
    // The diagram: the focused QP's bring-up, every edge made by librdmacm, with who made it.
    const edges = await page.$$eval(".qp-diagram path.edge.cm", (ps) =>
      ps.map((p) => [p.getAttribute("data-edge"), p.querySelector("title")?.textContent ?? ""]),
    );
    expect(edges.map((e) => e[0])).toEqual(["RESET-INIT", "INIT-RTR", "RTR-RTS"]);
    expect(edges[1][1]).toMatch(/^made by librdmacm, not by your program: ucma_modify_qp_rtr in rdma_accept/);
    expect(await page.locator(".qp-diagram text.cm-label").count()).toBe(3);
    expect(await page.locator("[data-testid=legend-cm]").textContent()).toBe("made by librdmacm");
    await screenshot(page, "cm-lesson17-1366x768");
    expect(await overflowX(page, "[role=tabpanel]")).toBe(0);
  }, 120_000);

  it("with a teardown added: DISCONNECTED on the child and the client, the QPs to ERR by librdmacm", async () => {
    await setEditorCode(page, withTeardown(solutionOf("connecting-with-rdma-cm", 1)));
    await runAndWait(page);
    await page.click("[data-tab=cm]");
    await page.waitForSelector(".cm-row[data-event=RDMA_CM_EVENT_DISCONNECTED]");
    const cards = await cmCards(page);
    expect(cards[1].events).toEqual(["RDMA_CM_EVENT_ESTABLISHED", "RDMA_CM_EVENT_DISCONNECTED"]);
    expect(cards[2].events.slice(-2)).toEqual(["RDMA_CM_EVENT_ESTABLISHED", "RDMA_CM_EVENT_DISCONNECTED"]);
    expect(await page.locator(".cm-row.call", { hasText: "rdma_disconnect" }).first().textContent()).toMatch(
      /RTS → ERR by librdmacm/,
    );
    expect(await page.locator(".qp-diagram path.edge.cm[data-edge=RTS-ERR]").count()).toBe(1);
    await screenshot(page, "cm-lesson17-teardown-1366x768");
  }, 120_000);

  it("lesson 18: REJECTED with status 28 named, and the server's private data as bytes", async () => {
    await selectLesson(page, "when-rdma-cm-says-no");
    await setEditorCode(page, solutionOf("when-rdma-cm-says-no", 1));
    await runAndWait(page);
    await page.waitForSelector("[data-testid=step-passed]", { timeout: 30_000 });
    await page.click("[data-tab=cm]");
    const rej = page.locator(".cm-row[data-event=RDMA_CM_EVENT_REJECTED]");
    expect(await rej.locator(".cm-status").textContent()).toBe("status 28 IB_CM_REJ_CONSUMER_DEFINED");
    expect(await rej.textContent()).toContain("consumer reject: the peer called rdma_reject");
    const bytes = rej.locator("[data-testid=cm-private-data]");
    expect(await bytes.getAttribute("data-len")).toBe("148");
    const hex = (await bytes.locator(".hex").innerText()).split("\n");
    expect(hex).toEqual([
      "0000 62 75 73 79 2c 20 74 72 busy, tr",
      "0008 79 20 6c 61 74 65 72    y later",
      "… 133 × 00",
    ]);
    expect(await rej.textContent()).toMatch(/INIT → ERR by librdmacm/);
    await rej.scrollIntoViewIfNeeded();
    await screenshot(page, "cm-lesson18-1366x768");
  }, 120_000);

  for (const size of [
    { width: 1280, height: 720 },
    { width: 1366, height: 768 },
    { width: 1920, height: 1080 },
  ])
    it(`${size.width}×${size.height}: lesson 18's table, its long goal detail and the CM pane fit their panes`, async () => {
      await page.setViewportSize(size);
      await selectLesson(page, "when-rdma-cm-says-no");
      await setEditorCode(page, breakItOf("when-rdma-cm-says-no", 1, "padding-in-text"));
      await runAndWait(page);
      await page.waitForSelector("[data-testid=checks] li[data-pass=false]");
      // The events/status table: every column inside the pane, none scrolled out of sight.
      expect(await overflowX(page, ".lesson table.md-table")).toBe(0);
      expect(await overflowX(page, "[data-testid=checks] li")).toBe(0);
      expect(await overflowX(page, "section[aria-label=lesson] .panel-body")).toBe(0);
      const status = await page.$eval(".lesson table.md-table", (t) => {
        const box = t.getBoundingClientRect();
        return [...t.querySelectorAll("td:nth-child(2), td:nth-child(3)")].every((td) => {
          const r = td.getBoundingClientRect();
          return r.right <= box.right + 0.5 && r.left >= box.left - 0.5;
        });
      });
      expect(status).toBe(true);
      await page.click("[data-tab=cm]");
      await page.waitForSelector(".cm-row[data-event=RDMA_CM_EVENT_REJECTED]");
      expect(await overflowX(page, "[role=tabpanel]")).toBe(0);
      expect(await overflowX(page, ".cm-id")).toBe(0);
      await page.locator("[data-testid=checks]").scrollIntoViewIfNeeded();
      await screenshot(page, `cm-lesson18-goals-${size.width}x${size.height}`);
      await page.locator(".lesson table.md-table").scrollIntoViewIfNeeded();
      await screenshot(page, `cm-lesson18-table-${size.width}x${size.height}`);
      await page.setViewportSize({ width: 1366, height: 768 });
    }, 120_000);

  it("no page errors", () => {
    expect(errors).toEqual([]);
  });
});
