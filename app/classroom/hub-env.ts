/**
 * What JupyterHub tells a server it spawns (a learner's single-user server) or runs (a
 * service): the environment variables of jupyterhub/spawner.py `get_env` and of its managed
 * services. One reader for both, so a missing variable is named the same way everywhere.
 */

/** The Hub's variables, parsed. */
export interface HubEnv {
  /** This server's own API token: its OAuth client secret, and how it calls the Hub's API. */
  apiToken: string;
  /** The Hub's REST API, as this server reaches it (`http://127.0.0.1:8081/hub/api`). */
  apiUrl: string;
  /** This server's OAuth client id (`jupyterhub-user-alice`, `service-instructor`); also its cookie's name. */
  clientId: string;
  /** The path everything is served under, with both slashes (`/user/alice/`, `/services/instructor/`). */
  prefix: string;
  /** Where to listen (`http://127.0.0.1:43121/user/alice/`): host and port. Unset for an external service. */
  serviceUrl: URL | null;
  /** The OAuth redirect_uri, exactly as the Hub registered it (`/user/alice/oauth_callback`). */
  callbackUrl: string;
  /** Its path, which this server answers. */
  callbackPath: string;
  /** The Hub's public origin for browser redirects (`JUPYTERHUB_HOST`, often "": same origin, via the proxy). */
  hubHost: string;
  /** The Hub's base path (`/` or `/jhub/`): its pages are under `<base>hub/`. */
  baseUrl: string;
  /** The scopes that let a token in (`access:servers!server=alice/`, `access:services!service=instructor`). */
  accessScopes: string[];
  /** The owning user (single-user servers only). */
  user: string | null;
  /** The named server ("" for the default one). */
  serverName: string;
  /** Where to report activity (single-user servers only). */
  activityUrl: string | null;
}

/** Reads the Hub's variables from `env`; throws one error naming every required one that is missing. */
export function readHubEnv(env: NodeJS.ProcessEnv = process.env): HubEnv {
  const required = [
    "JUPYTERHUB_API_TOKEN",
    "JUPYTERHUB_API_URL",
    "JUPYTERHUB_CLIENT_ID",
    "JUPYTERHUB_SERVICE_PREFIX",
  ] as const;
  const missing = required.filter((k) => !env[k]);
  if (missing.length > 0)
    throw new Error(
      `not started by JupyterHub: ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not set ` +
        `(the Hub sets them for the servers it spawns and the services it runs)`,
    );
  let prefix = env.JUPYTERHUB_SERVICE_PREFIX!;
  if (!prefix.startsWith("/")) prefix = "/" + prefix;
  if (!prefix.endsWith("/")) prefix += "/";
  let serviceUrl: URL | null = null;
  const rawUrl = env.JUPYTERHUB_SERVICE_URL;
  if (rawUrl) {
    try {
      serviceUrl = new URL(rawUrl);
    } catch {
      throw new Error(`JUPYTERHUB_SERVICE_URL is not a URL: ${JSON.stringify(rawUrl)}`);
    }
  }
  let accessScopes: string[] = [];
  const rawScopes = env.JUPYTERHUB_OAUTH_ACCESS_SCOPES ?? env.JUPYTERHUB_OAUTH_SCOPES;
  if (rawScopes) {
    try {
      const parsed = JSON.parse(rawScopes) as unknown;
      if (!Array.isArray(parsed) || !parsed.every((s) => typeof s === "string")) throw new Error("not a list");
      accessScopes = parsed;
    } catch {
      throw new Error(`JUPYTERHUB_OAUTH_ACCESS_SCOPES is not a JSON list of scopes: ${JSON.stringify(rawScopes)}`);
    }
  }
  const user = env.JUPYTERHUB_USER || null;
  const serverName = env.JUPYTERHUB_SERVER_NAME ?? "";
  // JupyterHub < 2 sent no access scopes: the owner's own server is the least it means.
  if (accessScopes.length === 0 && user) accessScopes = [`access:servers!server=${user}/${serverName}`];
  if (accessScopes.length === 0)
    throw new Error("JUPYTERHUB_OAUTH_ACCESS_SCOPES is not set: which tokens may enter is unknown");
  const callbackUrl = env.JUPYTERHUB_OAUTH_CALLBACK_URL || prefix + "oauth_callback";
  let baseUrl = env.JUPYTERHUB_BASE_URL || "/";
  if (!baseUrl.endsWith("/")) baseUrl += "/";
  return {
    apiToken: env.JUPYTERHUB_API_TOKEN!,
    apiUrl: env.JUPYTERHUB_API_URL!.replace(/\/+$/, ""),
    clientId: env.JUPYTERHUB_CLIENT_ID!,
    prefix,
    serviceUrl,
    callbackUrl,
    callbackPath: new URL(callbackUrl, "http://hub.invalid").pathname,
    hubHost: env.JUPYTERHUB_HOST ?? "",
    baseUrl,
    accessScopes,
    user,
    serverName,
    activityUrl: env.JUPYTERHUB_ACTIVITY_URL || null,
  };
}
