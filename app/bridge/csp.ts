/**
 * The Content-Security-Policy both hosts send with the renderer (Electron main on every
 * response of its protocol, the web server on every HTTP response). One place, so the app
 * and web mode cannot differ.
 *
 * What the renderer may do under it: load its own scripts, styles, fonts and workers
 * (Monaco's included) from its own origin; start module workers from `blob:` URLs (learner
 * code runs in one); talk to its own origin (and, in web mode, its own WebSocket). No eval,
 * no remote anything, no plugins, no framing, no form posts.
 */
export function contentSecurityPolicy(opts: { connect?: string[] } = {}): string {
  const connect = ["'self'", ...(opts.connect ?? [])];
  return [
    "default-src 'none'",
    "script-src 'self' blob:",
    "worker-src 'self' blob:",
    // Monaco sets inline style attributes on its DOM; styles cannot run code.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src ${connect.join(" ")}`,
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "frame-src 'none'",
  ].join("; ");
}
