/**
 * The instructor service's process, as JupyterHub runs it (`c.JupyterHub.services` in
 * jupyterhub_config.py): the Hub's variables say where to listen and who may enter;
 * VERBSLAB_INSTRUCTOR_DB is the store (a SQLite file, or a postgresql:// URL; default
 * ./instructor.sqlite). Stops on SIGINT or SIGTERM.
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { HubAuth } from "./hub-auth.js";
import { readHubEnv } from "./hub-env.js";
import { startInstructorService } from "./instructor.js";
import { isPostgresUrl, openStore } from "./store.js";

async function main(): Promise<void> {
  const env = readHubEnv();
  if (!env.serviceUrl)
    throw new Error("JUPYTERHUB_SERVICE_URL is not set: give the service a url in jupyterhub_config.py");
  const location = process.env.VERBSLAB_INSTRUCTOR_DB || resolve("instructor.sqlite");
  const store = await openStore(location);
  const service = await startInstructorService({
    auth: new HubAuth(env),
    store,
    host: env.serviceUrl.hostname,
    port: Number(env.serviceUrl.port || 80),
  });
  console.log(
    `VerbsLab instructor service on ${env.serviceUrl.origin}${env.prefix} (${store.kind} store${isPostgresUrl(location) ? "" : `: ${location}`})`,
  );
  const stop = () => {
    void service
      .close()
      .then(() => store.close())
      .then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: Error) => {
    console.error(`verbslab instructor: ${err.message}`);
    process.exit(1);
  });
}
