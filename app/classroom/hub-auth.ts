/**
 * Authentication through JupyterHub, for a learner's server and for the instructor service:
 * the Hub's OAuth flow for browsers (redirect to the Hub, code back to our callback, code
 * exchanged for a token kept in an HttpOnly cookie scoped to our prefix) and `Authorization:
 * token …` for programs. Every token is checked with the Hub (`GET /api/user`), and lets its
 * holder in only when its scopes include one of our access scopes: the owner
 * (`access:servers!server=alice/`), or an admin the Hub gave `access:servers`. The same steps
 * as jupyterhub/services/auth.py HubOAuth, which Python servers use.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { HubEnv } from "./hub-env.js";

/** Who the Hub says a token belongs to (the fields of its user model that we read). */
export interface HubUser {
  kind: "user" | "service";
  name: string;
  admin?: boolean;
  groups?: string[];
  /** The token's scopes, expanded by the Hub (`access:servers!server=alice/`, `read:users:name!user=alice`). */
  scopes: string[];
}

/** The value of cookie `name` in a request, or null. */
export function readCookie(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) {
      try {
        return decodeURIComponent(v.join("="));
      } catch {
        return null;
      }
    }
  }
  return null;
}

/**
 * Whether `have` (a token's expanded scopes) grants `required` (`base!kind=value`): the
 * unfiltered scope does, so does the same filter, and `!user=alice` covers `!server=alice/…`.
 * Group filters are not resolved (the Hub's own check_scopes does not either).
 */
export function scopeGrants(have: readonly string[], required: string): boolean {
  const [base, filter] = required.split("!", 2) as [string, string | undefined];
  for (const scope of have) {
    const [hbase, hfilter] = scope.split("!", 2) as [string, string | undefined];
    if (hbase !== base) continue;
    if (hfilter === undefined || hfilter === filter) return true;
    if (filter?.startsWith("server=") && hfilter.startsWith("user=")) {
      const owner = filter.slice("server=".length).split("/")[0];
      if (hfilter === `user=${owner}`) return true;
    }
  }
  return false;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The outcome of checking a request. */
export type Identity =
  | { ok: true; user: HubUser; token: string }
  /** No token at all (401; a browser is sent to log in) or one the Hub does not know (401). */
  | { ok: false; status: 401; reason: string; user?: undefined }
  /** A real user, but not one this server lets in (403). */
  | { ok: false; status: 403; reason: string; user: HubUser };

export interface HubAuthOptions {
  /** How long a token's answer from the Hub is reused, ms (default 60 s; the Hub's own default is 5 min). */
  cacheMs?: number;
}

/** One server's (or service's) view of the Hub: token checks, the OAuth login, and calls to the Hub's API. */
export class HubAuth {
  readonly env: HubEnv;
  private readonly cacheMs: number;
  private readonly cache = new Map<string, { at: number; user: HubUser | null }>();

  constructor(env: HubEnv, options: HubAuthOptions = {}) {
    this.env = env;
    this.cacheMs = options.cacheMs ?? 60_000;
  }

  get cookieName(): string {
    return this.env.clientId;
  }

  private get stateCookieName(): string {
    return `${this.env.clientId}-oauth-state`;
  }

  /** A call to the Hub's REST API with this server's own token. */
  async hubApi(method: string, path: string, body?: unknown, token = this.env.apiToken): Promise<Response> {
    return fetch(this.env.apiUrl + path, {
      method,
      headers: {
        Authorization: `token ${token}`,
        ...(body !== undefined && { "Content-Type": "application/json" }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  }

  /** Who the Hub says holds `token`, or null when it does not know the token (expired, revoked, made up). */
  async userForToken(token: string): Promise<HubUser | null> {
    const key = createHash("sha256").update(token).digest("hex");
    const cached = this.cache.get(key);
    if (cached && Date.now() - cached.at < this.cacheMs) return cached.user;
    const res = await this.hubApi("GET", "/user", undefined, token);
    let user: HubUser | null = null;
    if (res.ok) user = (await res.json()) as HubUser;
    else if (res.status !== 401 && res.status !== 403 && res.status !== 404)
      throw new Error(`the Hub answered ${res.status} to a token check (${this.env.apiUrl}/user)`);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(key, { at: Date.now(), user });
    return user;
  }

  /** Whether the Hub's scopes for `user`'s token let it into this server. */
  grants(user: HubUser): boolean {
    return this.env.accessScopes.some((s) => scopeGrants(user.scopes ?? [], s));
  }

  /** The token a request carries: `Authorization: token|bearer …`, else our cookie. */
  tokenOf(req: IncomingMessage): string | null {
    const m = /^(?:token|bearer)\s+(\S+)$/i.exec(req.headers.authorization ?? "");
    if (m) return m[1]!;
    return readCookie(req, this.cookieName);
  }

  /** Checks a request (or WebSocket upgrade) with the Hub. */
  async identify(req: IncomingMessage): Promise<Identity> {
    const token = this.tokenOf(req);
    if (!token) return { ok: false, status: 401, reason: "not logged in through JupyterHub" };
    const user = await this.userForToken(token);
    if (!user) return { ok: false, status: 401, reason: "the Hub does not know this token (expired or revoked)" };
    if (!this.grants(user))
      return { ok: false, status: 403, reason: `${user.kind} ${user.name} has no access to this server`, user };
    return { ok: true, user, token };
  }

  private cookie(req: IncomingMessage, name: string, value: string, maxAge?: number): string {
    const secure = req.headers["x-forwarded-proto"] === "https" ? "; Secure" : "";
    const age = maxAge !== undefined ? `; Max-Age=${maxAge}` : "";
    return `${name}=${encodeURIComponent(value)}; HttpOnly; SameSite=Lax; Path=${this.env.prefix}${age}${secure}`;
  }

  /** Sends a browser to the Hub to log in (and back to `nextPath` afterwards). */
  startLogin(req: IncomingMessage, res: ServerResponse, nextPath: string): void {
    const state = randomBytes(16).toString("hex");
    const next = nextPath.startsWith(this.env.prefix) ? nextPath : this.env.prefix;
    const authorize = new URL(`${this.env.hubHost}${this.env.baseUrl}hub/api/oauth2/authorize`, "http://hub.invalid");
    authorize.searchParams.set("client_id", this.env.clientId);
    authorize.searchParams.set("redirect_uri", this.env.callbackUrl);
    authorize.searchParams.set("response_type", "code");
    authorize.searchParams.set("state", state);
    const location = this.env.hubHost ? authorize.href : authorize.pathname + authorize.search;
    res.writeHead(302, {
      Location: location,
      "Set-Cookie": this.cookie(req, this.stateCookieName, `${state}.${Buffer.from(next).toString("base64url")}`, 600),
      "Cache-Control": "no-store",
    });
    res.end();
  }

  /**
   * Our OAuth callback: the state must be the one our cookie holds (no login forced on the
   * browser by another page), then the code is exchanged for the user's token, kept in a cookie.
   */
  async finishLogin(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const fail = (status: number, text: string) => {
      res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
      res.end(text + "\n");
    };
    const code = url.searchParams.get("code");
    const state = url.searchParams.get("state");
    const [savedState, savedNext] = (readCookie(req, this.stateCookieName) ?? "").split(".", 2);
    if (!code || !state) return fail(400, "Bad request: the OAuth callback needs code and state.");
    if (!savedState || !sameSecret(state, savedState))
      return fail(403, "Forbidden: this login was not started here (OAuth state does not match).");
    const answer = await fetch(`${this.env.apiUrl}/oauth2/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        client_id: this.env.clientId,
        client_secret: this.env.apiToken,
        grant_type: "authorization_code",
        code,
        redirect_uri: this.env.callbackUrl,
      }),
    });
    if (!answer.ok) return fail(403, `Forbidden: the Hub refused the OAuth code (${answer.status}).`);
    const { access_token: token } = (await answer.json()) as { access_token?: string };
    if (!token) return fail(502, "Bad gateway: the Hub sent no access token.");
    const next = Buffer.from(savedNext ?? "", "base64url").toString();
    res.writeHead(302, {
      Location: next.startsWith(this.env.prefix) ? next : this.env.prefix,
      "Set-Cookie": [this.cookie(req, this.cookieName, token), this.cookie(req, this.stateCookieName, "", 0)],
      "Cache-Control": "no-store",
    });
    res.end();
  }
}
