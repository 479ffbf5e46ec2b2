/** Finding a built renderer file for a URL path, for both hosts (web server and Electron's app protocol). */
import { statSync } from "node:fs";
import { extname, join, normalize, sep } from "node:path";

export const MIME: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".wasm": "application/wasm",
  ".txt": "text/plain; charset=utf-8",
};

export type StaticFile =
  { ok: true; file: string; size: number; contentType: string } | { ok: false; status: 400 | 403 | 404 };

/** The file under `root` that `pathname` names ("/" is index.html); never anything outside `root`. */
export function resolveStatic(root: string, pathname: string): StaticFile {
  let path: string;
  try {
    path = decodeURIComponent(pathname);
  } catch {
    return { ok: false, status: 400 };
  }
  if (path.includes("\0")) return { ok: false, status: 400 };
  if (path.endsWith("/")) path += "index.html";
  const file = normalize(join(root, path));
  if (!file.startsWith(root + sep)) return { ok: false, status: 403 };
  try {
    const st = statSync(file);
    if (!st.isFile()) return { ok: false, status: 404 };
    return {
      ok: true,
      file,
      size: st.size,
      contentType: MIME[extname(file).toLowerCase()] ?? "application/octet-stream",
    };
  } catch {
    return { ok: false, status: 404 };
  }
}
