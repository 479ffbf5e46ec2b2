/** Finding a built renderer file for a URL path, for both hosts (web server and Electron's app protocol). */
import { statSync, type Stats } from "node:fs";
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
  | {
      ok: true;
      file: string;
      size: number;
      contentType: string;
      /** The file is the build's precompressed sibling (`.br`, `.gz`) of what was asked for. */
      encoding?: "br" | "gzip";
      /** A content-hashed build asset (`/assets/…`): its bytes never change under that name. */
      immutable: boolean;
    }
  | { ok: false; status: 400 | 403 | 404 };

const statOrNull = (f: string): Stats | null => {
  try {
    return statSync(f);
  } catch {
    return null;
  }
};

/** Whether an Accept-Encoding header accepts `coding` (a q=0 refuses it). */
function accepts(acceptEncoding: string, coding: string): boolean {
  return acceptEncoding.split(",").some((part) => {
    const [name, ...params] = part.trim().split(";");
    return name.trim().toLowerCase() === coding && !params.some((x) => /^\s*q=0(\.0*)?\s*$/.test(x));
  });
}

/**
 * The file under `root` that `pathname` names ("/" is index.html); never anything outside `root`.
 * With `acceptEncoding`, the precompressed sibling the build wrote (`.br`, then `.gz`) when the
 * client takes it.
 */
export function resolveStatic(root: string, pathname: string, acceptEncoding?: string): StaticFile {
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
    const contentType = MIME[extname(file).toLowerCase()] ?? "application/octet-stream";
    const immutable = file.startsWith(join(root, "assets") + sep);
    for (const [coding, ext] of [
      ["br", ".br"],
      ["gzip", ".gz"],
    ] as const) {
      if (!acceptEncoding || !accepts(acceptEncoding, coding)) continue;
      const packed = statOrNull(file + ext);
      if (packed?.isFile())
        return { ok: true, file: file + ext, size: packed.size, contentType, encoding: coding, immutable };
    }
    return { ok: true, file, size: st.size, contentType, immutable };
  } catch {
    return { ok: false, status: 404 };
  }
}
