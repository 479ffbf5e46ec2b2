/** The whole window: lesson on the left, the editor and transcript in the middle, the live views on the right. */
import { Suspense, lazy, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { Language } from "../../../lessons/schema.js";
import type { Verdict } from "../../../lessons/checks.js";
import type { BackendChoice, BackendKind, LabLinkInfo } from "../../bridge/contract.js";
import type { LabStore } from "./lab/store.js";
import type { CourseStart } from "./lab/course.js";
import { useLabState, useLabView } from "./lab/useLab.js";
import { useLessonFlow } from "./lab/useLessonFlow.js";
import { useRunner } from "./lab/useRunner.js";
import { download } from "./lab/download.js";
import { DEFAULT_PROGRAM } from "./lab/default-program.js";
import { objectLabel } from "./model/names.js";
import { TopBar } from "./panes/TopBar.js";
import { LessonPane } from "./panes/LessonPane.js";
import { Toolbar } from "./panes/Toolbar.js";
import { ErrorBanner } from "./panes/ErrorBanner.js";
import { Inspector } from "./panes/Inspector.js";
import { goalTargets } from "./model/goal-targets.js";
import { Tabs } from "./panes/Tabs.js";
import { TranscriptPane, type ExportFormat } from "./panes/TranscriptPane.js";
import { LogPane } from "./panes/LogPane.js";
import { CmPane, cmIdCount } from "./panes/CmPane.js";
import { Notices } from "./panes/Notices.js";
import { Progress } from "./panes/Progress.js";
import { NetworkPane } from "./panes/NetworkPane.js";
import type { CompiledProgram } from "./runner/protocol.js";
import type { SourceSite } from "../../session/transcript.js";
import { ResizeHandle } from "./panes/ResizeHandle.js";
import { usePaneSizes } from "./lab/usePaneSizes.js";
import { createCodeSaver } from "./lab/code-saver.js";
import { LangContext, STRINGS, saveLanguage, savedLanguage, useStrings } from "./i18n.js";

const EditorPane = lazy(() => import("./panes/EditorPane.js"));
/** How long the editor waits for the first lesson before it opens on the default program. */
const EDITOR_WAITS_FOR_LESSON_MS = 2000;

/**
 * Whether the editor may mount: once the first lesson is on screen (or there is none), or after
 * EDITOR_WAITS_FOR_LESSON_MS. Mounting it evaluates Monaco, half a second in which the main thread
 * reads no bridge message: before the lesson arrived, the lesson's round trips waited behind it,
 * and the editor, opened on the default program, then laid out the lesson's code a second time.
 */
function useEditorMayOpen(lessonShown: boolean): boolean {
  const [timedOut, setTimedOut] = useState(false);
  useEffect(() => {
    if (lessonShown) return;
    const t = setTimeout(() => setTimedOut(true), EDITOR_WAITS_FOR_LESSON_MS);
    return () => clearTimeout(t);
  }, [lessonShown]);
  return lessonShown || timedOut;
}

/**
 * A User Timing mark, `verbslab:interactive`, the first time the lesson is shown, the editor has
 * drawn the program and can run it: what `npm run bench:ui` reports as cold load. It is read after
 * the load, so that the load runs with no debugger attached, as a learner's does
 * (app/e2e/cold-load.ts says why).
 */
function useMarkInteractive(interactive: boolean): void {
  const marked = useRef(false);
  useLayoutEffect(() => {
    if (!interactive || marked.current) return;
    marked.current = true;
    performance.mark("verbslab:interactive");
  }, [interactive]);
}

/**
 * While Monaco loads: the program, read-only, in the editor's font and line height, under a
 * "Loading the editor…" line, so the first paint already shows the code. It is not the editor:
 * cold load (useMarkInteractive) still ends only when Monaco has drawn the program.
 */
function EditorLoading({ code }: { code: string }) {
  return (
    <div className="editor-wrap code-preview" data-testid="code-preview" aria-busy="true">
      <div className="muted">{useStrings().editorLoading}</div>
      <pre>{code}</pre>
    </div>
  );
}
const NO_RESULTS: never[] = [];

export interface AppProps {
  store: LabStore;
  /** The course's first reads (lab/course.ts), and what of them had arrived before this render. */
  course: Promise<CourseStart>;
  arrived?: CourseStart;
}

/** The window in the learner's language (kept in the browser): every pane reads it from LangContext. */
export function App(props: AppProps) {
  const [lang, setLangState] = useState<Language>(savedLanguage);
  const setLang = useCallback((l: Language) => {
    setLangState(l);
    saveLanguage(l);
  }, []);
  return (
    <LangContext.Provider value={lang}>
      <Lab {...props} lang={lang} setLang={setLang} />
    </LangContext.Provider>
  );
}

function Lab({
  store,
  course: start,
  arrived,
  lang,
  setLang,
}: AppProps & { lang: Language; setLang: (l: Language) => void }) {
  const state = useLabState(store);
  const view = useLabView(state);
  const bridge = store.bridge;
  const course = useLessonFlow(bridge, start, arrived);
  const editorMayOpen = useEditorMayOpen(course.opened);
  // Notices are written in the language of the moment they appear.
  const t = STRINGS[lang];
  const [codeByStep, setCodeByStep] = useState<Record<string, string>>({});
  const [compile, setCompile] = useState<(() => Promise<CompiledProgram>) | null>(null);
  // A line a transcript or log row asked the editor to show (`at` tells two clicks on one row apart).
  const [reveal, setReveal] = useState<(SourceSite & { at: number }) | undefined>();
  const onSource = useCallback((s: SourceSite) => setReveal({ ...s, at: performance.now() }), []);
  const [verdict, setVerdict] = useState<Verdict | undefined>();
  const [breakIt, setBreakIt] = useState<string | null>(null);
  const [backends, setBackends] = useState<BackendChoice[] | null>(null);
  const panes = usePaneSizes();

  const [editorDrawn, setEditorDrawn] = useState(false);
  const onDrawn = useCallback(() => setEditorDrawn(true), []);
  useMarkInteractive(course.lesson !== undefined && compile !== null && editorDrawn);
  const step = course.lesson?.steps[course.flow.step];
  const stepKey = course.lesson && step ? `${course.lesson.id}/${step.number}` : "free";
  const codeKey = breakIt ? `${stepKey}/break-${breakIt}` : stepKey;
  const code =
    codeByStep[codeKey] ??
    course.savedCode[codeKey] ??
    (breakIt ? step?.breakItCode[breakIt] : step?.starter) ??
    DEFAULT_PROGRAM;
  // The code per step lives in the learner's profile on the host: a reload, or the next start,
  // opens each step on what they last wrote there.
  const saver = useMemo(
    () =>
      createCodeSaver((key, c) => {
        bridge.request("lessons.code.save", { key, code: c }).catch(() => {
          // Like progress: the code stays in this window; a host that cannot keep it must not stop the lesson.
        });
      }),
    [bridge],
  );
  useEffect(() => {
    window.addEventListener("pagehide", saver.flush);
    return () => {
      window.removeEventListener("pagehide", saver.flush);
      saver.flush();
    };
  }, [saver]);
  const setCode = useCallback(
    (c: string) => {
      setCodeByStep((m) => ({ ...m, [codeKey]: c }));
      saver.change(codeKey, c);
    },
    [codeKey, saver],
  );
  useEffect(() => {
    setVerdict(undefined);
    setBreakIt(null);
  }, [stepKey]);

  const onFinished = useCallback(async () => {
    if (!course.lesson || !step) return;
    try {
      const v = await bridge.request("lessons.check", {
        lessonId: course.lesson.id,
        step: step.number,
        ...(breakIt && { breakIt }),
      });
      setVerdict(v);
      // A break-it run shows what went wrong on purpose: it does not count for the step.
      if (!breakIt)
        course.actor?.send({
          type: "CHECKED",
          passed: v.passed,
          failures: v.results.filter((r) => !r.passed).map((r) => r.detail),
        });
    } catch (err) {
      store.notice("warn", t.checkFailed((err as Error).message));
    }
  }, [bridge, course.lesson, course.actor, step, store, breakIt, t]);

  const runner = useRunner({
    store,
    compile,
    gate: state.gate,
    kind: state.header?.backend ?? state.session?.backend ?? "sim",
    program: course.lesson && step ? `${course.lesson.id} step ${step.number}` : "main.ts",
    onFinished,
  });

  useEffect(() => {
    bridge.request("backend.list", {}).then(
      (r) => setBackends(r.backends),
      () => setBackends(null),
    );
  }, [bridge]);
  const currentKind = state.header?.backend ?? state.session?.backend ?? "sim";
  const chooseBackend = useCallback(
    async (kind: BackendKind) => {
      if (kind === currentKind) return;
      try {
        await bridge.request("backend.choose", { kind });
        store.notice("info", t.switched(kind === "native"));
      } catch (err) {
        const why = backends?.find((b) => b.kind === kind)?.unavailableReason;
        const msg = (err as Error).message;
        store.notice(
          "error",
          t.stillOn(currentKind === "native", `${msg}${why && !msg.includes(why) ? ` (${why})` : ""}`),
        );
      }
    },
    [bridge, store, backends, currentKind, t],
  );
  const onBackend = useCallback((k: BackendKind) => void chooseBackend(k), [chooseBackend]);

  // Keyboard shortcuts anywhere in the window (the editor forwards its own).
  const { run, step: stepOnce, continue: cont, stop, reset } = runner;
  const shortcut = useCallback(
    (a: "run" | "step" | "continue") => (a === "run" ? run() : a === "step" ? stepOnce() : cont()),
    [run, stepOnce, cont],
  );
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "F10") shortcut("step");
      else if (e.key === "F8") shortcut("continue");
      else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) shortcut("run");
      else if (e.key === "F5" && e.shiftKey) stop();
      else return;
      e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [shortcut, stop]);

  const focus = useMemo(() => {
    const pending = state.gate?.pending?.target;
    const lastVerb = [...state.events].reverse().find((e) => e.kind === "verb");
    const target = pending ?? (lastVerb?.kind === "verb" ? lastVerb.target : undefined);
    if (target?.type !== "qp") return view.qps[view.qps.length - 1]?.handle;
    const index = state.events
      .filter((e) => e.kind === "verb")
      .flatMap((e) => (e.kind === "verb" ? (e.created ?? []) : []))
      .filter((r) => r.type === "qp")
      .findIndex((r) => r.$handle === target.$handle);
    return index >= 0 ? objectLabel({ type: "qp", index }) : undefined;
  }, [state.gate, state.events, view.qps]);

  // Stable handlers: the panes are memoised, and a step re-renders App three or four times.
  const actor = course.actor;
  const solution = step?.solution;
  const onStep = useCallback((i: number) => actor?.send({ type: "GO_TO_STEP", step: i }), [actor]);
  const onHint = useCallback(() => actor?.send({ type: "SHOW_HINT" }), [actor]);
  const onSolution = useCallback(() => {
    if (solution !== undefined) setCode(solution);
    actor?.send({ type: "REVEAL_SOLUTION" });
  }, [actor, solution, setCode]);
  const onNext = useCallback(() => actor?.send({ type: "NEXT_STEP" }), [actor]);
  const { nextLesson, setLessonId } = course;
  const onNextLesson = useCallback(() => nextLesson && setLessonId(nextLesson.id), [nextLesson, setLessonId]);
  const onBreakIt = useCallback((id: string | null) => {
    setBreakIt(id);
    setVerdict(undefined);
  }, []);
  const onReset = useCallback(() => void reset(), [reset]);
  const onReady = useCallback((c: () => Promise<CompiledProgram>) => setCompile(() => c), []);
  const onDismiss = useCallback((id: number) => store.dismiss(id), [store]);
  const onExport = useCallback(
    async (format: ExportFormat) => {
      const out = await bridge.request("transcript.export", { format });
      // The pcap is binary: it crosses the bridge as base64.
      const content =
        out.encoding === "base64" ? Uint8Array.from(atob(out.content), (c) => c.charCodeAt(0)) : out.content;
      download(out.filename, out.mime, content);
    },
    [bridge],
  );
  const onImport = useCallback(
    async (content: string) => {
      let shown = false;
      try {
        const got0 = await bridge.request("transcript.import", { content });
        store.showImported(got0.header, got0.events);
        shown = true;
        store.notice("info", t.imported(got0.events.length));
        const r = await bridge.request("transcript.replay", {});
        // The replay's session began with its events already recorded: fetch them.
        await store.resync();
        const n = r.divergences.length;
        store.notice(n ? "warn" : "info", t.replayed(r.events, n));
      } catch (err) {
        store.notice("error", t.importFailed((err as Error).message));
        // The replay never started: show what the host still records (the learner's session), not the import.
        if (shown)
          try {
            const got = await bridge.request("transcript.get", {});
            if (got.header) store.showImported(got.header, got.events);
            await store.resync();
          } catch {
            // The host is restarting: its "session" event brings the transcript back.
          }
      }
    },
    [bridge, store, t],
  );

  const lastSeq = state.events[state.events.length - 1]?.seq ?? 0;
  const netKey = `${state.session?.sessionId}:${runner.finished}`;
  // The lab link, read once per session and run: the Network tab shows it, the top bar its wire model.
  const [lab, setLab] = useState<{ info: LabLinkInfo | null; error?: string }>({ info: null });
  useEffect(() => {
    let live = true;
    bridge.request("lab.get", {}).then(
      (info) => live && setLab({ info }),
      (e: Error) => live && setLab((l) => ({ info: l.info, error: e.message })),
    );
    return () => {
      live = false;
    };
  }, [bridge, netKey]);
  const onLabInfo = useCallback((info: LabLinkInfo) => setLab({ info }), []);
  const network = useCallback(
    () => (
      <NetworkPane
        bridge={bridge}
        kind={currentKind}
        running={runner.running}
        info={lab.info}
        loadError={lab.error}
        onInfo={onLabInfo}
      />
    ),
    [bridge, currentKind, runner.running, lab, onLabInfo],
  );
  // The panes belong to the step whose program ran last: on another step its results are marked
  // as from before, and the editor (now showing another program) points at none of its lines.
  const ranStep = useRef<string | null>(null);
  if (runner.running) ranStep.current = stepKey;
  const stale = ranStep.current !== null && ranStep.current !== stepKey && state.events.length > 0;
  // The step's goals, shown where they are about (the diagram, the Memory tab), judged by its last run.
  // With a break-it in the editor its own checks are the goals, as the lesson pane lists them.
  const goals = useMemo(() => {
    const active = breakIt ? step?.breakIt?.find((b) => b.id === breakIt) : undefined;
    return goalTargets(active?.checks ?? step?.checks ?? [], verdict);
  }, [step, breakIt, verdict]);
  const pausedSource = state.gate?.pending?.source;
  const onPausedLine = useCallback(() => pausedSource && onSource(pausedSource), [pausedSource, onSource]);
  // Each line's outcome, worded in the learner's language (the view holds it as data).
  const shownResults = useMemo(
    () => view.lineResults.map((r) => ({ ...r, text: t.lineOutcome(r.outcome) })),
    [view.lineResults, t],
  );
  const errorAt = useMemo(
    () =>
      runner.error?.line !== undefined && runner.error.column !== undefined
        ? {
            line: runner.error.line,
            column: runner.error.column,
            // A verb's refusal or an argument error in the learner's language, from its data (verbs/verb-failure.ts).
            message: runner.error.why
              ? [runner.error.verb, runner.error.code ?? runner.error.name, t.verbWhy(runner.error.why)]
                  .filter(Boolean)
                  .join(": ")
              : runner.error.message,
          }
        : undefined,
    [runner.error, t],
  );
  return (
    <div
      className="app"
      data-seq={lastSeq}
      data-snapshot-seq={state.snapshot?.seq ?? 0}
      data-gate-seq={state.gate?.pending?.seq ?? 0}
      data-gate-line={pausedSource?.line ?? 0}
      data-paused={String(runner.paused)}
      data-running={String(runner.running)}
      data-runs={runner.finished}
      data-stale={String(stale)}
    >
      <TopBar
        lessons={course.lessons}
        lessonId={course.lessonId}
        lang={lang}
        onLesson={course.setLessonId}
        backend={state.backend}
        backendKind={state.header?.backend}
        connected={state.connected}
        backends={backends}
        onBackend={onBackend}
        busy={runner.running}
        wire={lab.info?.link?.wire}
      />
      <main
        className="main"
        style={{ gridTemplateColumns: `${panes.sizes.lesson}px 8px minmax(0, 1fr) 8px ${panes.sizes.inspector}px` }}
      >
        <section className="panel" aria-label="lesson">
          <div className="panel-body">
            <LessonPane
              lesson={course.lesson}
              flow={course.flow}
              lang={lang}
              verdict={verdict}
              onLang={setLang}
              onStep={onStep}
              onHint={onHint}
              onSolution={onSolution}
              onNext={onNext}
              nextLesson={course.nextLesson?.title[lang]}
              onNextLesson={onNextLesson}
              breakIt={breakIt}
              onBreakIt={onBreakIt}
            />
          </div>
        </section>
        <ResizeHandle pane="lesson" sizes={panes.sizes} onResize={panes.resize} />
        <div className="column">
          <section className="panel grow" aria-label="editor" style={{ flex: 3 }}>
            <Toolbar
              ready={compile !== null}
              running={runner.running}
              paused={runner.paused}
              pausedBefore={view.pausedBefore?.detail}
              pausedLine={pausedSource?.line}
              onPausedLine={onPausedLine}
              typeErrors={runner.typeErrors}
              onSource={onSource}
              onRun={run}
              onStep={stepOnce}
              onContinue={cont}
              onStop={stop}
              onReset={onReset}
            />
            {editorMayOpen ? (
              <Suspense fallback={<EditorLoading code={code} />}>
                <EditorPane
                  code={code}
                  onChange={setCode}
                  onReady={onReady}
                  onDrawn={onDrawn}
                  onShortcut={shortcut}
                  pausedAt={pausedSource}
                  lineResults={stale ? NO_RESULTS : shownResults}
                  errorAt={stale ? undefined : errorAt}
                  reveal={stale ? undefined : reveal}
                />
              </Suspense>
            ) : (
              <EditorLoading code={code} />
            )}
            {stale && (
              <div className="notice" data-testid="stale-results">
                {t.staleResults}
              </div>
            )}
            <ErrorBanner error={stale ? undefined : runner.error} failed={view.lastError} />
            {state.progress && (
              <div className="panel-body">
                <Progress
                  label={state.progress.label}
                  fraction={state.progress.total ? state.progress.done / state.progress.total : undefined}
                />
              </div>
            )}
          </section>
          <Tabs
            className="grow"
            tabs={[
              {
                id: "transcript",
                label: t.transcript(view.transcript.length),
                render: () => (
                  <TranscriptPane
                    rows={view.transcript}
                    onExport={onExport}
                    onImport={onImport}
                    onSource={stale ? undefined : onSource}
                  />
                ),
              },
              {
                id: "log",
                label: t.log(view.logs.length),
                render: () => <LogPane lines={view.logs} onSource={stale ? undefined : onSource} />,
              },
              { id: "cm", label: t.tabCm(cmIdCount(view.cm)), render: () => <CmPane ids={view.cm} /> },
            ]}
          />
        </div>
        <ResizeHandle pane="inspector" sizes={panes.sizes} onResize={panes.resize} />
        <Inspector view={view} focus={focus} network={network} goals={goals} />
      </main>
      <Notices notices={state.notices} onDismiss={onDismiss} />
    </div>
  );
}
