// The console's Content-Security-Policy, one definition for every server of it (Vite's dev and preview
// servers, serve.js; docker/console-entrypoint.sh writes the same policy for nginx). The admin's JWT is
// in sessionStorage, so no script may run but the console's own files: no inline script, no eval. The
// page talks to the API (VITE_API_URL) and, on the test-call page, to LiveKit (the `livekit_url` the
// backend answers: LIVEKIT_PUBLIC_URL, else LIVEKIT_URL), over WebSocket and, to tell why a connection
// failed, over HTTP(S) at the same address. Media may come from `blob:` URLs: a call's recording, fetched
// with the token (an <audio> element cannot send one) and played from memory.

/** `scheme://host[:port]` of a URL, or null when it is none. */
function origin(url) {
  try {
    const u = new URL(url);
    return u.host ? `${u.protocol}//${u.host}` : null;
  } catch {
    return null;
  }
}

/**
 * The policy, as the header's value.
 * @param {{ apiUrl?: string, livekitUrl?: string }} urls
 * @returns {string}
 */
export function consoleCsp({ apiUrl, livekitUrl } = {}) {
  const connect = new Set(["'self'"]);
  const api = apiUrl ? origin(apiUrl) : null;
  if (api) connect.add(api);
  const lk = livekitUrl ? origin(livekitUrl) : null;
  if (lk) {
    // ws ↔ http and wss ↔ https: livekit-client signals over the one and checks over the other.
    const secure = /^(wss|https):/.test(lk);
    const hostPart = lk.replace(/^[a-z]+:/, '');
    connect.add(`${secure ? 'wss' : 'ws'}:${hostPart}`);
    connect.add(`${secure ? 'https' : 'http'}:${hostPart}`);
  }
  return [
    "default-src 'self'",
    "script-src 'self'",
    // Styles may be inline (Lit templates set style attributes; Vite's dev server injects <style>): they cannot run code.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    // The call page plays a recording it fetched with the admin token, as an object URL (src/core/download.ts).
    "media-src 'self' blob:",
    `connect-src ${[...connect].join(' ')}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}
