/**
 * UI benchmark (a measurement, not a test): `npm run bench:ui [-- --json] [-- --static DIR]`.
 *
 *   step: click Step → every pane shows the verb's event (transcript, snapshot and the next
 *         gate state rendered and painted); p50/p95 over 200 steps of a program that brings
 *         up a connection and moves messages (goal: p95 ≤ 50 ms).
 *   step → editor line: the same, and also the editor has highlighted the next verb's line
 *         (the paused line's band and bar beside that line's number as Monaco drew it), until the frame
 *         that drew it is painted; p50/p95 over 200 steps of a second run of the program
 *         (goal: p95 ≤ 33 ms). Also printed: the same steps until the frame after that one.
 *   cold load: a fresh browser context opening web mode until it is interactive (lesson
 *         shown, Monaco loaded, Run enabled: App.tsx's `verbslab:interactive` mark), in ms
 *         from navigation start, with no debugger attached while it loads, and without the
 *         omnibox UI Chromium builds for each new context's window (cold-load.ts);
 *         median of 5 (goal ≤ 1.0 s, issue #15).
 *
 * Web mode on the simulator, Debian's Chromium, the built renderer (built first if stale).
 */
import { cpus, loadavg } from "node:os";
import { startColdLoader } from "./cold-load.js";
import { ensureRendererBuilt, hasChromium, launch, openApp, setEditorCode, startLab } from "./harness.js";

const STEPS = 200;

const PROGRAM = `import {
  IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_MTU_1024, IBV_WR_SEND, IBV_SEND_SIGNALED,
  IBV_QP_STATE, IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_ACCESS_FLAGS, IBV_QP_AV, IBV_QP_PATH_MTU, IBV_QP_DEST_QPN,
  IBV_QP_RQ_PSN, IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MIN_RNR_TIMER, IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY,
  IBV_QP_SQ_PSN, IBV_QP_MAX_QP_RD_ATOMIC, IBV_ACCESS_LOCAL_WRITE, type Verbs,
} from "verbslab";

export default async function main(verbs: Verbs) {
  const ctx = await verbs.openDevice("rxe0");
  const gid = await ctx.queryGid(1, 0);
  const pd = await ctx.allocPd();
  const cq = await ctx.createCq(64);
  const src = await pd.regMr(256, IBV_ACCESS_LOCAL_WRITE);
  const dst = await pd.regMr(256, IBV_ACCESS_LOCAL_WRITE);
  const cap = { max_send_wr: 16, max_recv_wr: 16, max_send_sge: 1, max_recv_sge: 1, max_inline_data: 0 };
  const a = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  const b = await pd.createQp({ send_cq: cq, recv_cq: cq, cap, qp_type: IBV_QPT_RC });
  for (const qp of [a, b])
    await qp.modify({ qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: 1, qp_access_flags: IBV_ACCESS_LOCAL_WRITE },
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  for (const [qp, peer] of [[a, b], [b, a]] as const)
    await qp.modify({ qp_state: IBV_QPS_RTR, path_mtu: IBV_MTU_1024, dest_qp_num: peer.qp_num, rq_psn: 0,
      max_dest_rd_atomic: 1, min_rnr_timer: 12, ah_attr: { is_global: 1, port_num: 1, grh: { dgid: gid, sgid_index: 0, hop_limit: 1 } } },
      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  for (const qp of [a, b])
    await qp.modify({ qp_state: IBV_QPS_RTS, timeout: 14, retry_cnt: 7, rnr_retry: 7, sq_psn: 0, max_rd_atomic: 1 },
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
  for (let i = 0; i < 100; i++) {
    await src.write(0, "message " + i);
    await b.postRecv({ wr_id: i, sg_list: [dst.sge()] });
    await a.postSend({ wr_id: i, opcode: IBV_WR_SEND, send_flags: IBV_SEND_SIGNALED, sg_list: [src.sge(0, 16)] });
    await cq.pollWait(2, 1000);
  }
}
`;

/**
 * Runs in the page (as text: the bundler's helpers must not leak into it). Click → the verb's
 * event, its snapshot and the next gate state are all rendered → the frame that shows it is
 * painted. Returns each step's time, and also (`nextFrame`) the time to the frame after the one
 * the change happened in, which bench:ui reported before; the two differ only for a change made
 * inside a frame's animation callbacks (Monaco draws decorations there).
 */
const STEP_LOOP = `async (n, withEditor) => {
  const app = document.querySelector(".app");
  const wrap = document.querySelector(".editor-wrap");
  // The paused line's band (EditorPane's own element under Monaco's text) and its bar in the
  // gutter, at the line number Monaco drew for the verb now held. Monaco places each row of its
  // margin by style.top, in the coordinate the band and bar are placed in (both scroll with their
  // parents): a band, a bar and that line number's row at the same top are the same line, and the
  // number is there only once Monaco has drawn the lines scrolled to. (Read from the styles, not
  // getBoundingClientRect: this runs on every mutation, and a forced layout each time slowed the
  // very step it measures.) The frame that paints it is waited for below.
  const lineShown = () => {
    const line = app.dataset.gateLine;
    if (wrap.dataset.pausedLine !== line) return false;
    const mark = wrap.querySelector(".vl-paused-line:not([hidden])");
    const bar = wrap.querySelector(".vl-paused-glyph:not([hidden])");
    const top = mark?.style.top;
    if (!top || bar?.style.top !== top) return false;
    return [...wrap.querySelectorAll(".margin-view-overlays .line-numbers")].some(
      (el) => el.textContent === line && el.parentElement?.style.top === top,
    );
  };
  const step = document.querySelector("button[data-action=step]");
  const num = (k) => Number(app.dataset[k] ?? 0);
  // Whether now is inside a frame's animation callbacks. A change made there (Monaco draws the
  // paused line in its own animation frame) is laid out and painted by that same frame, when its
  // rendering step ends: a task queued from the frame's first callback runs right after that.
  // A change made in any other task is painted by the next frame.
  let inFrame = false;
  let frameEnd = null;
  let ticking = true;
  const tick = () => {
    if (!ticking) return;
    inFrame = true;
    frameEnd = new Promise((r) => setTimeout(() => ((inFrame = false), r()), 0));
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  const nextPaint = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const out = [];
  const nextFrame = [];
  for (let i = 0; i < n; i++) {
    const released = num("gateSeq");
    const t0 = performance.now();
    step.click();
    await new Promise((resolve) => {
      // The released verb's event and snapshot are in, and the gate holds the next verb (or the run ended).
      const done = () =>
        num("seq") >= released &&
        num("snapshotSeq") >= released &&
        (app.dataset.running === "false" || (num("gateSeq") > released && (!withEditor || lineShown())));
      if (done()) return resolve();
      const obs = new MutationObserver(() => {
        if (done()) {
          obs.disconnect();
          resolve();
        }
      });
      obs.observe(app, { attributes: true });
      // Monaco draws decorations in its own animation frame: watch the editor's DOM too.
      if (withEditor) obs.observe(wrap, { attributes: true, childList: true, subtree: true });
    });
    const painted = (inFrame ? frameEnd : nextPaint()).then(() => performance.now() - t0);
    const after = nextPaint().then(() => performance.now() - t0);
    const [a, b] = await Promise.all([painted, after]);
    out.push(a);
    nextFrame.push(b);
    if (app.dataset.running === "false") break;
  }
  ticking = false;
  return { times: out, nextFrame };
}`;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const round = (x: number) => Math.round(x * 10) / 10;

async function main() {
  const json = process.argv.includes("--json");
  if (!hasChromium) {
    console.error("bench:ui: /usr/bin/chromium is not installed");
    process.exit(2);
  }
  // `--static DIR`: time another build of the renderer (e.g. a copy of main's dist/renderer), to
  // compare two builds back to back under the same load.
  const at = process.argv.indexOf("--static");
  const staticDir = at > 0 ? process.argv[at + 1] : undefined;
  if (!staticDir) await ensureRendererBuilt();
  // Other work on the machine moves these figures a lot: the load is reported from before and after.
  const loadBefore = round(loadavg()[0]);
  const lab = await startLab(3, staticDir);
  const browser = await launch();
  try {
    // Cold loads: a new context each time (empty cache), after one warm-up of the server.
    const loads: number[] = [];
    const cold = await startColdLoader();
    try {
      for (let i = 0; i < 6; i++) {
        const at = await cold.load(lab.url);
        if (i > 0) loads.push(at);
      }
    } finally {
      await cold.close();
    }

    const { page } = await openApp(browser, lab.url);
    await setEditorCode(page, PROGRAM);
    await page.keyboard.press("F10");
    await page.waitForSelector("[data-testid=paused-before]", { timeout: 60_000 });
    type Loop = { times: number[]; nextFrame: number[] };
    const { times } = (await page.evaluate(`(${STEP_LOOP})(${STEPS}, false)`)) as Loop;
    // Again, from the start, waiting also for the editor to highlight each next verb's line.
    await page.click("button[data-action=stop]");
    await page.waitForSelector(".app[data-running=false]", { timeout: 60_000 });
    await page.keyboard.press("F10");
    await page.waitForSelector("[data-testid=paused-before]", { timeout: 60_000 });
    const line = (await page.evaluate(`(${STEP_LOOP})(${STEPS}, true)`)) as Loop;
    const lineTimes = line.times;
    const result = {
      steps: times.length,
      step_p50_ms: round(pct(times, 50)),
      step_p95_ms: round(pct(times, 95)),
      step_max_ms: round(Math.max(...times)),
      line_steps: lineTimes.length,
      step_line_p50_ms: round(pct(lineTimes, 50)),
      step_line_p95_ms: round(pct(lineTimes, 95)),
      step_line_max_ms: round(Math.max(...lineTimes)),
      // The same steps timed to the frame after the one Monaco drew the line in (bench:ui's figure before).
      step_line_next_frame_p95_ms: round(pct(line.nextFrame, 95)),
      cold_load_median_ms: Math.round(pct(loads, 50)),
      cold_load_runs_ms: loads.map(Math.round),
      machine: { cpus: cpus().length, loadavg_1m_before: loadBefore, loadavg_1m: round(loadavg()[0]) },
      goals: { step_p95_ms: 50, step_line_p95_ms: 33, cold_load_ms: 1000 },
    };
    if (json) console.log(JSON.stringify(result));
    else {
      console.log(`UI step (click → all panes updated and painted), ${result.steps} steps:`);
      console.log(
        `  p50 ${result.step_p50_ms} ms, p95 ${result.step_p95_ms} ms (goal ≤ 50), max ${result.step_max_ms} ms`,
      );
      console.log(`Step → editor line highlighted and panes updated, ${result.line_steps} steps:`);
      console.log(
        `  p50 ${result.step_line_p50_ms} ms, p95 ${result.step_line_p95_ms} ms (goal ≤ 33), max ${result.step_line_max_ms} ms`,
      );
      console.log(`  to the frame after the one that drew it: p95 ${result.step_line_next_frame_p95_ms} ms`);
      console.log(`Cold load to interactive: median ${result.cold_load_median_ms} ms of ${loads.length} (goal ≤ 1000)`);
      console.log(
        `  runs: ${result.cold_load_runs_ms.join(", ")} ms (navigation start → interactive, no debugger attached)`,
      );
      console.log(
        `Machine: ${result.machine.cpus} CPUs, load average (1 min) ${loadBefore} before, ${result.machine.loadavg_1m} after`,
      );
    }
  } finally {
    await browser.close();
    await lab.close();
  }
}

await main();
