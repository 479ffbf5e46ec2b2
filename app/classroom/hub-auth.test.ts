/** The parts of Hub authentication that need no Hub: reading its variables, matching scopes. */
import { describe, expect, it } from "vitest";
import { scopeGrants } from "./hub-auth.js";
import { readHubEnv } from "./hub-env.js";
import { main } from "../cli/main.js";

const spawned = {
  JUPYTERHUB_API_TOKEN: "t0ken",
  JUPYTERHUB_API_URL: "http://127.0.0.1:8081/hub/api/",
  JUPYTERHUB_CLIENT_ID: "jupyterhub-user-alice",
  JUPYTERHUB_SERVICE_PREFIX: "/user/alice/",
  JUPYTERHUB_SERVICE_URL: "http://127.0.0.1:41234/user/alice/",
  JUPYTERHUB_OAUTH_CALLBACK_URL: "/user/alice/oauth_callback",
  JUPYTERHUB_OAUTH_ACCESS_SCOPES: '["access:servers!server=alice/", "access:servers!user=alice"]',
  JUPYTERHUB_USER: "alice",
  JUPYTERHUB_ACTIVITY_URL: "http://127.0.0.1:8081/hub/api/users/alice/activity",
};

describe("the Hub's variables", () => {
  it("reads what a spawner sets", () => {
    const env = readHubEnv(spawned);
    expect(env.apiUrl).toBe("http://127.0.0.1:8081/hub/api");
    expect(env.prefix).toBe("/user/alice/");
    expect(env.serviceUrl?.port).toBe("41234");
    expect(env.callbackPath).toBe("/user/alice/oauth_callback");
    expect(env.accessScopes).toEqual(["access:servers!server=alice/", "access:servers!user=alice"]);
    expect(env.user).toBe("alice");
  });

  it("names every missing variable, and a malformed one", () => {
    expect(() => readHubEnv({})).toThrow(
      /JUPYTERHUB_API_TOKEN, JUPYTERHUB_API_URL, JUPYTERHUB_CLIENT_ID, JUPYTERHUB_SERVICE_PREFIX are not set/,
    );
    expect(() => readHubEnv({ ...spawned, JUPYTERHUB_OAUTH_ACCESS_SCOPES: "access:servers" })).toThrow(
      /JUPYTERHUB_OAUTH_ACCESS_SCOPES is not a JSON list/,
    );
    expect(() => readHubEnv({ ...spawned, JUPYTERHUB_SERVICE_URL: "not a url" })).toThrow(/JUPYTERHUB_SERVICE_URL/);
  });
});

describe("scopes", () => {
  const owner = "access:servers!server=alice/";
  it("the owner's, the user-wide and the unfiltered scope grant a server; another user's does not", () => {
    expect(scopeGrants(["access:servers!server=alice/"], owner)).toBe(true);
    expect(scopeGrants(["access:servers!user=alice"], owner)).toBe(true);
    expect(scopeGrants(["access:servers"], owner)).toBe(true);
    expect(scopeGrants(["access:servers!server=bob/", "access:servers!user=bob"], owner)).toBe(false);
    expect(scopeGrants(["access:servers!user=alice2"], owner)).toBe(false);
    expect(scopeGrants(["access:services", "read:users"], owner)).toBe(false);
    expect(scopeGrants([], owner)).toBe(false);
  });
  it("services: access:services or the service's own filter", () => {
    const svc = "access:services!service=instructor";
    expect(scopeGrants(["access:services"], svc)).toBe(true);
    expect(scopeGrants(["access:services!service=instructor"], svc)).toBe(true);
    expect(scopeGrants(["access:services!service=other"], svc)).toBe(false);
  });
});

describe("verbslab serve --jupyterhub", () => {
  it("started outside a Hub, says which variables are missing and exits 1", async () => {
    const saved = Object.entries(process.env).filter(([k]) => k.startsWith("JUPYTERHUB_"));
    for (const [k] of saved) delete process.env[k];
    try {
      let err = "";
      const code = await main(["serve", "--jupyterhub"], { out: () => {}, err: (s) => void (err += s), lines: null });
      expect(code).toBe(1);
      expect(err).toContain("JUPYTERHUB_API_TOKEN");
      expect(err).toContain("not started by JupyterHub");
    } finally {
      for (const [k, v] of saved) process.env[k] = v;
    }
  });
  it("refuses --port under the Hub (the Hub chooses it)", async () => {
    let err = "";
    const code = await main(["serve", "--jupyterhub", "--port", "8888"], {
      out: () => {},
      err: (s) => void (err += s),
      lines: null,
    });
    expect(code).toBe(2);
    expect(err).toContain("--port is the Hub's to choose");
  });
});
