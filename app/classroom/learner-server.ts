/**
 * `verbslab serve --jupyterhub`: web mode as a JupyterHub single-user server. Everything
 * comes from the variables the Hub's spawner sets (app/classroom/hub-env.ts): the prefix to
 * serve under, the address to listen on, the token and scopes that decide who gets in. The
 * learner's data folder is in their own home (the spawner sets HOME; VERBSLAB_DATA_DIR
 * overrides), so each learner has their own backend process, progress, code and transcripts.
 * With VERBSLAB_INSTRUCTOR_URL set, checked runs are reported to the instructor service.
 */
import { startWebMode, type WebMode } from "../server/cli.js";
import { startActivityReporter, type ActivityReporter } from "./activity.js";
import { HubAuth } from "./hub-auth.js";
import { readHubEnv } from "./hub-env.js";
import { reportProgress } from "./progress-reporter.js";

export interface HubLearnerOptions {
  backend?: "sim" | "native" | null;
  seed?: number;
  dataDir?: string;
  staticDir?: string;
  env?: NodeJS.ProcessEnv;
}

export interface HubLearner {
  web: WebMode;
  auth: HubAuth;
  activity: ActivityReporter;
  close(): Promise<void>;
}

/** Starts the learner's server as the Hub asked; throws naming what is missing when not started by a Hub. */
export async function startHubLearner(options: HubLearnerOptions = {}): Promise<HubLearner> {
  const env = options.env ?? process.env;
  const hubEnv = readHubEnv(env);
  if (!hubEnv.serviceUrl) throw new Error("JUPYTERHUB_SERVICE_URL is not set: the Hub says where to listen with it");
  if (!hubEnv.user) throw new Error("JUPYTERHUB_USER is not set: a single-user server needs to know its owner");
  const auth = new HubAuth(hubEnv);
  const seconds = Number(env.JUPYTERHUB_ACTIVITY_INTERVAL ?? 300);
  if (!(seconds > 0))
    throw new Error(
      `JUPYTERHUB_ACTIVITY_INTERVAL must be a positive number of seconds, not ${env.JUPYTERHUB_ACTIVITY_INTERVAL}`,
    );
  const activity = startActivityReporter(auth, seconds * 1000);
  const instructor = env.VERBSLAB_INSTRUCTOR_URL;
  const eventsUrl = instructor
    ? new URL("api/events", instructor.endsWith("/") ? instructor : instructor + "/").href
    : null;
  const web = await startWebMode({
    ...(options.backend !== undefined && { backend: options.backend }),
    ...(options.seed !== undefined && { seed: options.seed }),
    ...(options.dataDir !== undefined && { dataDir: options.dataDir }),
    ...(options.staticDir !== undefined && { staticDir: options.staticDir }),
    port: Number(hubEnv.serviceUrl.port || 80),
    hub: { auth, listenHost: hubEnv.serviceUrl.hostname, onActivity: activity.touch },
    ...(eventsUrl && { wrapCore: (core) => reportProgress(core, { eventsUrl, token: hubEnv.apiToken }) }),
  });
  activity.touch();
  void activity.flush();
  return {
    web,
    auth,
    activity,
    async close() {
      activity.stop();
      await web.close();
    },
  };
}
