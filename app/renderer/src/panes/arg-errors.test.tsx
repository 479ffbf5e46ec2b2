/**
 * A program that passes a string where a number belongs ends with a TypeError that carries its
 * reason as data: the error banner, the Log's "program ended" line, the transcript row's title
 * and the lesson pane's unexpected error say it in Chinese in the Chinese UI (the English is the
 * error's message, unchanged), naming the field and the value.
 */
import { renderToStaticMarkup } from "react-dom/server";
import type { ReactElement } from "react";
import { describe, expect, it } from "vitest";
import { createSimBackend } from "../../../../sim/index.js";
import { errorToData } from "../../../../verbs/errors.js";
import { createSession } from "../../../session/session.js";
import { LangContext } from "../i18n.js";
import { buildView } from "../model/reduce.js";
import { ErrorBanner } from "./ErrorBanner.js";
import { LogPane } from "./LogPane.js";
import { TranscriptPane } from "./TranscriptPane.js";

async function badCq() {
  const s = createSession({ backend: createSimBackend({ seed: 1 }) });
  const r = await s.run(async (verbs) => {
    const ctx = await verbs.openDevice("rxe0");
    await ctx.createCq("10" as unknown as number);
  });
  return { r, view: buildView({ events: s.events() }) };
}

const render = (lang: "en" | "zh", el: ReactElement) =>
  renderToStaticMarkup(<LangContext.Provider value={lang}>{el}</LangContext.Provider>);

/** As the markup has them (quotes escaped). */
const ZH = "cqe 必须是整数，传入的是字符串 &quot;10&quot;";
const EN = "cqe must be an integer, got the string &quot;10&quot;";

describe("an argument error in the learner's language", () => {
  it("is a TypeError whose data the banner words in Chinese, with its verb and class", async () => {
    const { r } = await badCq();
    expect(r.error).toBeInstanceOf(TypeError);
    const data = { ...errorToData(r.error), line: 4, column: 11 };
    const zh = render("zh", <ErrorBanner error={data} />);
    expect(zh).toContain(ZH);
    expect(zh).toContain("<code>ibv_create_cq</code> <code>TypeError</code>");
    expect(zh).not.toContain("must be");
    expect(zh).toContain('data-testid="error-line"');
    expect(render("en", <ErrorBanner error={data} />)).toContain(EN);
  });

  it("the Log's program-ended line and the transcript row's title say it in Chinese", async () => {
    const { view } = await badCq();
    const log = render("zh", <LogPane lines={view.logs} />);
    expect(log).toContain(`程序结束：TypeError：ibv_create_cq：${ZH}`);
    expect(render("en", <LogPane lines={view.logs} />)).toContain(`ibv_create_cq: ${EN}`);
    const row = view.transcript.find((x) => x.verb === "ibv_create_cq");
    expect(row?.why).toMatchObject({ kind: "arg-type", field: "cqe" });
    const title = render("zh", <TranscriptPane rows={view.transcript} />);
    expect(title).toContain(`title="${ZH}"`);
  });
});
