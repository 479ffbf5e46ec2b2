/**
 * What the backend process does with each bridge request: it owns the verbs backend, the
 * current session (one transcript file per session, appended as it goes), the step gate,
 * lessons and transcripts. Requests arrive validated by the host; results and events go
 * back as plain values (the process entry wire-encodes them).
 */
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { errnos, errorFromData, errorToData, VerbsError } from "../../verbs/errors.js";
import { SET_LINK_VERB, type LinkFaults } from "../../verbs/lab.js";
import type { VerbsBackend } from "../../verbs/backend.js";
import { loadCourse, type Course } from "../../lessons/load.js";
import { openLearnerProfile } from "../../lessons/progress-file.js";
import { evaluateChecks } from "../../lessons/checks.js";
import { recordFromTranscript } from "../../lessons/record.js";
import {
  appendFileSink,
  createSession,
  EXPORT_FORMATS,
  exportTranscript,
  importTranscript,
  replayTranscript,
  type Session,
  type Transcript,
} from "../session/index.js";
import {
  type BackendKind,
  type BridgeEvents,
  type EventName,
  type GateState,
  type LabLinkInfo,
  type LessonSummary,
  type RequestMethod,
  type RequestParams,
  type RequestResults,
  type SessionInfo,
} from "../bridge/contract.js";
import { transcriptPcap } from "../session/export/pcap-replay.js";
import { createSnapshotDeltas, type SnapshotDeltas } from "../bridge/snapshot-deltas.js";
import { defaultKind, listBackends, nativeOrReason, type BackendProvider } from "./backends.js";
import type { BackendInit } from "./protocol.js";
import { because, type BackendExit } from "../../verbs/verb-failure.js";

/** The error a run ends with when the backend process died during it (the transcript's last line). */
const died = (exit: BackendExit) => because({ kind: "backend-died", exit, during: "run" });

export interface ServiceDeps {
  provider: BackendProvider;
  emit<E extends EventName>(event: E, payload: BridgeEvents[E]): void;
  /** Tells the supervisor which transcript to re-open if this process dies. */
  sessionChanged(info: { transcriptPath: string; backend: BackendKind; seed?: number }): void;
}

type Handlers = { [M in RequestMethod]: (params: RequestParams<M>) => Promise<RequestResults[M]> | RequestResults[M] };

/** An error with a name the renderer can tell apart (kept by errorToData). */
function named(name: string, message: string): Error {
  const e = new Error(message);
  e.name = name;
  return e;
}

export function createBackendService(init: BackendInit, deps: ServiceDeps) {
  const transcriptsDir = join(init.dataDir, "transcripts");
  mkdirSync(transcriptsDir, { recursive: true });
  const profile = openLearnerProfile(init.dataDir, init.profile);

  let kind: BackendKind = "sim";
  let seed: number | undefined = init.seed;
  let backend: VerbsBackend | null = null;
  let session: Session | null = null;
  let sessionInfo: SessionInfo | null = null;
  /** A transcript shown but not being written: the one re-opened after a crash, or the last stopped one. */
  let reopened: Transcript | null = null;
  let imported: Transcript | null = null;
  let run: {
    id: string;
    finish: (error?: unknown) => void;
    outcome: Promise<{ outcome: "ok" | "error" | "stopped" }>;
  } | null = null;
  let runCount = 0;
  let sessionCount = 0;
  let unsubscribe: (() => void)[] = [];
  let course: Course | null = null;
  /** The Network panel's faults (lab.set), merged: every new session begins with them, recorded. */
  let labFaults: LinkFaults | null = null;
  /** Events of the current session made before any program: its lab link. A run still takes that session. */
  let setupEvents = 0;

  async function makeBackend(k: BackendKind): Promise<VerbsBackend> {
    if (k === "sim") return deps.provider.sim(seed);
    const native = await nativeOrReason(deps.provider);
    if ("reason" in native)
      throw named("BackendUnavailableError", `The native backend is not available: ${native.reason}`);
    return native.backend;
  }

  function gateState(): GateState {
    if (!session) return { mode: "idle", pending: null, stopped: false };
    return { mode: run ? session.gate.mode : "idle", pending: session.gate.pending, stopped: session.gate.stopped };
  }

  /** What the "snapshot" events have told the renderer this session (null before the first session). */
  let snapshots: SnapshotDeltas | null = null;
  /** Seq of the last transcript event (tracked: `session.events()` copies the whole transcript). */
  let lastSeq = 0;

  function endSession(): void {
    if (run) {
      session?.gate.stop();
      run.finish(named("SessionStoppedError", "the session was stopped"));
    }
    for (const off of unsubscribe) off();
    unsubscribe = [];
    // Still shown (and exportable) until the next session begins.
    if (session) reopened = session.transcript();
    session?.release();
    session = null;
  }

  function newTranscriptPath(k: BackendKind): string {
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    return join(transcriptsDir, `${stamp}-${k}-${process.pid}-${++sessionCount}.jsonl`);
  }

  /** Makes `s` the current session: its events, gate and snapshots go to the renderer. */
  function adopt(s: Session, b: VerbsBackend, k: BackendKind, transcriptPath: string): SessionInfo {
    kind = k;
    backend = b;
    reopened = null;
    session = s;
    setupEvents = 0;
    lastSeq = s.eventCount();
    // Packets already logged (a replay's) belong to the events so far.
    snapshots = createSnapshotDeltas(
      {
        backend: k,
        now: () => b.now(),
        qps: () => s.qps(),
        mrBytes: (max) => s.mrBytes(max),
        counters: () => s.counters(),
        packetLog: b.packetLog,
      },
      lastSeq,
    );
    unsubscribe.push(
      s.subscribe((event) => {
        lastSeq = event.seq;
        deps.emit("transcript", event);
        if (event.kind === "verb" && session === s)
          deps.emit("snapshot", snapshots!.after(event.seq, !!event.counters?.length));
      }),
      s.gate.subscribe(() => deps.emit("gate", gateState())),
    );
    sessionInfo = {
      sessionId: `${process.pid}-${sessionCount}`,
      backend: k,
      devices: b.getDeviceList(),
      ...(seed !== undefined && { seed }),
      transcriptPath,
    };
    deps.sessionChanged({ transcriptPath, backend: k, ...(seed !== undefined && { seed }) });
    deps.emit("session", { ...sessionInfo, header: s.header, resumed: false });
    return sessionInfo;
  }

  /** A new session and transcript file on `k` (the previous one is ended, its file kept). */
  async function startSession(k: BackendKind, program?: string): Promise<SessionInfo> {
    // The backend first: when native is unavailable the current session carries on untouched.
    const b = await makeBackend(k);
    endSession();
    const transcriptPath = newTranscriptPath(k);
    const s = createSession({
      backend: b,
      sink: appendFileSink(transcriptPath),
      ...(seed !== undefined && { seed }),
      ...(program !== undefined && { program }),
    });
    const info = adopt(s, b, k, transcriptPath);
    await applyLabFaults(s);
    return info;
  }

  /** A new session starts on the panel's link: its first event sets it, so exports and replays keep it. */
  async function applyLabFaults(s: Session): Promise<void> {
    if (!labFaults) return;
    try {
      await s.call(0, "setLink", [labFaults]);
    } catch (e) {
      labFaults = null;
      deps.emit("log", {
        level: "warn",
        text: `The Network panel's faults could not be set on the new session, and are cleared: ${(e as Error).message}`,
      });
    }
    setupEvents = s.eventCount();
  }

  function labInfo(): LabLinkInfo {
    return { backend: kind, link: backend?.lab ? backend.lab.getLink() : null, faults: labFaults };
  }

  /**
   * Sets or clears the link from the Network panel. In a session no program has used yet the
   * call is recorded there (the run that follows takes that session); after a run it acts on
   * that run's backend unrecorded (its transcript has ended) and the next run's session begins
   * with it, recorded. Either way a refusal (EINVAL, EPERM) reaches the panel.
   */
  async function changeLink(faults: LinkFaults | null): Promise<LabLinkInfo> {
    if (run) throw named("RunInProgressError", "a program is running: change the link once it has ended, or stop it");
    if (!session && !reopened) await startSession(kind);
    const s = session;
    // Only a run appends events beyond the setup (and its "end"): equal counts mean no program used it.
    const fresh = s !== null && !s.gate.stopped && s.eventCount() === setupEvents;
    try {
      if (fresh) await s.call(0, faults ? "setLink" : "clearLink", faults ? [faults] : []);
      else if (!backend?.lab)
        throw new VerbsError(SET_LINK_VERB, errnos.EOPNOTSUPP, because({ kind: "link-unsupported" }));
      else if (faults) backend.lab.setLink(faults);
      else backend.lab.clearLink();
    } finally {
      if (fresh) setupEvents = s.eventCount();
    }
    labFaults = faults && {
      ...labFaults,
      ...faults,
      ...((labFaults?.mtu || faults.mtu) && { mtu: { ...labFaults?.mtu, ...faults.mtu } }),
    };
    return labInfo();
  }

  /** After a crash: read the dead process's transcript, never rewriting what it wrote. */
  function reopen(resume: NonNullable<BackendInit["resume"]>): void {
    kind = resume.backend;
    seed = resume.seed;
    let text: string;
    try {
      text = readFileSync(resume.transcriptPath, "utf8");
    } catch {
      return; // nothing was written yet
    }
    // A line torn by the kill is left in the file as it is; only whole lines are shown.
    const whole = text.endsWith("\n") ? text : text.slice(0, text.lastIndexOf("\n") + 1);
    let t: Transcript;
    try {
      t = importTranscript(whole);
    } catch {
      return;
    }
    const last = t.events.at(-1);
    if (text === whole && last?.kind !== "end") {
      // The run did not end: say how it ended, as one more line (what was written stays byte for byte).
      const end = {
        kind: "end" as const,
        seq: t.events.length + 1,
        clock: last?.clock ?? 0,
        outcome: "error" as const,
        error: resume.exit
          ? { name: "BackendDiedError", message: died(resume.exit).reason!, ...died(resume.exit) }
          : {
              name: "BackendDiedError",
              message: `the backend process died (${resume.reason}) during this run; VerbsLab restarted it, and the objects this run created are gone`,
            },
      };
      appendFileSync(resume.transcriptPath, JSON.stringify(end) + "\n");
      t.events.push(end);
    }
    reopened = t;
    sessionInfo = {
      sessionId: `${process.pid}-reopened`,
      backend: resume.backend,
      devices: [],
      ...(resume.seed !== undefined && { seed: resume.seed }),
      transcriptPath: resume.transcriptPath,
    };
    deps.sessionChanged({
      transcriptPath: resume.transcriptPath,
      backend: resume.backend,
      ...(seed !== undefined && { seed }),
    });
  }

  function currentTranscript(): Transcript | null {
    return session ? session.transcript() : reopened;
  }

  function lessons(): Course {
    course ??= loadCourse();
    return course;
  }

  const handlers: Partial<Handlers> = {
    "backend.list": async () => ({ current: backend ? kind : null, backends: await listBackends(deps.provider) }),
    "backend.choose": async ({ kind: k, seed: s }) => {
      if (s !== undefined) seed = s;
      // The link belongs to the backend: the new one starts clean, and the old one is left clean.
      if (labFaults && k !== kind) {
        labFaults = null;
        try {
          backend?.lab?.clearLink();
        } catch {
          // Refused (native off the lab): nothing of it was changed.
        }
      }
      return startSession(k);
    },
    "session.start": async ({ backend: k, seed: s, program }) => {
      if (s !== undefined) seed = s;
      return startSession(k ?? kind, program);
    },
    "session.stop": () => {
      const had = session !== null;
      endSession();
      deps.emit("gate", gateState());
      return { stopped: had };
    },
    "session.reset": () => startSession(kind),
    "run.start": async ({ stepping, program }) => {
      if (run) throw named("RunInProgressError", "a program is already running: stop it first");
      // A session records one program: a second run gets a fresh session and transcript.
      if (!session || session.eventCount() > setupEvents || session.gate.stopped) await startSession(kind, program);
      const s = session!;
      if (stepping) s.gate.pause();
      else s.gate.continue();
      let finish!: (error?: unknown) => void;
      const program$ = new Promise<void>((resolve, reject) => {
        finish = (error) => (error === undefined ? resolve() : reject(error));
      });
      const id = `run-${++runCount}`;
      const outcome = s
        .run(() => program$)
        .then((r) => {
          if (run?.id === id) run = null;
          deps.emit("gate", gateState());
          return { outcome: r.outcome };
        });
      run = { id, finish, outcome };
      deps.emit("gate", gateState());
      return { runId: id };
    },
    "run.end": async ({ runId, ok, error }) => {
      if (!run || run.id !== runId) throw named("NoSuchRunError", `run ${runId} is not running`);
      const r = run;
      r.finish(ok ? undefined : errorFromData(errorToData(error)));
      return r.outcome;
    },
    "verbs.call": async ({ handle, method, args, source }) => {
      if (!session) await startSession(kind);
      return { value: await session!.call(handle, method, args, source) };
    },
    "gate.step": () => (session?.gate.step(), gateState()),
    "gate.continue": () => (session?.gate.continue(), gateState()),
    "gate.runTo": ({ method }) => (session?.gate.runTo(method), gateState()),
    "gate.pause": () => (session?.gate.pause(), gateState()),
    "gate.stop": () => (session?.gate.stop(), gateState()),
    "gate.state": () => gateState(),
    "state.snapshot": () => (session && snapshots ? snapshots.full(lastSeq) : null),
    "lessons.list": () => {
      const c = lessons();
      const summaries: LessonSummary[] = c.lessons.map((l) => ({
        id: l.id,
        folder: l.folder,
        order: l.order,
        title: l.title,
        level: l.level,
        prerequisites: l.prerequisites,
        steps: l.steps.length,
      }));
      return { lessons: summaries, problems: c.problems };
    },
    "lessons.load": ({ id }) => {
      const lesson = lessons().lessons.find((l) => l.id === id);
      if (!lesson) throw named("NoSuchLessonError", `there is no lesson "${id}"`);
      return { lesson };
    },
    "lessons.progress.get": () => {
      const snapshots: Record<string, unknown> = {};
      for (const l of lessons().lessons) {
        const snap = profile.progress.load(profile.name, l.id);
        if (snap !== undefined) snapshots[l.id] = snap;
      }
      const { lessonId, code } = profile.workspace();
      return { snapshots, lessonId: lessons().lessons.some((l) => l.id === lessonId) ? lessonId : null, code };
    },
    "lessons.progress.save": ({ lessonId, snapshot: snap }) => {
      if (!lessons().lessons.some((l) => l.id === lessonId))
        throw named("NoSuchLessonError", `there is no lesson "${lessonId}"`);
      if (typeof snap !== "object" || snap === null) throw new TypeError("snapshot must be an object");
      profile.progress.save(profile.name, lessonId, snap as Parameters<typeof profile.progress.save>[2]);
      return { saved: true as const };
    },
    "lessons.place.save": ({ lessonId }) => {
      if (!lessons().lessons.some((l) => l.id === lessonId))
        throw named("NoSuchLessonError", `there is no lesson "${lessonId}"`);
      profile.setLesson(lessonId);
      return { saved: true as const };
    },
    "lessons.code.save": ({ key, code }) => {
      profile.setCode(key, code);
      return { saved: true as const };
    },
    "transcript.get": ({ sinceSeq }) => {
      const t = currentTranscript();
      if (!t) return { header: null, events: [] };
      return { header: t.header, events: sinceSeq === undefined ? t.events : t.events.filter((e) => e.seq > sinceSeq) };
    },
    "transcript.import": ({ content }) => {
      imported = importTranscript(content);
      return { header: imported.header, events: imported.events };
    },
    "transcript.export": async ({ format }) => {
      const t = currentTranscript();
      if (!t) throw named("NoTranscriptError", "nothing has been recorded yet");
      const base = `verbslab-${t.header.program ? t.header.program.replace(/[^\w.-]+/g, "-") + "-" : ""}${t.header.created.replace(/[:.]/g, "-")}`;
      if (format === "pcap") {
        // Replayed on a fresh simulator (the transcript's seed), whichever backend recorded it.
        const { bytes } = await transcriptPcap(t, deps.provider.sim(t.header.seed ?? seed));
        const content = Buffer.from(bytes).toString("base64");
        return { filename: `${base}.pcap`, mime: "application/vnd.tcpdump.pcap", content, encoding: "base64" as const };
      }
      const f = EXPORT_FORMATS[format];
      const filename = base + f.extension;
      return { filename, mime: f.mime, content: exportTranscript(t, format, { fileName: filename }) };
    },
    "transcript.replay": async ({ stepping }) => {
      if (!imported) throw named("NoTranscriptError", "import a transcript first");
      if (run) throw named("RunInProgressError", "a program is running: stop it first");
      const source = imported;
      const k = source.header.backend === "native" ? "native" : "sim";
      if (source.header.seed !== undefined) seed = source.header.seed;
      const b = await makeBackend(k);
      endSession();
      const transcriptPath = newTranscriptPath(k);
      const id = `replay-${Date.now()}`;
      const result = await replayTranscript(source, b, {
        sink: appendFileSink(transcriptPath),
        ...(stepping !== undefined && { step: stepping }),
        onProgress: (done, total) =>
          deps.emit("progress", { id, label: "Replaying the transcript", done, total, finished: done === total }),
      });
      adopt(result.session, b, k, transcriptPath);
      return { events: result.replayed, divergences: result.divergences };
    },
    "lab.get": () => labInfo(),
    "lab.set": ({ faults }) => changeLink(faults),
    "lab.clear": () => changeLink(null),
    "lessons.check": ({ lessonId, step, breakIt }) => {
      const lesson = lessons().lessons.find((l) => l.id === lessonId);
      if (!lesson) throw named("NoSuchLessonError", `there is no lesson "${lessonId}"`);
      const s = lesson.steps.find((x) => x.number === step);
      if (!s) throw named("NoSuchLessonError", `lesson "${lessonId}" has no step ${step}`);
      const checks = breakIt === undefined ? s.checks : s.breakIt?.find((b) => b.id === breakIt)?.checks;
      if (!checks) throw named("NoSuchLessonError", `step ${step} of "${lessonId}" has no break-it "${breakIt}"`);
      const t = currentTranscript();
      if (!t || !t.events.some((e) => e.kind === "end"))
        throw named("NoRunError", "run the program first: checks judge a finished run");
      return evaluateChecks(checks, recordFromTranscript(t.events));
    },
  };

  return {
    async start(): Promise<{ kind: BackendKind; transcriptPath?: string }> {
      if (init.resume) {
        reopen(init.resume);
        backend = await makeBackend(kind).catch(() => {
          // Native went away with the process (e.g. the device was removed): carry on on the simulator.
          kind = "sim";
          return deps.provider.sim(seed);
        });
        if (sessionInfo) {
          sessionInfo.devices = backend.getDeviceList();
          if (reopened) deps.emit("session", { ...sessionInfo, header: reopened.header, resumed: true });
        }
        return { kind, ...(sessionInfo?.transcriptPath && { transcriptPath: sessionInfo.transcriptPath }) };
      }
      kind = init.backend ?? (await defaultKind(deps.provider));
      const info = await startSession(kind);
      return { kind, ...(info.transcriptPath && { transcriptPath: info.transcriptPath }) };
    },
    async handle(method: string, params: unknown): Promise<unknown> {
      const h = handlers[method as RequestMethod] as ((p: unknown) => unknown) | undefined;
      if (!h) throw named("UnknownRequestError", `the backend does not handle "${method}"`);
      return h(params);
    },
  };
}

export type BackendService = ReturnType<typeof createBackendService>;
